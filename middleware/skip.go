package middleware

import (
	"context"
	"fmt"
	"time"

	"github.com/laraq/laraq/internal/job"
)

// SkipMiddleware is Laravel's Skip (11.23+): when its condition held at construction,
// the job is completed without running.
type SkipMiddleware struct{ skip bool }

// SkipWhen is Skip::when($condition).
func SkipWhen(condition bool) *SkipMiddleware { return &SkipMiddleware{skip: condition} }

// SkipUnless is Skip::unless($condition).
func SkipUnless(condition bool) *SkipMiddleware { return &SkipMiddleware{skip: !condition} }

// Name is the Laravel class name, for events and logs.
func (m *SkipMiddleware) Name() string { return "Skip" }

// Handle is Skip::handle.
func (m *SkipMiddleware) Handle(ctx context.Context, _ *job.JobInfo, next job.Next) error {
	if m.skip {
		return skipped(m.Name())
	}
	return next(ctx)
}

// SkipIfBatchCancelledMiddleware is Laravel's SkipIfBatchCancelled (9.49+): a job of a
// cancelled batch is completed without running.
type SkipIfBatchCancelledMiddleware struct{}

// SkipIfBatchCancelled is `new SkipIfBatchCancelled`.
func SkipIfBatchCancelled() *SkipIfBatchCancelledMiddleware { return &SkipIfBatchCancelledMiddleware{} }

// Name is the Laravel class name, for events and logs.
func (m *SkipIfBatchCancelledMiddleware) Name() string { return "SkipIfBatchCancelled" }

// Handle is SkipIfBatchCancelled::handle: it asks the job's batch ($job->batch(), the
// worker's batch repository), when the command is Batchable and has one.
func (m *SkipIfBatchCancelledMiddleware) Handle(ctx context.Context, info *job.JobInfo, next job.Next) error {
	b, err := info.Batch(ctx)
	if err != nil {
		return fmt.Errorf("SkipIfBatchCancelled: %w", err)
	}
	if b != nil && b.Cancelled() {
		return skipped(m.Name())
	}
	return next(ctx)
}

// ReleaseMiddleware is Laravel's Release middleware (13.18.1+; named so in Go to leave
// "Release" to the worker's own release): when its condition held at construction, the
// job is released for releaseAfter seconds without running.
type ReleaseMiddleware struct {
	release      bool
	releaseAfter int64
}

// ReleaseWhen is Release::when($condition, $releaseAfter).
func ReleaseWhen(condition bool, releaseAfter time.Duration) *ReleaseMiddleware {
	return &ReleaseMiddleware{release: condition, releaseAfter: seconds(releaseAfter)}
}

// ReleaseUnless is Release::unless($condition, $releaseAfter).
func ReleaseUnless(condition bool, releaseAfter time.Duration) *ReleaseMiddleware {
	return &ReleaseMiddleware{release: !condition, releaseAfter: seconds(releaseAfter)}
}

// Name is the Laravel class name, for events and logs.
func (m *ReleaseMiddleware) Name() string { return "Release" }

// Handle is Release::handle.
func (m *ReleaseMiddleware) Handle(ctx context.Context, _ *job.JobInfo, next job.Next) error {
	if m.release {
		return released(m.Name(), m.releaseAfter)
	}
	return next(ctx)
}

// FailOnExceptionMiddleware is Laravel's FailOnException (12.19+): an error of the rest
// that it accepts fails the job at once instead of leaving it to the worker's retries.
type FailOnExceptionMiddleware struct{ accept func(error) bool }

// FailOnException is `new FailOnException($callback)`; PHP's list of exception classes
// becomes a predicate over Go errors (errors.Is / errors.As).
func FailOnException(accept func(error) bool) *FailOnExceptionMiddleware {
	return &FailOnExceptionMiddleware{accept: accept}
}

// Name is the Laravel class name, for events and logs.
func (m *FailOnExceptionMiddleware) Name() string { return "FailOnException" }

// Handle is FailOnException::handle: the job is failed with the error, which the worker
// still sees as the attempt's exception, as PHP rethrows it after $job->fail().
func (m *FailOnExceptionMiddleware) Handle(ctx context.Context, _ *job.JobInfo, next job.Next) error {
	err := next(ctx)
	if err != nil && !isDecision(err) && m.accept != nil && m.accept(err) {
		return &job.MiddlewareDecision{By: m.Name(), Err: job.Fail(err), Rethrown: true}
	}
	return err
}
