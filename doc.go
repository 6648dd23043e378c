// Package laraq lets Go workers share Laravel's Redis queues with PHP.
//
// A Laravel application dispatches a job as usual; a Go worker takes it from the same
// Redis list, decodes the PHP-serialized command into a Go struct, runs a Go handler,
// and deletes, releases or fails the job exactly as `php artisan queue:work` would: same
// attempts and tries, backoff, retryUntil, maxExceptions and timeouts, same failed_jobs
// rows (so `php artisan queue:failed` and `queue:retry` work on them), same queue:restart
// and queue:pause signals. Go code dispatches jobs that PHP workers run. A job is never
// lost, never silently run twice, never mangled: the reserved copy is acknowledged byte
// for byte, and payloads a PHP worker would drop are kept aside.
//
// # The front door
//
// A Connection is a Laravel queue connection on Redis: the client, the connection name,
// prefix, default queue, retry_after and block_for, the application's Release, the
// cache store PHP workers read their signals from (Redis, or with CacheStore.Store the
// database store of Laravel 11+ skeletons, package cache/database), and the failed-job
// store. Package
// laravel builds one from an application's .env and config files, as `laraq work` does:
//
//	conn, err := laravel.Connect(ctx, laravel.App{Root: "/var/www/shop"})
//
// A Go struct whose PHPClass method names a PHP job class is both handled and dispatched:
//
//	type SendInvoice struct {
//		InvoiceID int64 `php:"invoiceId"`
//		laraq.Queueable
//	}
//
//	func (SendInvoice) PHPClass() string { return `App\Jobs\SendInvoice` }
//
//	jobs := laraq.NewJobs()
//	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[SendInvoice]) error {
//		return billing.Send(ctx, job.Command.InvoiceID) // an error is retried by Laravel's rules
//	})
//	w, err := laraq.NewWorker(conn, jobs, laraq.WorkerConfig{Tries: 3})
//	err = w.Run(ctx) // until ctx ends, or ErrRestart after `php artisan queue:restart`
//
//	d, err := laraq.NewDispatcher(conn)
//	id, err := d.Dispatch(ctx, SendInvoice{InvoiceID: 7}, laraq.OnQueue("billing"))
//
// Jobs move from PHP to Go without losing a Laravel feature: ShouldBeEncrypted commands
// are decrypted (and dispatched encrypted) with Connection.Encrypter; ShouldBeUnique
// locks are released when PHP's worker would (UniqueJob; taken by Dispatch); batched
// jobs update job_batches through Connection.Batches (package bus); and a running job's
// reservation is kept alive (WorkerConfig.ReservationHeartbeat), so a job longer than
// retry_after is not run a second time by another worker.
//
// A handler's return value decides the job's fate (see Outcome): nil deletes it,
// ReleaseAfter(d) is $this->release($d), Fail(err) is $this->fail($e), Delete() is
// $this->delete(), MissingModel(m) is a SerializesModels model that is gone (deleted or
// failed as the release decides), any other error (or a panic) is retried by Laravel's
// rules. JobInfo.Context is the job's Laravel Context (11+). Admin does
// what artisan's queue commands do: sizes, queue:clear, queue:restart, queue:pause and
// queue:resume, queue:retry of failed jobs.
//
// # Class defaults and releases
//
// A field declares its PHP class default in its tag (`php:"tries,default=3"` for `public
// $tries = 3;`). The Dispatcher writes a field left at its Go zero value as that default,
// reads the envelope metadata from the object so completed, and from Laravel 9.4 on leaves
// out of the serialized command every property still identical to its default, as
// SerializesModels does (a type whose class does not use SerializesModels says so with
// PHPSerializesModels() bool, see phpser.ModelSerializer). Handle decodes such payloads
// with the defaults filled in; JobInfo.Unserialized does it for untyped handlers. Queueable
// stands for the Bus\Queueable trait of the connection's Release, written in that
// release's order. Metadata a PHP class computes in methods or 13.x attributes comes from
// the optional TriesMethod, BackoffMethod, RetryUntilMethod, DisplayNamer and
// AttributedJob methods of the type, read as the release reads them. Declare tells a
// worker the Go type of a class it does not handle, for chains continued into it.
//
// # Packages
//
//   - [github.com/laraq/laraq/laravel]: a Laravel application's .env and config files read
//     the way PHP reads them, turned into a Connection.
//   - [github.com/laraq/laraq/failed] and [github.com/laraq/laraq/failed/database]: the
//     failed-job store interface and PHP's Throwable text (no database driver), and
//     Laravel's failed_jobs table on SQLite, MySQL/MariaDB or PostgreSQL.
//   - [github.com/laraq/laraq/metrics] and [github.com/laraq/laraq/artisanlog]: Prometheus
//     metrics and /healthz, and queue:work's console output, fed by the worker's events.
//   - [github.com/laraq/laraq/bus] and [github.com/laraq/laraq/bus/database]: job batches
//     (Bus::batch): the job_batches rules without a database driver, and the table.
//   - [github.com/laraq/laraq/encryption]: Laravel's Encrypter, for ShouldBeEncrypted jobs.
//   - [github.com/laraq/laraq/payload]: the JSON envelope of a queued job, every version
//     from 5.5 to 13.x, reserved (cjson-re-encoded) copies included, and its readable form.
//   - [github.com/laraq/laraq/phpser]: PHP's serialize() format: a complete, safe codec
//     with struct mapping (`php:"name"` tags, class defaults, ModelIdentifier, Carbon, enums).
//   - [github.com/laraq/laraq/laraqtest]: testing handlers without Redis.
//   - [github.com/laraq/laraq/cli] and cmd/laraq: the `laraq` command line, a thin shell
//     over this API, importable so that a team's own binary carries its handlers:
//     os.Exit(cli.Run(jobs)).
//
// A program that registers handlers and runs a worker links neither a SQL driver nor
// Prometheus: it gets them only by importing failed/database (or laravel) and metrics.
package laraq
