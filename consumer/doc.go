// Package consumer is a Go queue worker for Laravel's Redis queues that behaves like
// `php artisan queue:work`, so Go and PHP workers can share the same queues.
//
//	reg := handlers.NewRegistry()
//	handlers.Register(reg, `App\Jobs\SendInvoice`, sendInvoice)
//	c, err := consumer.New(client, consumer.Config{
//		Queues:   []string{"high", "default"},
//		Prefix:   "laravel_database_",
//		Registry: reg,
//		Tries:    new(3),
//		Failed:   store, // failed.Open(ctx, "mysql://…", failed.Options{})
//	})
//	err = c.Run(ctx) // cancel ctx to stop gracefully
//
// # Taking jobs
//
// A job is taken with the same pop script PHP uses (LPOP, attempts+1 re-encoded by
// Redis' cjson, ZADD to :reserved with expiry now + RetryAfter, one notify token
// consumed), from the first of Config.Queues that has one. Before popping a queue,
// due delayed jobs and then expired reservations are moved back to its ready list, at
// most once per MigrateInterval instead of before every pop. Concurrency goroutines
// run jobs; jobs are popped only for free slots (several in one script call when
// several slots are free), so the process never holds more reservations than it can
// run. When every queue is empty the worker sleeps (Sleep) or, with BlockFor, waits on
// the first queue's notify list and starts a pushed job within milliseconds.
//
// # Laravel's rules
//
// Attempts, tries, retryUntil, backoff, maxExceptions, timeouts and failOnTimeout follow
// Laravel's Worker exactly (Laravel 8 messages):
//
//   - the current attempt is the popped payload's attempts + 1; it is counted by the
//     pop, so a crash or timeout still uses it up;
//   - maxTries is the payload's, else Config.Tries (0: unlimited); retryUntil, when
//     set, replaces it;
//   - before running, a job that already exceeds them is failed with
//     Illuminate\Queue\MaxAttemptsExceededException ("<Name> has been attempted too
//     many times or run too long. The job may have previously timed out.");
//   - after an error, a job whose attempts >= maxTries (or whose retryUntil passed) is
//     failed; otherwise, with a maxExceptions, the error is counted in the cache key
//     job-exceptions:<uuid> that PHP workers share, and reaching it fails the job;
//     otherwise the job is released with the backoff for its attempt (payload backoff,
//     else payload delay, else Config.Backoff; the last value repeats);
//   - a job runs with a context whose deadline is its payload timeout, else
//     Config.Timeout. When it passes, the tries and maxExceptions checks run with the
//     timeout as the exception and failOnTimeout fails the job; otherwise the job stays
//     reserved (its attempt counted) until RetryAfter brings it back, as with PHP, where
//     the worker process kills itself. The Go worker abandons the handler instead and
//     goes on (TimeoutReleases releases the job instead of leaving it).
//
// Success deletes the exact reserved bytes (ZREM). Failing deletes them, then writes the
// payload as popped, the connection name, the bare queue name and the error in PHP's
// Throwable form to the failed store (package failed writes Laravel's failed_jobs
// table, where `php artisan queue:retry` finds it), then emits EventFailed.
// Handlers steer this with the outcomes of package handlers (Release, Fail, Delete).
//
// # Never losing a job
//
// A payload the pop script cannot reserve (no numeric attempts) is moved aside to
// queues:NAME:invalid; a PHP worker would have lost it. A payload that is reserved but
// cannot be parsed, or whose command does not decode into the handler's type, is
// failed with an error saying what and where (for example `decode data.command of
// App\Jobs\X: phpser: expected ';' at offset 57`), so it is kept in the failed store.
// A job whose class has no handler is failed, released or handed back to the head of
// its queue for PHP workers, as Config.Unhandled says, and never deleted.
//
// Redis errors never stop the worker: taking jobs is retried with backoff, and each
// acknowledgement (delete, release, failed record) is retried for a while. A job whose
// acknowledgement is lost stays reserved and runs again after RetryAfter: delivery is
// at least once, as with Laravel. Likewise a pop whose reply is lost with the
// connection has reserved its jobs all the same: they come back after RetryAfter with
// that attempt counted, exactly as with a PHP worker, so give jobs at least two tries
// where a connection loss must not fail them.
//
// # Stopping
//
// Cancelling Run's context stops taking jobs; jobs in flight get ShutdownGrace to
// finish, then their contexts are cancelled. Whatever is still reserved after that
// comes back to a worker after RetryAfter. Run also stops by itself, after in-flight
// jobs finished, when the queue:restart signal changes (ErrRestart), and for MaxJobs,
// MaxTime, StopWhenEmpty and MemoryLimit. Pause and Resume stop and resume taking
// jobs; the queue:pause flags of Laravel 12.40+ are honoured per queue.
//
// # Observing
//
// Config.OnEvent receives an Event for each step (processing, processed, failed,
// released, exception, timed out, migrated, handed back, invalid), enough for
// artisan-style console lines and metrics.
//
// # Redis connections
//
// The client is the caller's. The Consumer needs Concurrency + 2 connections of its
// pool at once (redis.Options.PoolSize); New logs a warning when the pool is smaller.
package consumer
