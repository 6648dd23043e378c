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
// Laravel's Worker exactly (Laravel 8 messages; Config.Laravel 10.10 or later selects
// "<Name> has been attempted too many times." and, for timeouts,
// Illuminate\Queue\TimeoutExceededException "<Name> has timed out."):
//
//   - the current attempt is the popped payload's attempts + 1; it is counted by the
//     pop, so a crash or timeout still uses it up;
//   - maxTries is the payload's, else Config.Tries (0: unlimited; like PHP's
//     `=== 0`, a payload "0" string is not unlimited); retryUntil, when set, replaces
//     it;
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
// A test in this package runs the same failing jobs under Laravel 8.83's own Worker and
// under this one, from identical Redis states with frozen clocks, and requires the same
// Redis state and failed_jobs rows after every attempt. One difference is deliberate: a
// payload without uuid (Laravel before 7) that fails is lost by PHP's
// database-uuids provider (its insert violates NOT NULL after the job was deleted), while
// package failed records it under a generated uuid.
//
// Success deletes the exact reserved bytes (ZREM). Failing deletes them, then writes the
// payload as popped, the connection name, the bare queue name and the error in PHP's
// Throwable form to the failed store (package failed writes Laravel's failed_jobs
// table, where `php artisan queue:retry` finds it), then emits EventFailed.
// Handlers steer this with the outcomes of package handlers (Release, Fail, Delete).
//
// # Chains
//
// When a handler succeeds (returns nil, or Delete: PHP's CallQueuedHandler checks only
// "released" and "failed") on an object job whose command has a non-empty chained list,
// the worker does what Bus\Queueable::dispatchNextJobInChain does, before deleting the
// job: it unserializes the first element, sets its chained property to the rest, its
// connection and queue to its own or else the chain's (chainConnection, chainQueue,
// with PHP's `?:`), copies chainConnection, chainQueue and chainCatchCallbacks, and
// dispatches it as Laravel's Bus would (package producer): new uuid and id, envelope
// metadata from its public tries, maxExceptions, backoff, timeout, failOnTimeout and
// retryUntil properties, to queues:<queue> (Config.DefaultQueue when it has none), or
// to :delayed when its delay property is set. Properties keep their places in the
// stream, so the payload is byte for byte the one PHP's worker pushes for the same step
// (uuid and id aside), which a test checks against Laravel's own worker. A dispatch that
// fails is the job's exception, as in PHP: the job is retried or failed by the rules
// above, and the chain goes on from the retry.
//
// What a Go worker cannot do for a chain:
//
//   - run chainCatchCallbacks (PHP closures) when a job of the chain fails: the chain
//     simply stops, and the failed-job record is written as usual;
//   - call methods of the next job's PHP class: metadata that a class computes in
//     backoff(), retryUntil() or displayName() methods, a custom queue() method,
//     ShouldBeEncrypted (the command is pushed unencrypted) and ShouldBeUnique locks
//     are only honoured when a PHP worker continues the chain. displayName is the class
//     name, and payload hooks (Queue::createPayloadUsing, Horizon's tags and type) add
//     nothing;
//   - reload Eloquent models: a model the next job carries stays the ModelIdentifier
//     it was (PHP reloads and re-serializes it, to the same identifier unless the row
//     is gone, in which case PHP's dispatch throws);
//   - continue the chain of an encrypted command, whose chained list it cannot read;
//   - re-serialize a next job holding PHP references (r:, R:) placed after the
//     properties it changes, nor carry chainCatchCallbacks that hold references: that
//     dispatch fails with an error saying so;
//   - push to another queue connection: a next job whose connection property names
//     another connection is pushed to this worker's Redis connection with a warning in
//     the log. Laravel's queue keys carry no connection name, so a second Redis queue
//     connection on the same database reads the same keys; a job meant for another
//     driver (sqs, database) would instead wait for a worker of this connection.
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
// MaxTime, StopWhenEmpty and MemoryLimit. These conditions are looked at after a slot
// is free and before each pop, as PHP looks at them after each job: a worker stopping
// after N jobs never pops job N+1, whatever its concurrency, and a restart signal
// written while a job runs (longer than SignalInterval) stops the worker before it
// takes another. Pause and Resume stop and resume taking jobs; the queue:pause flags of
// Laravel 12.40+ are honoured per queue.
//
// # Observing
//
// Config.OnEvent receives an Event for each step (processing, processed, failed,
// released, exception, timed out, migrated, handed back, invalid), enough for
// artisan-style console lines and metrics. EventReleased says whether an exception
// caused the release (AfterException). EventLoop is the loop's heartbeat, at least every
// few seconds, with the error of its last Redis call: a health check built on it
// reports a Redis outage as soon as the worker meets it, and the recovery.
//
// # Redis connections
//
// The client is the caller's. The Consumer needs Concurrency + 2 connections of its
// pool at once (redis.Options.PoolSize); New logs a warning when the pool is smaller.
package consumer
