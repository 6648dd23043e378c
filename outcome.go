package laraq

import (
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/worker"
	"github.com/laraq/laraq/phpser"
)

// Outcome is what a worker does with a job after its handler returned (OutcomeOf
// classifies a handler's return value).
type Outcome = job.Outcome

const (
	// OutcomeDone: the handler returned nil. The worker deletes the reserved copy (ZREM
	// of the exact reserved bytes), as CallQueuedHandler does after handle() returned,
	// after dispatching the next job of the command's chain; nothing of the job remains
	// and the failed store is untouched.
	OutcomeDone = job.OutcomeDone
	// OutcomeRetry: the handler returned an ordinary error (or panicked). Laravel's rules
	// apply, as in Worker::handleJobException: when the attempt was the last one
	// (attempts ≥ tries, or retryUntil has passed) or the job's maxExceptions is reached,
	// the job is failed (removed from the reserved set, written to the failed store with
	// the error); otherwise it is released to the delayed set with the backoff for this
	// attempt, the attempt staying counted.
	OutcomeRetry = job.OutcomeRetry
	// OutcomeRelease: the handler returned ReleaseAfter(d) ($this->release($d)). The
	// reserved copy moves to the delayed set, ready after d, the attempt counted; no
	// tries or maxExceptions check runs now (the next attempt's "already exceeded" check
	// decides, as in PHP) and a chain waits for the attempt that succeeds.
	OutcomeRelease = job.OutcomeRelease
	// OutcomeFail: the handler returned Fail(err) ($this->fail($e)), or the command
	// could not be decoded (*DecodeError). The job leaves the reserved set and is written
	// to the failed store with err and the payload as popped; no more tries.
	OutcomeFail = job.OutcomeFail
	// OutcomeDelete: the handler returned Delete() ($this->delete()). The reserved
	// copy is removed; nothing is released or recorded. A chain still continues:
	// CallQueuedHandler skips it only for released or failed jobs.
	OutcomeDelete = job.OutcomeDelete
	// OutcomeMissingModel: the handler returned a *ModelNotFound (see MissingModel): a model
	// of the command is gone, as when PHP's SerializesModels cannot restore it. The job is
	// deleted when the application's release says deleteWhenMissingModels (13.0+: the
	// payload's flag; before, the class's default), else failed at once with Eloquent's
	// ModelNotFoundException. No retry, and the chain does not continue.
	OutcomeMissingModel = job.OutcomeMissingModel
)

// OutcomeOf classifies a handler's return value. When one error wraps several
// decisions, failing wins over deleting, deleting over a missing model, that over
// releasing.
func OutcomeOf(err error) (Outcome, time.Duration) { return job.OutcomeOf(err) }

// ReleaseError, returned by a handler, releases its job back to the queue after Delay,
// like $this->release($delay). See OutcomeRelease.
type ReleaseError = job.ReleaseError

// ReleaseAfter returns the error that, returned by a handler, releases its job to be tried
// again after delay, like $this->release($delay) in a PHP job. Redis keeps availability in
// whole Unix seconds, so delay is rounded up to a second; a negative delay counts as 0.
func ReleaseAfter(delay time.Duration) error { return job.ReleaseAfter(delay) }

// FailError, returned by a handler, fails its job now without further tries, like
// $this->fail($e). Err is what the failed store records; PHPClass names the failure
// (Laravel's ManuallyFailedException for a failure without cause). See OutcomeFail.
type FailError = job.FailError

// Fail returns the error that, returned by a handler, fails its job now with err as the
// reason, like $this->fail($e); Fail(nil) records Laravel's ManuallyFailedException, as
// $this->fail() without an argument.
func Fail(err error) error { return job.Fail(err) }

// Delete returns the error that, returned by a handler, deletes its job without further
// ado, like $this->delete(). See OutcomeDelete.
func Delete() error { return job.Delete() }

// PanicError is a panic recovered from a handler. It is an ordinary error for OutcomeOf
// (the job is retried by Laravel's rules); its Exception holds where the panic happened
// and the goroutine's stack, in PHP's Throwable form.
type PanicError = job.PanicError

// UnhandledError is the failure of a job whose class has no handler.
type UnhandledError = job.UnhandledError

// ModelNotFoundClass is Eloquent's exception for a model that could not be loaded.
const ModelNotFoundClass = job.ModelNotFoundClass

// ModelNotFound is Eloquent's ModelNotFoundException: a handler returns it (or an error
// wrapping it) when a model of its command no longer exists. Its message is Laravel's,
// "No query results for model [App\Models\User]." or, with IDs, "... [App\Models\User] 1, 2".
// A worker then deletes or fails the job as the application's release decides (see
// OutcomeMissingModel).
type ModelNotFound = job.ModelNotFound

// ErrModelNotFound matches every *ModelNotFound with errors.Is. Returned as is, it fails
// or deletes the job like a ModelNotFound naming no model.
var ErrModelNotFound = job.ErrModelNotFound

// MissingModel is the error a handler returns when the model m stands for no longer
// exists, as SerializesModels' restore throws it (firstOrFail: the class, no keys).
func MissingModel(m phpser.ModelIdentifier) *ModelNotFound { return job.MissingModel(m) }

// ReflectionExceptionClass is PHP's exception for a class that cannot be reflected.
const ReflectionExceptionClass = worker.ReflectionExceptionClass

// TimeoutExceededClass is the exception Laravel 10.10+ fails timed-out jobs with (a
// subclass of MaxAttemptsExceededException); earlier releases use
// MaxAttemptsExceededException for timeouts too.
const TimeoutExceededClass = worker.TimeoutExceededClass

// Next runs the rest of a job's pipeline: the middleware after the one that calls it,
// then the handler. Its error is theirs.
type Next = job.Next

// Middleware wraps one attempt of a job, as a Laravel job middleware wraps handle(): it
// calls next to go on, or returns without calling it, and what it returns is the
// attempt's outcome as if the handler had returned it (ReleaseAfter, Delete, Fail, an
// error, nil). A release counts the attempt, as $job->release() in PHP's middleware
// does. A worker runs, outermost first, WorkerConfig.Middleware, the registration's
// (WithMiddleware), the class's (WorkerConfig.ClassMiddleware, then its Go type's
// Middleware() method), then those ->through() put in the payload; package middleware
// has Laravel's own.
type Middleware = job.Middleware

// MiddlewareDecision is a middleware's decision instead of the rest of the pipeline,
// with the middleware that took it (By): Err is ReleaseAfter(d), Delete() or Fail(e),
// or nil for a job it completed without running it (OutcomeDone: CallQueuedHandler
// completes a job whose middleware returned without calling $next). Rethrown says it
// failed the job and let the exception go on (FailOnException). The Laravel middleware
// of package middleware return theirs so; the worker wraps a bare ReleaseAfter, Delete
// or Fail an application's middleware returns (By: its Name() method, else its type),
// and Event.Middleware reports who decided.
type MiddlewareDecision = job.MiddlewareDecision

// MiddlewareFunc is a plain function as a Middleware:
//
//	laraq.MiddlewareFunc(func(ctx context.Context, job *laraq.JobInfo, next laraq.Next) error {
//		start := time.Now()
//		defer func() { log.Println(job.Name, time.Since(start)) }()
//		return next(ctx)
//	})
type MiddlewareFunc = job.MiddlewareFunc
