package laraq

import (
	"context"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/payload"
)

// Command is a Go type that stands for a PHP job class: its PHPClass method names the
// class (`App\Jobs\SendInvoice`) and its fields carry the class's properties with php
// tags (see package phpser). The same type is dispatched (Dispatcher.Dispatch) and
// handled (Handle). PHPClass is called on the zero value, so it must return a constant.
type Command = job.Command

// Jobs routes jobs to Go handlers by their PHP class, exact match only: data.commandName
// for object jobs, the whole job string ("App\Jobs\Report@build") for string jobs (see
// ClassOf). It is safe for concurrent use; register handlers at program start, before a
// worker runs. Registering a class twice, an empty class or a nil function is a
// programming error and panics, as http.ServeMux does.
//
// Its methods: HandleFunc (a handler of the raw JobInfo; options such as WithMiddleware
// follow the function, as for Handle), Alias (a renamed PHP class),
// Fallback (every job without a handler of its own, as `laraq work --forward` does),
// Handles, Classes, Len, and Run (a handler run as a worker runs it; package laraqtest
// uses it).
type Jobs = job.Jobs

// Job is one reserved job as its handler sees it: the command decoded into T, and the
// job's metadata (JobInfo: what Laravel's RedisJob offers a PHP job through $this->job).
type Job[T any] = job.Job[T]

// JobInfo is a reserved job's metadata and exact bytes, what Laravel's RedisJob offers:
// ID, UUID, Attempt (1-based, already counted by the pop), Queue, Connection, Name
// (displayName), Class (the routing class, see ClassOf), Payload (the parsed envelope),
// Raw (the payload as popped: what a failed_jobs row stores), Reserved (the
// cjson-re-encoded copy in :reserved) and BatchID. One JobInfo exists per attempt; it is
// used by one goroutine at a time.
//
// Its methods read the command: Value (the decoded data.command, decrypted when
// encrypted), Bind (into a Go value), Unserialized (with the class defaults PHP's
// unserialize() fills in), Context (Laravel's Context), Batch ($this->batch()),
// Decrypter and IsObjectJob.
type JobInfo = job.JobInfo

// DecodeError is a job whose payload or command does not decode into what its handler
// wants. The worker fails such a job at once, keeping it in the failed-job store. Its
// message says what could not be decoded, where, and why, e.g.
// `decode data.command of App\Jobs\X: phpser: expected ';' at offset 57`.
type DecodeError = job.DecodeError

// DecryptError is an encrypted command (ShouldBeEncrypted) the worker could not
// decrypt: the connection has no Encrypter (PHP's RuntimeException "Unable to extract
// job payload."), or the key does not open it (Laravel's DecryptException, such as "The
// MAC is invalid."). As in a PHP worker it is an ordinary exception of the attempt, so
// Laravel's rules retry the job until its tries are spent and then fail it. Its message
// never holds key material; Detail says why, for logs.
type DecryptError = job.DecryptError

// LogContext is the Laravel Context a job was dispatched with (Context::add and
// Context::addHidden, 11.x+), each value unserialized from its serialize() text; see
// JobInfo.Context. A laraq worker carries a job's Context into the next job of its chain,
// as PHP's does.
type LogContext = job.LogContext

// LogContextKey is the payload key Laravel's Context travels under.
const LogContextKey = job.LogContextKey

// FallbackClass is the class a fallback handler is reported under.
const FallbackClass = job.FallbackClass

// NewJobs returns an empty set of handlers.
func NewJobs() *Jobs { return job.NewJobs() }

// Handle registers fn for the jobs of T's PHP class (T's PHPClass). Before each attempt
// the command is decoded into a fresh T (see JobInfo.Bind), each property the payload
// leaves out at the default its field declares (`php:"tries,default=3"`: Laravel 9.4+
// SerializesModels writes only what differs from the class defaults); a command that does
// not decode fails the job at once with a *DecodeError. T is also declared as the class's
// Go type (see Declare).
//
//	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[SendInvoice]) error {
//		return billing.Send(ctx, job.Command.InvoiceID)
//	})
func Handle[T Command](jobs *Jobs, fn func(ctx context.Context, job *Job[T]) error, opts ...HandleOption) {
	job.Handle(jobs, fn, opts...)
}

// HandleClass registers fn for the jobs of class, a PHP class name or a string job's
// "Class@method", with the command (or a string job's JSON data) decoded into T: for
// types without a PHPClass method, for string jobs, or T = *phpser.Value for the command
// as PHP values. A T with a PHPClass method is declared as class's Go type (see Declare).
func HandleClass[T any](jobs *Jobs, class string, fn func(ctx context.Context, job *Job[T]) error, opts ...HandleOption) {
	job.HandleClass(jobs, class, fn, opts...)
}

// HandleOption configures one registration (Handle, HandleClass, Jobs.HandleFunc,
// Jobs.Fallback).
type HandleOption = job.HandleOption

// WithMiddleware runs ms around the handler of this registration, in order, after the
// worker's middleware (WorkerConfig.Middleware) and before the class's own (its Go
// type's Middleware()) and those ->through() put in the payload:
//
//	laraq.Handle(jobs, syncOrder, laraq.WithMiddleware(middleware.RateLimited("orders")))
func WithMiddleware(ms ...Middleware) HandleOption { return job.WithMiddleware(ms...) }

// Declare tells jobs that T stands for the PHP class T.PHPClass() without handling its
// jobs here, so that what laraq derives from the class is right even for a class PHP
// workers run: a Go worker continuing a chain into that class takes the next job's
// metadata (tries, backoff, timeout, ...) from T's class defaults (`php:"tries,default=3"`,
// which a 9.4+ SerializesModels payload leaves out) and its TriesMethod, BackoffMethod,
// RetryUntilMethod and AttributedJob methods, as PHP's dispatch would; and
// JobInfo.Unserialized fills in T's defaults. Handle and HandleClass declare their type
// themselves. Declaring a class twice with different types panics.
func Declare[T Command](jobs *Jobs) { job.Declare[T](jobs) }

// ClassOf returns the name a job is routed by: data.commandName for an object job
// (dispatch(new X)), else the job string as given ("App\Jobs\Report@build"; PHP's worker
// calls method "fire" when there is no "@"). An object job whose commandName is missing
// falls back to the class in the serialized command's `O:n:"Class"` head.
func ClassOf(env *payload.Envelope) string { return job.ClassOf(env) }
