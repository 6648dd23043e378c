package testenv

import (
	"fmt"
	"testing"
)

// A Feature is a part of Laravel's queue that some releases of the matrix lack. A test
// case that needs one calls Since, which skips it by name on the older releases, with
// the release that brought it, instead of letting it vanish from the run.
type Feature struct {
	Name  string // the case's name in skip messages: "unique", "batches", ...
	Major int    // the first major that has it
	Since string // the release that brought it, for the skip message: "8.x", "8.19"
	// Component is the PeerInfo.Components entry that says a booted release has it ("" when
	// peer_info.php does not report it).
	Component string
}

// The features a release of the matrix may lack.
var (
	// Unique is ShouldBeUnique and ShouldBeUniqueUntilProcessing (8.x).
	Unique = Feature{Name: "unique", Major: 8, Since: "8.x", Component: "unique"}
	// Encrypted is ShouldBeEncrypted (8.19; every 8.x of the matrix is 8.83).
	Encrypted = Feature{Name: "encrypted", Major: 8, Since: "8.19", Component: "encrypted"}
	// Batches is Bus::batch, Batchable and the job_batches table (8.x).
	Batches = Feature{Name: "batches", Major: 8, Since: "8.x", Component: "batches"}
	// BusChain is Bus::chain() (8.x; before, Job::withChain() of Foundation's Dispatchable,
	// or $job->chain(), which the "chain" cases use).
	BusChain = Feature{Name: "bus-chain", Major: 8, Since: "8.x"}
	// Context is Laravel Context and its payload key (11.x).
	Context = Feature{Name: "context", Major: 11, Since: "11.x", Component: "context"}
	// UUIDs is the payload's uuid (7.x) and with it the job-exceptions:<uuid> counter of
	// maxExceptions (7.x too).
	UUIDs = Feature{Name: "uuid", Major: 7, Since: "7.x"}
	// DatabaseUUIDs is the database-uuids failed-job provider and the uuid column of
	// failed_jobs (8.x); before, the legacy database provider with integer ids.
	DatabaseUUIDs = Feature{Name: "database-uuids", Major: 8, Since: "8.x"}
	// JobMiddleware is Laravel's own queue middleware, Illuminate\Queue\Middleware
	// (RateLimited, WithoutOverlapping 8.11; ThrottlesExceptions 8.32; every 8.x of the
	// matrix is 8.83).
	JobMiddleware = Feature{Name: "job middleware", Major: 8, Since: "8.11"}
	// ClassSamples are the job classes of testdata/php/jobs_classes.php that the class
	// facts tests read all of: some implement ShouldBeUnique and ShouldBeEncrypted or use
	// Batchable (8.x), which a release before is not declared there.
	ClassSamples = Feature{Name: "class facts of jobs_classes.php", Major: 8, Since: "8.x"}
)

// Has reports whether the release of this major has the feature.
func (f Feature) Has(major int) bool {
	if major == 0 {
		major = 8
	}
	return major >= f.Major
}

// Since skips the test on a major older than the feature, saying so by name ("unique:
// 8.x+, Laravel 6 has none"). On a major that should have it, a booted release whose
// peer_info.php says it has not fails the test: a release that lost a feature, or a
// harness that cannot reach it, is a finding, not a skip. Call it after NeedPeer
// (ForEachMajor does).
func Since(t testing.TB, major int, f Feature) {
	t.Helper()
	if !f.Has(major) {
		if info, err := probePeer(major, ""); err == nil && f.Component != "" && info.Components[f.Component] {
			t.Fatalf("%s: %s reports %q, which the matrix says arrived in %s", f.Name, info.Tag, f.Component, f.Since)
		}
		t.Skip(f.SkipMessage(major))
	}
	if f.Component == "" {
		return
	}
	if info, err := probePeer(major, ""); err == nil && !info.Components[f.Component] {
		t.Fatalf("%s: %s boots without %q (%s+ has it): %+v", f.Name, info.Tag, f.Component, f.Since, info.Components)
	}
}

// SkipMessage is the reason a case needing f does not run on this major: "unique: 8.x+,
// Laravel 6 has none".
func (f Feature) SkipMessage(major int) string {
	return fmt.Sprintf("%s: %s+, Laravel %s has none", f.Name, f.Since, MajorName(major)[1:])
}
