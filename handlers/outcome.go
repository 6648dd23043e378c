package handlers

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/laraq/laraq/failed"
)

// Outcome is what a worker does with a job after its handler returned.
type Outcome int

const (
	// OutcomeDone: the handler returned nil. The worker deletes the reserved copy (ZREM
	// of the exact reserved bytes), as CallQueuedHandler does after a successful handle(),
	// so nothing of the job (nor its attempts count) remains; the failed store is
	// untouched. When the command carries a chain (Bus::chain), the next job is
	// dispatched first, as Laravel does.
	OutcomeDone Outcome = iota
	// OutcomeRetry: the handler returned an ordinary error (or panicked). Laravel's
	// rules apply, as in Worker::handleJobException: if the attempt was the last one
	// (attempts ≥ tries, or retryUntil has passed) or the job's maxExceptions is
	// reached, the job is failed: removed from the reserved set and written to the
	// failed store with the error. Otherwise it is released to the delayed set with the
	// backoff for this attempt; the released copy keeps the attempt counted.
	OutcomeRetry
	// OutcomeRelease: the handler returned Release(d) ($this->release(d)). The reserved
	// copy moves to the delayed set, available after d; the attempt stays counted
	// (attempts is not decremented). Nothing is written to the failed store and the
	// tries/maxExceptions checks are not run: the next attempt's "already exceeded"
	// check decides, as in PHP. A chain waits for the attempt that succeeds.
	OutcomeRelease
	// OutcomeFail: the handler returned Fail(err) ($this->fail($e)), or its command
	// could not be decoded (*DecodeError). The job is removed from the reserved set
	// and written to the failed store with err and the payload as popped; no more tries.
	OutcomeFail
	// OutcomeDelete: the handler returned Delete() ($this->delete()). The reserved
	// copy is removed; nothing is released or written to the failed store. A chain
	// still continues: CallQueuedHandler skips it only for released or failed jobs.
	OutcomeDelete
)

func (o Outcome) String() string {
	switch o {
	case OutcomeDone:
		return "done"
	case OutcomeRetry:
		return "retry"
	case OutcomeRelease:
		return "release"
	case OutcomeFail:
		return "fail"
	case OutcomeDelete:
		return "delete"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// ReleaseError asks the worker to release the job back to its queue after Delay, like
// $this->release($delay) in a PHP job. See OutcomeRelease.
type ReleaseError struct {
	Delay time.Duration
}

func (e *ReleaseError) Error() string { return fmt.Sprintf("release the job after %s", e.Delay) }

// Release returns the error that releases the job after delay. Redis keeps
// availability in whole Unix seconds, so delay is rounded up to a whole second; a
// negative delay counts as 0 (available at once).
func Release(delay time.Duration) error {
	if delay < 0 {
		delay = 0
	}
	return &ReleaseError{Delay: delay}
}

// FailError asks the worker to fail the job now, without further tries, like
// $this->fail($e). Err is what the failed store records. See OutcomeFail.
type FailError struct {
	Err error
}

func (e *FailError) Error() string {
	if e.Err == nil {
		return "job failed manually"
	}
	return e.Err.Error()
}

// Unwrap returns the cause.
func (e *FailError) Unwrap() error { return e.Err }

// PHPClass names the failure in failed-job records: the cause's class, or Laravel's
// ManuallyFailedException for Fail(nil).
func (e *FailError) PHPClass() string {
	if e.Err == nil {
		return failed.ManuallyFailedClass
	}
	return failed.ClassOf(e.Err)
}

// Fail returns the error that fails the job now with err as the reason. Fail(nil)
// records Laravel's ManuallyFailedException, as $this->fail() without an argument.
func Fail(err error) error { return &FailError{Err: err} }

// errDelete is the Delete sentinel.
var errDelete = errors.New("delete the job")

// Delete returns the error that deletes the job without running it further, like
// $this->delete(). See OutcomeDelete.
func Delete() error { return errDelete }

// OutcomeOf classifies a handler's return value. When several outcomes are wrapped in
// one error, failing wins over deleting, deleting over releasing.
func OutcomeOf(err error) (Outcome, time.Duration) {
	if err == nil {
		return OutcomeDone, 0
	}
	var fe *FailError
	var de *DecodeError
	if errors.As(err, &fe) || errors.As(err, &de) {
		return OutcomeFail, 0
	}
	if errors.Is(err, errDelete) {
		return OutcomeDelete, 0
	}
	var re *ReleaseError
	if errors.As(err, &re) {
		return OutcomeRelease, re.Delay
	}
	return OutcomeRetry, 0
}

// PanicError is a panic recovered from a handler by Call. It is an ordinary error for
// OutcomeOf (the job is retried by Laravel's rules); its Exception holds the location
// of the panic and the goroutine's stack, printed in PHP's Throwable form.
type PanicError struct {
	Value     any               // what was passed to panic
	Exception *failed.Exception // class Laraq\Panic, located where the panic happened
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the exception with the stack.
func (e *PanicError) Unwrap() error { return e.Exception }

// PHPClass names the failure in failed-job records.
func (e *PanicError) PHPClass() string { return failed.PanicClass }

// Call runs h for job and turns a panic into a *PanicError.
func Call(ctx context.Context, h Handler, job *Job) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Exception: failed.FromPanic(v)}
		}
	}()
	return h.Handle(ctx, job)
}

// UnhandledError is the failure of a job whose class has no handler in the registry.
type UnhandledError struct {
	Class string
}

func (e *UnhandledError) Error() string {
	return "no handler is registered for " + e.Class + " in this Go worker"
}

// PHPClass names the failure in failed-job records.
func (e *UnhandledError) PHPClass() string { return `Laraq\UnhandledJob` }
