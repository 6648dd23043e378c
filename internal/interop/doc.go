// Package interop proves that Go and PHP share one Laravel queue in both directions, with
// real PHP on the other side: jobs Laravel dispatched run in a Go worker with the
// properties PHP gave them (every captured payload of testdata/laravel-payloads, too);
// jobs Go dispatched are byte for byte what Laravel writes and run in Laravel's own
// Illuminate\Queue\Worker; chains, batches, unique and encrypted jobs, the database cache
// store and the reservation heartbeat work across the two; a failed job written by one
// side is retried by the other; and mixed fleets of PHP and Go workers, crashed or cut off
// from Redis, run each job once and lose none.
//
// The package holds tests only. They need redis-server, PHP 8 with Debian's Laravel 8.83
// queue components, the Laravel trees of the shared peers (../shared beside the
// repository, or LARAQ_SHARED_DIR) for the tests that run on every major (LARAQ_MAJORS
// narrows them), and MariaDB and PostgreSQL for the batch tests; under CI=true a missing
// peer fails a test. Run the package alone with
//
//	CI=true go test -count=1 ./internal/interop
//
// TestCompatibility's -capture and -update flags re-capture the payloads of
// testdata/laravel-payloads from the peers and rewrite their decoded/ goldens:
//
//	go test ./internal/interop -run TestCompatibility -capture
//	go test ./internal/interop -run TestCompatibility -update
package interop
