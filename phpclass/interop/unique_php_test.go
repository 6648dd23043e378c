package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/cli"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/phpclass"
)

// uniqueSamples are the samples of ShouldBeUnique classes: UniquePropJob (its id the
// uniqueId property, uniqueFor 60) and UniqueMethodJob (ShouldBeUniqueUntilProcessing,
// uniqueId() and uniqueFor() methods: 'order-9' and 45).
func uniqueSamples(t *testing.T) []sample {
	t.Helper()
	var out []sample
	for _, s := range samples(t) {
		if s.Name == "unique-prop" || s.Name == "unique-method" {
			out = append(out, s)
		}
	}
	if len(out) != 2 {
		t.Fatalf("jobs_classes_samples.json has %d unique samples, want 2", len(out))
	}
	return out
}

// manifestFile asks the release's PHP for the facts of classes and writes them to a file.
func manifestFile(t *testing.T, major int, classes ...string) string {
	t.Helper()
	path, _ := extractManifest(t, major, classes...)
	return path
}

// extractManifest asks the release's PHP for the facts of classes: the manifest, and the
// file it is written to.
func extractManifest(t *testing.T, major int, classes ...string) (string, *phpclass.Manifest) {
	t.Helper()
	m, err := phpclass.Extract(context.Background(), phpclass.Options{
		Root:     testenv.RepoRoot(),
		Autoload: testenv.Testdata("php", "classes_autoload.php"),
		Classes:  uniq(classes),
		Env:      testenv.PHPEnv{Major: major}.Environ(),
	})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "classes.json")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := m.Write(f); err != nil {
		t.Fatal(err)
	}
	return path, m
}

// releaseOf is the release a peer boots, as --laravel-version names it.
func releaseOf(t *testing.T, major int) string {
	if major == 8 {
		return "8.83"
	}
	return strings.TrimPrefix(testenv.Peer(t, major).Tag, "v")
}

// ownerRE finds a lock's owner (Str::random(16)) where 13.24+ writes it into a payload:
// the command's uniqueLockOwner and the hidden Context.
var ownerRE = regexp.MustCompile(`((?:uniqueLockOwner\\";|laravel_unique_job_lock_owner":")s:16:\\")[A-Za-z0-9]{16}`)

// maskOwner puts the same 16 characters in place of every lock owner.
func maskOwner(raw string) string { return ownerRE.ReplaceAllString(raw, "${1}xxxxxxxxxxxxxxxx") }

// TestDispatchClassesTakesUniqueLocks: on every release, `laraq dispatch --classes` of a
// ShouldBeUnique class writes what PHP's dispatch() (PendingDispatch) writes, byte for
// byte (uuid, id, createdAt and the lock's random owner aside: 13.24+ writes it into the
// command, 11.39+ the lock into the hidden Context), and takes the lock PHP takes: the
// same key, lifetime and owner as the payload says. While it is held both refuse a
// second dispatch; once Laravel's worker ran the jobs, both accept it again. The id of
// UniqueMethodJob comes from uniqueId(), which laraq is told (--unique-id), and without
// which it refuses.
func TestDispatchClassesTakesUniqueLocks(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		testenv.Since(t, major, testenv.Unique) // ShouldBeUnique classes: 8.x
		ctx := context.Background()
		release := releaseOf(t, major)
		uniques := uniqueSamples(t)
		var classes []string
		for _, s := range uniques {
			classes = append(classes, s.Class)
		}
		manifest := manifestFile(t, major, classes...)
		phpPrefix, cliPrefix := testenv.Prefix(t), testenv.Prefix(t)
		penv := func(prefix string) testenv.PHPEnv {
			return testenv.PHPEnv{Major: major, Redis: srv, Prefix: prefix, CacheDB: 2 + major,
				Record: filepath.Join(t.TempDir(), "records.jsonl"), FailedDB: testenv.SQLite(t)}
		}
		nowArg := []string{fmt.Sprint("--now=", now.Unix())}
		phpDispatch := func() []testenv.Dispatched {
			var reqs []string
			for _, s := range uniques {
				b, _ := json.Marshal(map[string]any{"class": s.Class, "props": s.Props, "via": "dispatch"})
				reqs = append(reqs, string(b))
			}
			return penv(phpPrefix).Dispatch(t, nowArg, reqs...)
		}
		cliDispatch := func(s sample, extra ...string) (string, string, int) {
			var stdout, stderr bytes.Buffer
			args := append([]string{"dispatch", "--redis", "redis://" + srv.Addr + "/0", "--prefix", cliPrefix,
				"--laravel-version", release, "--classes", manifest, s.Class, "--props", "-"}, extra...)
			rc := cli.Main(ctx, args, cli.WithIO(bytes.NewReader(s.Props), &stdout, &stderr), cli.WithGetenv(func(k string) string {
				if k == "LARAQ_APP_KEY" {
					return appKey
				}
				return ""
			}))
			return strings.TrimSpace(stdout.String()), stderr.String(), rc
		}

		// Without the answer of uniqueId() the dispatch is refused, naming what to do.
		if _, errOut, rc := cliDispatch(uniques[1]); rc != 1 || !strings.Contains(errOut, "uniqueId() method") || !strings.Contains(errOut, "--unique-id") {
			t.Errorf("UniqueMethodJob without --unique-id: exit %d: %s", rc, errOut)
		}

		php := phpDispatch()
		for i, s := range uniques {
			if php[i].Dispatched == nil || !*php[i].Dispatched {
				t.Fatalf("%s: PHP's dispatch() queued nothing: %+v", s.Name, php[i])
			}
			id, errOut, rc := cliDispatch(s, methodAnswers(major, s.Name)...)
			if rc != 0 {
				t.Fatalf("%s: laraq dispatch --classes: exit %d: %s", s.Name, rc, errOut)
			}
			got, want := queuedPayload(t, srv, cliPrefix, id), php[i].Payload
			samePayload(t, "cli "+s.Name, maskOwner(got), maskOwner(want), true)
			if major == 13 && !ownerRE.MatchString(got) {
				t.Errorf("%s: 13.24+ writes the lock's owner into the payload; laraq did not:\n%s", s.Name, got)
			}
		}
		// The same locks: key (under each prefix), lifetime.
		phpLocks, cliLocks := lockState(t, srv, phpPrefix), lockState(t, srv, cliPrefix)
		if len(phpLocks) != 2 || fmt.Sprint(keysOf(phpLocks)) != fmt.Sprint(keysOf(cliLocks)) {
			t.Fatalf("unique locks: PHP %v, laraq %v", phpLocks, cliLocks)
		}
		for k, ttl := range phpLocks {
			if d := cliLocks[k] - ttl; d < -2*time.Second || d > 2*time.Second {
				t.Errorf("lock %s lives %s with laraq, %s with PHP", k, cliLocks[k], ttl)
			}
		}

		// While the locks are held, a second dispatch queues nothing.
		for i, d := range phpDispatch() {
			if d.Dispatched == nil || *d.Dispatched {
				t.Errorf("%s: PHP queued a duplicate while the lock is held", uniques[i].Name)
			}
		}
		for _, s := range uniques {
			if _, errOut, rc := cliDispatch(s, methodAnswers(major, s.Name)...); rc != 1 || !strings.Contains(errOut, "same unique lock") {
				t.Errorf("%s: a second laraq dispatch while the lock is held: exit %d: %s", s.Name, rc, errOut)
			}
		}

		// Laravel's worker runs both sets and releases every lock: both accept again.
		for _, prefix := range []string{phpPrefix, cliPrefix} {
			out := penv(prefix).Run(t, nil, "work.php", "--stop-when-empty", "--sleep=0", nowArg[0])
			if n := strings.Count(string(out), "Processed:"); n != 2 || strings.Contains(string(out), "Failed:") {
				t.Errorf("Laravel's worker processed %d jobs, want 2:\n%s", n, out)
			}
			if locks := lockState(t, srv, prefix); len(locks) != 0 {
				t.Errorf("locks left after Laravel ran the jobs: %v", locks)
			}
		}
		for _, s := range uniques {
			if _, errOut, rc := cliDispatch(s, methodAnswers(major, s.Name)...); rc != 0 {
				t.Errorf("%s: laraq dispatch after the job ran: exit %d: %s", s.Name, rc, errOut)
			}
		}
		for i, d := range phpDispatch() {
			if d.Dispatched == nil || !*d.Dispatched {
				t.Errorf("%s: PHP's dispatch() after the job ran queued nothing", uniques[i].Name)
			}
		}
	})
}

// lockState maps each unique lock under prefix, the prefix cut off, to its time to live.
func lockState(t *testing.T, srv *testenv.Redis, prefix string) map[string]time.Duration {
	t.Helper()
	c := srv.Client(t, 0)
	out := map[string]time.Duration{}
	for _, k := range uniqueLocks(t, srv, prefix) {
		ttl, err := c.PTTL(context.Background(), k).Result()
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimPrefix(k, prefix)] = ttl
	}
	return out
}

func keysOf(m map[string]time.Duration) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
