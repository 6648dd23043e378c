// Package database keeps failed jobs in Laravel's failed_jobs table, so that a Go worker's
// failures show up in `php artisan queue:failed` and can be retried with
// `php artisan queue:retry`, and so that Go tools can list, retry and forget the failures
// PHP workers recorded.
//
// Its failed.Store writes exactly what Laravel's DatabaseUuidFailedJobProvider (the
// "database-uuids" driver, default since Laravel 8) writes: the payload's uuid, the queue
// connection name, the bare queue name, the payload bytes as they were popped for the
// failing attempt, the exception text and failed_at as 'Y-m-d H:i:s' wall-clock text in
// the application timezone. The legacy "database" driver (integer ids) is available
// through Options.Driver. Open takes a DSN for SQLite (pure Go), MySQL/MariaDB or
// PostgreSQL and links all three drivers; New takes a *sql.DB of the caller's. On every
// database the application's migration owns the table; Options.CreateTable lets laraq
// create a missing one with the schema of Laravel's queue:failed-table migration, that of
// the application's release (Options.Schema, SchemaFor: 13.9 made connection and queue
// string columns and indexed them with failed_at).
//
// Two cases differ from PHP on purpose, because PHP loses the record in both: a payload
// without a uuid (Laravel 5.x/7.x producers) is recorded under a freshly generated uuid,
// and a uuid that is already in the table (the job failed again before `queue:retry`
// forgot the old record) is recorded under a freshly generated uuid too. Both are logged
// as warnings. `queue:retry` pushes the stored payload, so the retried job keeps the uuid
// inside it.
//
// Timezones: failed_at is wall-clock text, never an instant. Set Options.Location to the
// application's app.timezone. PostgreSQL stores it in `timestamp(0) without time zone` and
// SQLite as text, unchanged. MySQL's TIMESTAMP converts it from the session time zone to
// UTC and back, so Go and PHP must use the same session time zone (both use the server's
// default unless Laravel's connection config sets `timezone`, which then belongs in the
// DSN as `time_zone`).
package database
