package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/laraq/laraq/cli"
	"github.com/laraq/laraq/internal/testenv"
)

// forwardBody is what the test's service reads of a job `laraq work --forward` posts.
type forwardBody struct {
	Class   string `json:"class"`
	Payload struct {
		Data struct {
			Command map[string]any `json:"command"`
		} `json:"data"`
	} `json:"payload"`
	ClassFacts *struct {
		Class      string `json:"class"`
		Properties []struct {
			Name, Visibility string
		} `json:"properties"`
	} `json:"class_facts"`
}

// TestForwardReleasesUniqueLocks: on every release, `laraq work --forward --classes`
// releases the unique locks of jobs PHP's dispatch() queued, whose classes no Go type
// stands for, when PHP's worker would: UniquePropJob's (its id the uniqueId property:
// the manifest alone) once the service answered 2xx, and once it failed for good;
// UniqueMethodJob's (ShouldBeUniqueUntilProcessing, its id from a uniqueId() method: the
// service answers it in X-Laraq-Unique-Id) once the service answered. PHP's next
// dispatch of each is accepted after that. The body carries the class's facts. Without
// --classes the releases whose payloads do not name the lock (before 11.39) leave every
// lock behind, refusing the next dispatch.
func TestForwardReleasesUniqueLocks(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		testenv.Since(t, major, testenv.Unique) // ShouldBeUnique classes: 8.x
		release := releaseOf(t, major)
		manifest := manifestFile(t, major, `App\Jobs\Classes\UniquePropJob`, `App\Jobs\Classes\UniqueMethodJob`)
		var mu sync.Mutex
		var bodies []forwardBody
		service := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			raw, _ := io.ReadAll(r.Body)
			var b forwardBody
			if err := json.Unmarshal(raw, &b); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			mu.Lock()
			bodies = append(bodies, b)
			mu.Unlock()
			cmd := b.Payload.Data.Command
			if b.Class == `App\Jobs\Classes\UniqueMethodJob` {
				w.Header().Set("X-Laraq-Unique-Id", fmt.Sprint("order-", cmd["orderId"])) // 'order-' . $this->orderId
			}
			if cmd["uniqueId"] == "u-8" {
				http.Error(w, "this one fails", http.StatusInternalServerError)
				return
			}
			w.WriteHeader(http.StatusNoContent)
		}))
		defer service.Close()

		reqs := []string{
			`{"class": "App\\Jobs\\Classes\\UniquePropJob", "props": {"uniqueId": "u-7", "orderId": 7}, "via": "dispatch"}`,
			`{"class": "App\\Jobs\\Classes\\UniquePropJob", "props": {"uniqueId": "u-8", "orderId": 8}, "via": "dispatch"}`,
			`{"class": "App\\Jobs\\Classes\\UniqueMethodJob", "props": {"orderId": 9}, "via": "dispatch"}`,
		}
		for _, withClasses := range []bool{false, true} {
			prefix := testenv.Prefix(t)
			php := testenv.PHPEnv{Major: major, Redis: srv, Prefix: prefix, CacheDB: 2 + major, FailedDB: testenv.SQLite(t)}
			for i, d := range php.Dispatch(t, nil, reqs...) {
				if d.Dispatched == nil || !*d.Dispatched {
					t.Fatalf("PHP's dispatch() queued nothing for request %d", i)
				}
			}
			if locks := lockState(t, srv, prefix); len(locks) != 3 {
				t.Fatalf("PHP holds %d unique locks, want 3: %v", len(locks), locks)
			}
			mu.Lock()
			bodies = nil
			mu.Unlock()

			args := []string{"work", "--forward", service.URL, "--redis", "redis://" + srv.Addr + "/0", "--prefix", prefix,
				"--laravel-version", release, "--database", "null", "--tries", "1", "--stop-when-empty", "--sleep", "0", "--quiet"}
			if withClasses {
				args = append(args, "--classes", manifest)
			}
			var stdout, stderr bytes.Buffer
			if rc := cli.Main(context.Background(), args, cli.WithIO(nil, &stdout, &stderr)); rc != 0 {
				t.Fatalf("laraq work --forward: exit %d:\n%s", rc, stderr.String())
			}
			mu.Lock()
			got := bodies
			mu.Unlock()
			if len(got) != 3 {
				t.Fatalf("the service got %d jobs, want 3:\n%s", len(got), stderr.String())
			}
			for _, b := range got {
				switch {
				case withClasses && (b.ClassFacts == nil || b.ClassFacts.Class != b.Class || len(b.ClassFacts.Properties) == 0):
					t.Errorf("%s: no class facts in the body: %+v", b.Class, b.ClassFacts)
				case !withClasses && b.ClassFacts != nil:
					t.Errorf("%s: class facts without --classes", b.Class)
				}
			}

			locks := lockState(t, srv, prefix)
			hidden := major >= 11 // 11.39+ payloads name their lock; the peers' 11.x is 11.56
			switch {
			case withClasses || hidden:
				if len(locks) != 0 {
					t.Errorf("classes %v: locks left after the forwarder ran the jobs: %v\n%s", withClasses, locks, stderr.String())
				}
				for i, d := range php.Dispatch(t, nil, reqs...) {
					if d.Dispatched == nil || !*d.Dispatched {
						t.Errorf("classes %v: PHP's next dispatch of request %d was refused", withClasses, i)
					}
				}
			default:
				if len(locks) != 3 {
					t.Errorf("without --classes on %s the forwarder released locks it cannot name: %v", release, locks)
				}
				for i, d := range php.Dispatch(t, nil, reqs...) {
					if d.Dispatched == nil || *d.Dispatched {
						t.Errorf("without --classes PHP's next dispatch of request %d was accepted: the lock was not left", i)
					}
				}
			}
		}
	})
}
