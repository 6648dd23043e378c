// Package failed is what a worker needs to record a failed job the way Laravel does,
// without any database driver: the Store interface Laravel's failed-job providers
// implement (log, list, find, forget, flush, prune, the ids `queue:retry` takes), its
// Record, a Null store (Laravel's "null" driver), and PHP's Throwable text for Go errors.
// The failed_jobs table on SQLite, MySQL/MariaDB and PostgreSQL is in the subpackage
// failed/database, so a program that does not write failed rows links no SQL driver.
//
// The exception column holds PHP's Throwable string form. Exception renders a Go error in
// that form, with its file and line, a stack trace in PHP's layout and wrapped errors as
// PHP's "Next" sections:
//
//	billing\DeclinedError: card declined in /app/billing/charge.go:88
//	Stack trace:
//	#0 /app/worker.go(120): example.com/app/billing.Charge()
//	#1 [internal function]: example.com/app/worker.run()
//	#2 {main}
//
// Capture records the location where a handler's error is observed, FromPanic the location
// of a recovered panic, and New builds Laravel's own failures such as
// MaxAttemptsExceededException with Laravel's exact message.
package failed
