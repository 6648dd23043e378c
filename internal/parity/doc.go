// Package parity proves that a laraq Worker settles failing jobs exactly as Laravel's own
// Illuminate\Queue\Worker does. TestParityWithLaravelWorker runs the same scripted jobs
// (App\Jobs\Scripted of testdata/php/jobs.php: throw, release, fail, time out, run out of
// tries, maxExceptions, retryUntil, backoff) once under Laravel's worker of each release
// of the matrix (work.php; one job per run, Carbon's clock frozen) and once under a
// laraq Worker told that release and its skeleton's cache store (one job per Run,
// WorkerConfig.Now frozen), from identical Redis states under two prefixes of one
// redis-server, and compares the states both leave after every step: where the job sits
// and with which attempts and exact bytes, the delayed/reserved scores relative to now,
// the notify list, the job-exceptions cache counter and its TTL, and the failed_jobs rows
// (uuid, connection, queue, payload bytes, exception class and message).
//
// The package holds tests only. They need redis-server, PHP 8 with Debian's Laravel 8.83
// queue components and the Laravel trees of the shared peers (../shared beside the
// repository, or LARAQ_SHARED_DIR); the failed_jobs tables are SQLite files of the test.
// Under CI=true a missing peer fails the test. Run it alone, or for some majors only, with
//
//	CI=true go test -count=1 ./internal/parity
//	LARAQ_MAJORS=10-13 go test -count=1 ./internal/parity
package parity
