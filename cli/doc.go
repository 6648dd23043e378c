// Package cli is the `laraq` command line, importable so that a team's own binary gets
// the same commands with its Go handlers registered:
//
//	func main() {
//		jobs := laraq.NewJobs()
//		laraq.Handle(jobs, sendWelcome) // func(ctx, *laraq.Job[SendWelcomeEmail]) error
//		os.Exit(cli.Run(jobs))
//	}
//
// Every command that touches Redis takes the same flags: --redis, --prefix and --queue,
// plus --laravel-root DIR or --env-file PATH to read a Laravel application's settings
// (package laravel), so that laraq uses the application's Redis connection, key prefixes,
// cache keys, failed-job table and timezone. A flag wins over the LARAQ_* variable of the
// same setting, which wins over the application's own.
//
// `work` runs a worker like `php artisan queue:work`: queue:work's lines per job
// (--log-format artisan, artisan8, json or text), Prometheus metrics and /healthz
// (--metrics-addr), failed jobs in the application's failed_jobs table (or a local
// SQLite file). Jobs no handler takes follow --unhandled: fail, release, or hand-back to
// the PHP workers on the same queue. `laraq work --forward URL` runs no Go handler at all:
// it POSTs each job as JSON to an HTTP service, whose answer decides the outcome (2xx
// done, Retry-After released for that many seconds, anything else an exception retried
// by Laravel's rules), so that a job class can move to a service written in any
// language. `demo` runs recorded Laravel jobs through example handlers on an in-memory
// Redis.
//
// The command line is a thin shell over the library: `work` starts from laraq.QueueWork
// (queue:work's options), maps its flags onto it, sizes the Redis pools with
// laravel.ConnectOptions.Worker and exits with laraq.ExitStatus, so a library worker
// built the same way behaves the same.
//
// go-redis has one logger per process (redis.SetLogger). The CLI, which owns the process,
// sets it so that go-redis' own lines join the command's log in its format, at a level
// by what they say (a Sentinel's new master is info, a dial failure a warning); the
// library never touches it, and a program built on it chooses for itself
// (laraq.RedisLog is one way).
//
// Signals are handled here and only here: SIGTERM and SIGINT stop a worker gracefully
// (a second one ends the process at once), SIGUSR2 pauses it (Worker.Pause) and SIGCONT
// resumes it (Worker.Resume), as `php artisan queue:work` does.
package cli
