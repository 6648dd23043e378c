// Package peers checks the Laravel releases laraq is tested against — Debian's 8.83
// packages and the real 10.x, 11.x, 12.x and 13.x trees of the shared peers — through the
// PHP scripts of testdata/php: each release dispatches, runs and fails jobs on a real
// redis-server exactly as the other tests expect (TestPeerRoundTrip), and the payload
// fixtures captured from each release (testdata/laravel-payloads L10-* … L13-*) still match
// what that release queues today (TestCapturedPayloadsDoNotDrift).
//
// Re-capture the fixtures with
//
//	go test ./internal/peers -run TestCapturedPayloadsDoNotDrift -capture
//
// then rewrite their decoded/ goldens with
// `go test ./internal/interop -run TestCompatibility -update`.
// The package has tests only.
package peers
