package job

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/phpser"
)

// Outcome is what a worker does with a job after its handler returned.
type Outcome int

const (
	// OutcomeDone: the handler returned nil. The worker deletes the reserved copy (ZREM
	// of the exact reserved bytes), as CallQueuedHandler does after handle() returned,
	// after dispatching the next job of the command's chain; nothing of the job remains
	// and the failed store is untouched.
	OutcomeDone Outcome = iota
	// OutcomeRetry: the handler returned an ordinary error (or panicked). Laravel's rules
	// apply, as in Worker::handleJobException: when the attempt was the last one
	// (attempts ≥ tries, or retryUntil has passed) or the job's maxExceptions is reached,
	// the job is failed (removed from the reserved set, written to the failed store with
	// the error); otherwise it is released to the delayed set with the backoff for this
	// attempt, the attempt staying counted.
	OutcomeRetry
	// OutcomeRelease: the handler returned ReleaseAfter(d) ($this->release($d)). The
	// reserved copy moves to the delayed set, ready after d, the attempt counted; no
	// tries or maxExceptions check runs now (the next attempt's "already exceeded" check
	// decides, as in PHP) and a chain waits for the attempt that succeeds.
	OutcomeRelease
	// OutcomeFail: the handler returned Fail(err) ($this->fail($e)), or the command
	// could not be decoded (*DecodeError). The job leaves the reserved set and is written
	// to the failed store with err and the payload as popped; no more tries.
	OutcomeFail
	// OutcomeDelete: the handler returned Delete() ($this->delete()). The reserved
	// copy is removed; nothing is released or recorded. A chain still continues:
	// CallQueuedHandler skips it only for released or failed jobs.
	OutcomeDelete
	// OutcomeMissingModel: the handler returned a *ModelNotFound (see MissingModel): a model
	// of the command is gone, as when PHP's SerializesModels cannot restore it. The job is
	// deleted when the application's release says deleteWhenMissingModels (13.0+: the
	// payload's flag; before, the class's default), else failed at once with Eloquent's
	// ModelNotFoundException. No retry, and the chain does not continue.
	OutcomeMissingModel
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
	case OutcomeMissingModel:
		return "missing_model"
	}
	return fmt.Sprintf("Outcome(%d)", int(o))
}

// ReleaseError, returned by a handler, releases its job back to the queue after Delay,
// like $this->release($delay). See OutcomeRelease.
type ReleaseError struct {
	Delay time.Duration
}

func (e *ReleaseError) Error() string { return fmt.Sprintf("release the job after %s", e.Delay) }

// ReleaseAfter returns the error that, returned by a handler, releases its job to be tried
// again after delay, like $this->release($delay) in a PHP job. Redis keeps availability in
// whole Unix seconds, so delay is rounded up to a second; a negative delay counts as 0.
func ReleaseAfter(delay time.Duration) error {
	return &ReleaseError{Delay: max(delay, 0)}
}

// FailError, returned by a handler, fails its job now without further tries, like
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
// ManuallyFailedException for a failure without cause.
func (e *FailError) PHPClass() string {
	if e.Err == nil {
		return failed.ManuallyFailedClass
	}
	return failed.ClassOf(e.Err)
}

// Fail returns the error that, returned by a handler, fails its job now with err as the
// reason, like $this->fail($e); Fail(nil) records Laravel's ManuallyFailedException, as
// $this->fail() without an argument.
func Fail(err error) error { return &FailError{Err: err} }

// errDelete is the Delete sentinel.
var errDelete = errors.New("delete the job")

// Delete returns the error that, returned by a handler, deletes its job without further
// ado, like $this->delete(). See OutcomeDelete.
func Delete() error { return errDelete }

// MiddlewareDecision is a middleware's decision instead of the rest of the pipeline,
// with the middleware that took it: Err is ReleaseAfter(d), Delete() or Fail(e) — what
// $job->release(), ->delete() and ->fail() do in a PHP middleware —, or nil for a job
// the middleware completed without running it (Skip, dontRelease(): CallQueuedHandler
// completes a job whose middleware returned without calling $next, as if its handler
// had returned). OutcomeOf classifies it by Err; errors.As finds who decided, for
// events, logs and metrics.
type MiddlewareDecision struct {
	// By names the middleware: Laravel's class name for Laravel's ("WithoutOverlapping",
	// "RateLimited" ...), the Name() of a middleware that has one, else its Go type.
	By string
	// Err is the decision; nil: skipped.
	Err error
	// Rethrown says the middleware decided and then let the exception of the rest go
	// on, as FailOnException fails the job and rethrows: the attempt ends with an
	// exception (no JobProcessed), the job already failed.
	Rethrown bool
}

func (d *MiddlewareDecision) Error() string {
	switch {
	case d.Err == nil:
		return d.By + " skipped the job"
	case errors.Is(d.Err, errDelete):
		return d.By + " deleted the job"
	}
	var re *ReleaseError
	if errors.As(d.Err, &re) {
		return fmt.Sprintf("%s released the job for %s", d.By, re.Delay)
	}
	return d.By + " failed the job: " + d.Err.Error()
}

// Unwrap returns the decision.
func (d *MiddlewareDecision) Unwrap() error { return d.Err }

// Skipped reports whether err is a middleware's skip (a *MiddlewareDecision without Err)
// and nothing else: the attempt is done. A skip joined with another error (a lock that
// could not be released) is that error's outcome.
func Skipped(err error) (*MiddlewareDecision, bool) {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if d, ok := e.(*MiddlewareDecision); ok {
			return d, d.Err == nil
		}
	}
	return nil, false
}

// IsDecision reports whether err is an outcome decided by the code it comes from rather
// than an exception: done, released, deleted, failed, a missing model. PHP's middleware
// see $job->release(), ->delete() and ->fail() return normally from $next, so
// ThrottlesExceptions counts none of them and FailOnException does not look at them.
func IsDecision(err error) bool {
	o, _ := OutcomeOf(err)
	return o != OutcomeRetry
}

// OutcomeOf classifies a handler's return value. When one error wraps several
// decisions, failing wins over deleting, deleting over a missing model, that over
// releasing. A middleware's skip (see MiddlewareDecision) is OutcomeDone.
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
	if errors.Is(err, ErrModelNotFound) {
		return OutcomeMissingModel, 0
	}
	var re *ReleaseError
	if errors.As(err, &re) {
		return OutcomeRelease, re.Delay
	}
	if _, skipped := Skipped(err); skipped {
		return OutcomeDone, 0
	}
	return OutcomeRetry, 0
}

// PanicError is a panic recovered from a handler. It is an ordinary error for OutcomeOf
// (the job is retried by Laravel's rules); its Exception holds where the panic happened
// and the goroutine's stack, in PHP's Throwable form.
type PanicError struct {
	Value     any               // what was passed to panic
	Exception *failed.Exception // class Laraq\Panic, located where the panic happened
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic: %v", e.Value) }

// Unwrap returns the exception with the stack.
func (e *PanicError) Unwrap() error { return e.Exception }

// PHPClass names the failure in failed-job records.
func (e *PanicError) PHPClass() string { return failed.PanicClass }

// Call runs h and turns a panic into a *PanicError.
func Call(ctx context.Context, h HandlerFunc, job *JobInfo) (err error) {
	defer func() {
		if v := recover(); v != nil {
			err = &PanicError{Value: v, Exception: failed.FromPanic(v)}
		}
	}()
	return h(ctx, job)
}

// UnhandledError is the failure of a job whose class has no handler.
type UnhandledError struct {
	Class string
}

func (e *UnhandledError) Error() string {
	return "no handler is registered for " + e.Class + " in this Go worker"
}

// PHPClass names the failure in failed-job records.
func (e *UnhandledError) PHPClass() string { return `Laraq\UnhandledJob` }

// ModelNotFoundClass is Eloquent's exception for a model that could not be loaded.
const ModelNotFoundClass = `Illuminate\Database\Eloquent\ModelNotFoundException`

// ModelNotFound is Eloquent's ModelNotFoundException: a handler returns it (or an error
// wrapping it) when a model of its command no longer exists. Its message is Laravel's,
// "No query results for model [App\Models\User]." or, with IDs, "... [App\Models\User] 1, 2".
type ModelNotFound struct {
	Model string // the model class, e.g. App\Models\User
	IDs   []any  // the keys looked for; SerializesModels' restore names none
}

// ErrModelNotFound matches every *ModelNotFound with errors.Is. Returned as is, it fails
// or deletes the job like a ModelNotFound naming no model.
var ErrModelNotFound error = &ModelNotFound{}

// MissingModel is the error a handler returns when the model m stands for no longer
// exists, as SerializesModels' restore throws it (firstOrFail: the class, no keys).
func MissingModel(m phpser.ModelIdentifier) *ModelNotFound { return &ModelNotFound{Model: m.Class} }

// Error is ModelNotFoundException::setModel's message.
func (e *ModelNotFound) Error() string {
	msg := "No query results for model [" + e.Model + "]"
	if len(e.IDs) == 0 {
		return msg + "."
	}
	ids := make([]string, len(e.IDs))
	for i, id := range e.IDs {
		ids[i] = phpKeyString(id)
	}
	return msg + " " + strings.Join(ids, ", ")
}

// Is makes errors.Is(err, ErrModelNotFound) true for any *ModelNotFound.
func (e *ModelNotFound) Is(target error) bool { return target == ErrModelNotFound }

// PHPClass names the exception in failed_jobs rows.
func (e *ModelNotFound) PHPClass() string { return ModelNotFoundClass }

// phpKeyString is PHP's string conversion of a model key, as implode() writes it.
func phpKeyString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "1"
		}
		return ""
	case float64:
		return php.FloatString(x)
	case float32:
		return php.FloatString(float64(x))
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// Next runs the rest of a job's pipeline: the middleware after the one that calls it,
// then the handler. Its error is theirs.
type Next func(ctx context.Context) error

// Middleware wraps one attempt of a job, as a Laravel job middleware wraps handle(): it
// calls next to go on, or returns without calling it (ReleaseAfter, Delete, Fail or nil:
// the job is released, deleted, failed or done as if the handler had returned that; a
// *MiddlewareDecision says which middleware decided).
type Middleware interface {
	Handle(ctx context.Context, job *JobInfo, next Next) error
}

// MiddlewareFunc is a plain function as a Middleware.
type MiddlewareFunc func(ctx context.Context, job *JobInfo, next Next) error

// Handle calls f.
func (f MiddlewareFunc) Handle(ctx context.Context, job *JobInfo, next Next) error {
	return f(ctx, job, next)
}
