// Package laraq lets Go workers share Laravel's Redis queues with PHP.
//
// A Laravel application dispatches a job as usual; a Go worker takes it from the same
// Redis list, decodes the PHP-serialized command into a typed Go struct, runs a Go
// handler, and deletes, releases or fails the job exactly as `php artisan queue:work`
// would: same attempts and tries, backoff, retryUntil, maxExceptions and timeouts, same
// failed_jobs rows (so `php artisan queue:failed` and `queue:retry` work on them), same
// queue:restart and queue:pause signals. Go code can dispatch jobs that PHP workers run.
// A job is never lost, never silently run twice, never mangled: the reserved copy is
// acknowledged byte for byte, and payloads a PHP worker would drop are kept aside.
//
// This root package holds only documentation and the compatibility tests; the code
// lives in the packages below.
//
// # Packages
//
//   - [github.com/laraq/laraq/handlers]: the registry that routes a job by its PHP class
//     name to a typed Go handler, and the outcomes a handler returns (retry, Release,
//     Fail, Delete).
//   - [github.com/laraq/laraq/consumer]: the worker, Laravel's Worker rules on Redis,
//     with concurrency, graceful stops and events for logs and metrics.
//   - [github.com/laraq/laraq/producer]: dispatching from Go, writing the payload
//     Laravel's Bus dispatcher writes for the same object.
//   - [github.com/laraq/laraq/failed]: Laravel's failed_jobs table on SQLite, MySQL or
//     PostgreSQL, and PHP's Throwable text for Go errors.
//   - [github.com/laraq/laraq/config]: a Laravel application's .env and config files read
//     the way PHP reads them: Redis connection, key prefixes, cache keys, failed-job
//     table, timezone.
//   - [github.com/laraq/laraq/payload]: the JSON envelope of a queued job, every version
//     from 5.5 to 13.x, reserved (cjson-re-encoded) copies included.
//   - [github.com/laraq/laraq/phpser]: PHP's serialize() format: a complete, safe codec
//     with struct mapping (`php:"name"` tags, ModelIdentifier, Carbon, enums).
//   - [github.com/laraq/laraq/laraqtest]: testing handlers without Redis.
//   - [github.com/laraq/laraq/cli] and cmd/laraq: the `laraq` command line (work,
//     dispatch, decode, stats, failed, restart, pause, resume, clear, demo), importable
//     so that a team's own binary carries its handlers.
//
// # Getting started
//
//	go run github.com/laraq/laraq/cmd/laraq@latest demo
//
// runs recorded Laravel jobs through Go handlers on an in-memory Redis. A worker of your
// own registers handlers and runs the command line:
//
//	type SendWelcomeEmail struct {
//		User phpser.ModelIdentifier `php:"user"`
//	}
//
//	func main() {
//		reg := handlers.NewRegistry()
//		handlers.Register(reg, `App\Jobs\SendWelcomeEmail`, func(ctx context.Context, job *SendWelcomeEmail, meta *handlers.Job) error {
//			return sendWelcome(ctx, job.User.ID)
//		})
//		os.Exit(cli.Run(reg)) // mybinary work --laravel-root /var/www/shop --queue high,default
//	}
//
// examples/worker shows the same with the library alone (config.Load, consumer.New).
//
// # Compatibility
//
// testdata/laravel-payloads holds real payloads (public samples, jobs captured from
// Laravel 8.83, and later releases' shapes built from the wire format); compat_test.go
// runs each through the parser, the decoder, `laraq decode`, a Go worker on a real
// redis-server and, where the Laravel 8 peer has the job classes, PHP's own worker.
package laraq
