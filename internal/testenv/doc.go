// Package testenv gives tests the real peers laraq is checked against: a redis-server
// started on a free loopback port, Debian's PHP with Laravel 8's queue components (driven
// through the harness in testdata/php), and the rules for when a missing peer is a
// failure.
//
// When CI=true a missing peer fails the test; elsewhere it skips it, so a laptop without
// PHP can still run the fast tests. Each test gets its own random key prefix, so tests run
// in parallel against one server and can still assert the whole key state they own.
package testenv
