package middleware

import (
	"errors"
	"fmt"
	"time"
)

// The decisions a middleware returns instead of running the rest of the pipeline. They are
// the job's outcomes of PHP's middleware calling $job->release(), ->delete() or ->fail(),
// or returning without calling $next. This file is the one place that defines them: once
// the worker's outcome errors live in a package this one may import, these types give
// way to those (ReleaseError to the worker's release, FailError to its fail, DeleteError
// to its delete, SkipError to a completed job that records who skipped it).

// ReleaseError: the middleware released the job ($job->release($delay)). The attempt
// stays counted and no tries or maxExceptions check runs now, as with a release from a
// handler; the chain waits.
type ReleaseError struct {
	Delay time.Duration // until the job is available again; Redis keeps whole seconds
	By    string        // the middleware, by its Laravel class name ("WithoutOverlapping")
}

func (e *ReleaseError) Error() string {
	return fmt.Sprintf("%s released the job for %s", e.By, e.Delay)
}

// FailError: the middleware failed the job ($job->fail($e)). Err is what the failed
// store records; no more tries.
type FailError struct {
	Err error
	By  string
}

func (e *FailError) Error() string { return fmt.Sprintf("%s failed the job: %v", e.By, e.Err) }

// Unwrap returns the cause.
func (e *FailError) Unwrap() error { return e.Err }

// DeleteError: the middleware deleted the job ($job->delete()). CallQueuedHandler then
// treats it as done: the next job of a chain is dispatched, a batch counts a success.
type DeleteError struct{ By string }

func (e *DeleteError) Error() string { return e.By + " deleted the job" }

// SkipError: the middleware returned without calling the rest of the pipeline (Skip,
// SkipIfBatchCancelled, WithoutOverlapping or RateLimited that do not release). PHP's
// CallQueuedHandler then completes the job as if its handler had run: deleted, the next
// job of a chain dispatched, a batch success recorded, a unique lock released. The worker
// settles a SkipError exactly like a handler that returned nil.
type SkipError struct{ By string }

func (e *SkipError) Error() string { return e.By + " skipped the job" }

// isDecision says err carries a decision rather than an exception: PHP's middleware see
// $job->release(), ->delete() and ->fail() return normally from $next, so
// ThrottlesExceptions counts none of them (it clears its counter instead) and
// FailOnException does not look at them.
func isDecision(err error) bool {
	var (
		r *ReleaseError
		f *FailError
		d *DeleteError
		s *SkipError
	)
	return errors.As(err, &r) || errors.As(err, &f) || errors.As(err, &d) || errors.As(err, &s) ||
		errors.As(err, new(Decision))
}

// Decision is implemented by the outcome errors of the code around the pipeline (a
// handler's own release, delete or fail), so that the middleware see them as PHP's do:
// outcomes, not exceptions.
type Decision interface {
	error
	// JobDecision is a marker.
	JobDecision()
}

func release(by string, seconds int64) error {
	return &ReleaseError{Delay: time.Duration(max(seconds, 0)) * time.Second, By: by}
}
