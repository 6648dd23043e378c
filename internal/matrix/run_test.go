package matrix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// ranJob is one job a Go handler ran: what it decoded, and JobInfo.Unserialized.
type ranJob struct {
	info  *laraq.JobInfo
	cmd   any           // the typed command (a pointer), nil for string jobs
	whole *phpser.Value // Unserialized(), for app classes
	app   bool          // an application class: its Go twin mirrors every property
}

type matrixCollector struct {
	mu   sync.Mutex
	jobs []ranJob
	errs []string
}

func (c *matrixCollector) add(r ranJob) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.jobs = append(c.jobs, r)
}

func (c *matrixCollector) fail(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

// handleApp registers T, the twin of an application class, recording what its handler gets.
func handleApp[T laraq.Command](jobs *laraq.Jobs, c *matrixCollector) {
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[T]) error {
		whole, err := job.Unserialized()
		if err != nil {
			c.fail("%s: Unserialized: %v", job.Class, err)
		}
		cmd := job.Command
		c.add(ranJob{info: job.JobInfo, cmd: &cmd, whole: whole, app: true})
		return nil
	})
}

// handleFramework registers the twin T of a framework class PHP queues.
func handleFramework[T any](jobs *laraq.Jobs, class string, c *matrixCollector) {
	laraq.HandleClass(jobs, class, func(ctx context.Context, job *laraq.Job[T]) error {
		cmd := job.Command
		c.add(ranJob{info: job.JobInfo, cmd: &cmd})
		return nil
	})
}

func matrixRegistry(c *matrixCollector, major int) *laraq.Jobs {
	jobs := laraq.NewJobs()
	handleApp[mxPlain](jobs, c)
	handleApp[mxVisibility](jobs, c)
	handleApp[mxNested](jobs, c)
	handleApp[mxNumbers](jobs, c)
	handleApp[testkit.MxModel](jobs, c)
	handleApp[mxCarbon](jobs, c)
	handleApp[mxEnum](jobs, c)
	handleApp[testkit.MxChainStep](jobs, c)
	handleApp[mxReverse](jobs, c)
	handleApp[mxMeta](jobs, c)
	handleApp[mxNamed](jobs, c)
	handleApp[testkit.MxDefaults](jobs, c)
	handleApp[mxMetaDefaults](jobs, c)
	handleApp[mxMetaMethods](jobs, c)
	handleApp[mxRetryAfter](jobs, c)
	handleApp[mxRetryAfterMethod](jobs, c)
	handleApp[mxAttributeMeta](jobs, c)
	handleApp[mxTriesMethod](jobs, c)
	handleApp[mxMethodsOverride](jobs, c)
	handleApp[mxAttributeOver](jobs, c)
	handleApp[mxModels](jobs, c)
	handleApp[mxStub](jobs, c)
	if major == 8 {
		handleApp[mxBatched8](jobs, c)
	} else {
		handleApp[mxBatched](jobs, c)
	}
	handleApp[mxUnique](jobs, c)
	handleFramework[mxListener](jobs, `Illuminate\Events\CallQueuedListener`, c)
	handleFramework[mxNotification](jobs, `Illuminate\Notifications\SendQueuedNotifications`, c)
	handleFramework[mxMail](jobs, `Illuminate\Mail\SendQueuedMailable`, c)
	handleFramework[mxBroadcast](jobs, `Illuminate\Broadcasting\BroadcastEvent`, c)
	jobs.HandleFunc(`App\Jobs\StringJobs@deletes`, func(ctx context.Context, job *laraq.JobInfo) error {
		c.add(ranJob{info: job})
		return nil
	})
	return jobs
}

// allMajorShapes are capture shapes recorded on 8.83 only whose classes every major has.
var allMajorShapes = []string{"nested", "numbers", "model", "enum", "named", "reverse", "chain", "onqueue"}

// matrixRunRequests are the dispatch.php requests of every shape a release queues:
// capture/shapes.json's (but encrypted commands and missing models, which other tests
// cover), on every major whose classes allow it, and the metadata classes of
// jobs_matrix.php. It also returns how many jobs the chains among them add.
func matrixRunRequests(t *testing.T, major int) (reqs []string, chained int) {
	for _, s := range testenv.CaptureSpecs(t) {
		switch s.Shape {
		case "encrypted", "missing-models", "missing-kept":
			continue
		}
		if !slices.Contains(s.Majors, major) && !slices.Contains(allMajorShapes, s.Shape) {
			continue
		}
		var req bytes.Buffer
		if err := json.Compact(&req, s.Request); err != nil {
			t.Fatal(err)
		}
		var r struct {
			Chain    []json.RawMessage `json:"chain"`
			BusChain []json.RawMessage `json:"bus_chain"`
		}
		_ = json.Unmarshal(req.Bytes(), &r)
		chained += len(r.Chain) + max(0, len(r.BusChain)-1)
		reqs = append(reqs, req.String())
	}
	reqs = append(reqs,
		`{"class":"App\\Jobs\\Matrix\\TriesMethodJob","props":{"label":"t"}}`,
		`{"class":"App\\Jobs\\Matrix\\RetryAfterJob","props":{"label":"r","timeoutAt":{"@class":"Illuminate\\Support\\Carbon","date":"2100-01-01 00:00:00.000000","timezone_type":3,"timezone":"UTC"}}}`,
		`{"class":"App\\Jobs\\Matrix\\RetryAfterMethodJob","props":{"label":"m"}}`,
		`{"class":"App\\Jobs\\Matrix\\MethodsOverrideJob","props":{"label":"o"}}`,
		`{"class":"App\\Jobs\\Matrix\\AttributeOverJob","props":{"label":"at default"}}`,
		`{"class":"App\\Jobs\\Matrix\\AttributeOverJob","props":{"tries":4,"label":"set"}}`,
		// Some defaults changed, a null where the default is not, and trait properties set
		// by onQueue()/delay() on a SerializesModels class.
		`{"class":"App\\Jobs\\Matrix\\DefaultsJob","props":{"tries":5,"label":null,"\u0000*\u0000secret":"s","changed":[]},"queue":"emails","delay":5}`,
		// A chain of SerializesModels classes: Go continues it into classes whose defaults
		// the payload leaves out.
		`{"class":"App\\Jobs\\Matrix\\DefaultsJob","props":{"changed":"first"},"chain":[{"class":"App\\Jobs\\Matrix\\DefaultsJob","props":{"changed":"second","count":2}},{"class":"App\\Jobs\\Matrix\\MetaDefaultsJob","props":{"label":"third"}}]}`,
	)
	return reqs, chained + 2
}

// jobKey names a job by its uuid, or by its Redis id on 5.8 and 6.x, whose payloads
// have no uuid.
func jobKey(uuid, id string) string {
	if uuid == "" {
		return "id:" + id
	}
	return uuid
}

// TestMatrixPHPDispatchesGoRuns: on every major, the release dispatches every shape
// of job; a Go worker runs them all (and continues their chains), and for each the Go
// twin decoded by Handle, and JobInfo.Unserialized, must equal what the release's
// unserialize() gives for the same bytes: every property, class defaults included (a
// 9.4+ payload leaves them out), in PHP's order.
func TestMatrixPHPDispatchesGoRuns(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		matrixPHPDispatchesGoRuns(t, srv, major, "", testkit.PeerRelease(t, major))
	})
	// 13.4.0 has neither debounceOwner (13.6) nor uniqueLockOwner (13.24).
	t.Run("L13.4", func(t *testing.T) {
		t.Parallel()
		testenv.NeedPeerTree(t, 13, "13.4")
		matrixPHPDispatchesGoRuns(t, srv, 13, "13.4", testkit.MustRelease(t, "13.4.0"))
	})
}

func matrixPHPDispatchesGoRuns(t *testing.T, srv *testenv.Redis, major int, tree string, rel laraq.Release) {
	cacheDB := major // ShouldBeUnique locks of one run must not meet another's
	if tree != "" {
		cacheDB = 14
	}
	ctx := context.Background()
	prefix := testenv.Prefix(t)
	penv := testenv.PHPEnv{Major: major, Tree: tree, Redis: srv, Prefix: prefix, CacheDB: cacheDB, FailedDB: testenv.SQLite(t), Client: matrixClient(major, 1)}
	reqs, chained := matrixRunRequests(t, major)
	out := penv.Dispatch(t, matrixArgs(major), reqs...)
	pushed := map[string]string{} // uuid (the id before 7.x, which has no uuid) → payload
	for i, d := range out {
		all := d.Pushed
		if d.Pushed == nil {
			all = []testenv.Dispatched{d}
		}
		if len(all) == 0 {
			t.Fatalf("request %d queued nothing: %s", i, reqs[i])
		}
		for _, p := range all {
			env, err := payload.Parse([]byte(p.Payload))
			if err != nil {
				t.Fatalf("request %d: %v", i, err)
			}
			pushed[jobKey(env.UUID, env.ID)] = p.Payload
		}
	}

	col := &matrixCollector{}
	store := &testkit.MemStore{}
	w, err := testkit.NewWorker(srv.Client(t, 0), testkit.Setup{
		Prefix: prefix, Release: rel, Registry: matrixRegistry(col, major), Failed: store,
		Queues: []string{"default", "emails", "listeners"}, Tries: new(0), StopWhenEmpty: true,
		Sleep: 10 * time.Millisecond, Now: fixedClock(time.Minute), Cache: laraq.CacheStore{Disabled: true},
		Logger: testkit.QuietLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
		t.Fatalf("Run = %v", err)
	}
	if recs := store.All(); len(recs) != 0 {
		t.Fatalf("failed jobs: %+v", recs)
	}
	for _, e := range col.errs {
		t.Error(e)
	}
	seen := map[string]bool{}
	for _, j := range col.jobs {
		key := jobKey(j.info.UUID, j.info.ID)
		if seen[key] {
			t.Errorf("%s %s ran twice", j.info.Class, key)
		}
		seen[key] = true
	}
	for uuid, p := range pushed {
		if !seen[uuid] {
			t.Errorf("not run by Go: %s", p)
		}
	}
	if want := len(pushed) + chained; len(col.jobs) != want {
		t.Errorf("Go ran %d jobs, want %d (%d queued by PHP, %d by chains)", len(col.jobs), want, len(pushed), chained)
	}

	raws := make([][]byte, len(col.jobs))
	for i, j := range col.jobs {
		raws[i] = j.info.Raw
	}
	views := unserializeInPHP(t, penv, raws)
	classes := map[string]bool{}
	for i, j := range col.jobs {
		v := views[i]
		classes[j.info.Class] = true
		if v.Error != "" {
			t.Errorf("%s: PHP: %s", j.info.Class, v.Error)
			continue
		}
		if j.cmd == nil { // a string job
			var data any
			dec := json.NewDecoder(bytes.NewReader(j.info.Payload.Data))
			dec.UseNumber()
			if err := dec.Decode(&data); err != nil {
				t.Fatal(err)
			}
			g, _ := json.Marshal(data)
			p, _ := json.Marshal(v.Data.ToAny())
			if v.Job != j.info.Class || string(g) != string(p) {
				t.Errorf("string job %s: Go data %s, PHP %s %s", j.info.Class, g, v.Job, p)
			}
			continue
		}
		if v.Class != j.info.Class {
			t.Errorf("Go ran %s, PHP unserializes a %s", j.info.Class, v.Class)
			continue
		}
		var diffs []string
		if j.app {
			diffs = append(testkit.CompareRecord(j.info.Class, v.Props, j.cmd), compareUnserialized(j.info.Class, v.Props, j.whole)...)
		} else {
			diffs = compareGoFields(j.info.Class, v.Props, j.cmd)
		}
		for _, d := range diffs {
			t.Errorf("%s: %s", rel, d)
		}
	}
	// The comparison saw the classes that matter here, and the defaults themselves.
	for _, class := range []string{`App\Jobs\Matrix\DefaultsJob`, `App\Jobs\Matrix\ModelsJob`, `App\Jobs\Matrix\MetaDefaultsJob`,
		`Illuminate\Events\CallQueuedListener`, `Illuminate\Notifications\SendQueuedNotifications`} {
		if !classes[class] {
			t.Errorf("no %s ran", class)
		}
	}
	for _, j := range col.jobs {
		if d, ok := j.cmd.(*testkit.MxDefaults); ok && d.Changed == "yes" {
			if d.Tries != 3 || d.Label != any("default") || d.Secret != "keep" || fmt.Sprint(d.Hidden) != "[1]" {
				t.Errorf("DefaultsJob decoded without its class defaults: %+v", d)
			}
			if omitted := !strings.Contains(j.info.Payload.Command, `"tries"`); omitted != rel.AtLeast(9, 4, 0) {
				t.Errorf("%s wrote tries = 3 in the payload: %v, want %v", rel, !omitted, !rel.AtLeast(9, 4, 0))
			}
		}
	}
}
