// Package matrix proves laraq against every Laravel release it claims (5.8, 6, 7, 8.83,
// 9, 10, 11, 12, 13): for each major's real framework tree, jobs of every shape that PHP
// dispatches run in a Go worker with the values PHP gave them, jobs Go dispatches carry
// exactly the payload that release writes and run in its own worker, string jobs, chains
// (and the Laravel Context they carry from 11 on), missing models, debounced jobs
// (13.x) and the queue:work signals behave as that release does.
//
// The package holds tests only; each test runs once per major (testenv.ForEachMajor).
// They need redis-server, PHP 8 with Debian's Laravel 8.83 queue components and the
// Laravel trees of the shared peers (../shared beside the repository, or
// LARAQ_SHARED_DIR); under CI=true a missing peer fails a test. Run the package alone,
// or for some majors only, with
//
//	CI=true go test -count=1 ./internal/matrix
//	LARAQ_MAJORS=5-7 go test -count=1 ./internal/matrix
package matrix
