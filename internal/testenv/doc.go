// Package testenv gives tests the real peers laraq is checked against: a redis-server
// started on a free loopback port, the Laravel releases of the matrix — Debian's 8.83
// packages and the shared trees of 5.8, 6.x, 7.x and 9.x-13.x — driven through the scripts in testdata/php
// (PHPEnv{Major: N}; NeedPeer, ForEachMajor, Majors), payload capture from each release
// (CapturePayloads), and the rules for when a missing peer is a failure.
//
//	testenv.ForEachMajor(t, func(t *testing.T, major int) {
//		php := testenv.PHPEnv{Major: major, Redis: srv, Prefix: testenv.Prefix(t)}
//		d := php.Dispatch(t, nil, `{"class":"App\\Jobs\\PlainJob","props":{"name":"x"}}`)[0]
//		php.Run(t, nil, "work.php", "--stop-when-empty", "--sleep=0")
//		_ = d.Payload // the exact bytes the release queued
//	})
//
// When CI=true a missing peer fails the test; elsewhere it skips it, so a laptop without
// PHP can still run the fast tests. Each test gets its own random key prefix, so tests run
// in parallel against one server and can still assert the whole key state they own.
package testenv
