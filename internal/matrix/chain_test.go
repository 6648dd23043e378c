package matrix

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
)

// matrixChainRegistry handles every step of the matrix chains, declaring their Go types.
func matrixChainRegistry() *laraq.Jobs {
	jobs := laraq.NewJobs()
	ok := func(context.Context, *laraq.JobInfo) error { return nil }
	laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[testkit.MxDefaults]) error { return ok(ctx, j.JobInfo) })
	laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[mxMetaDefaults]) error { return ok(ctx, j.JobInfo) })
	laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[testkit.MxChainStep]) error { return ok(ctx, j.JobInfo) })
	laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[mxStub]) error { return ok(ctx, j.JobInfo) })
	laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[mxMethodsOverride]) error { return ok(ctx, j.JobInfo) })
	return jobs
}

// matrixChains are chains as each major's application dispatches them: ->chain() with
// allOnQueue(), and Bus::chain() on 9+ (8.83's Debian packages have no facade root;
// 5.8-7.x have no Bus::chain),
// through classes with and without SerializesModels, whose class defaults (tries = 3,
// retryUntil(), tries()/backoff() ...) the next job's metadata must come from.
func matrixChains(major int) []string {
	steps := `{"class":"App\\Jobs\\Matrix\\DefaultsJob","props":{"changed":"2","count":2}},` +
		`{"class":"App\\Jobs\\Matrix\\MetaDefaultsJob","props":{"label":"3"},"queue":"own","delay":5},` +
		`{"class":"App\\Jobs\\Matrix\\MethodsOverrideJob","props":{"label":"4"}},` +
		`{"class":"App\\Jobs\\ChainStep","props":{"step":5}}`
	if major >= 11 {
		steps += `,{"class":"App\\Jobs\\Matrix\\StubJob","args":{"user":{"@model":"App\\Models\\User","id":2},"note":"6"}}`
	}
	chains := []string{`{"class":"App\\Jobs\\Matrix\\DefaultsJob","props":{"changed":"1"},"chain":[` + steps + `],"chain_queue":"chainq"}`}
	if major >= 9 {
		chains = append(chains, `{"bus_chain":[{"class":"App\\Jobs\\Matrix\\DefaultsJob","props":{"changed":"1"}},`+steps+`],"queue":"chainq"}`)
	}
	return chains
}

// TestMatrixChainNextJobIsLaravels: on every major, each job of a chain is run once by
// the release's Worker and once by a Go worker from the same bytes and clock, and both
// must leave the same next job, byte for byte (uuid and id aside): its serialized form
// (defaults left out where SerializesModels leaves them out, the release's trait
// properties in its order) and its envelope (metadata from the class defaults and
// methods of the Go type declared for it).
func TestMatrixChainNextJobIsLaravels(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		rel := testkit.PeerRelease(t, major)
		now := matrixNow.Unix() // retryUntil() of the Go twins counts from it
		if !testenv.BusChain.Has(major) {
			t.Logf("Bus::chain case skipped: %s", testenv.BusChain.SkipMessage(major))
		}
		for ci, req := range matrixChains(major) {
			d := testenv.PHPEnv{Major: major, Redis: srv, Prefix: testenv.Prefix(t), CacheDB: major}.Dispatch(t, matrixArgs(major), req)[0]
			p, queue := []byte(d.Payload), d.Queue
			steps := 0
			for {
				next := compareContinuation(t, srv, major, rel, p, queue, now)
				steps++
				if next == nil {
					break
				}
				// Pushed to the ready list for the next run, delayed or not.
				p, queue = next.payload, next.queue
			}
			if want := 5 + min(1, max(0, major-10)); steps != want {
				t.Errorf("chain %d ran %d steps, want %d", ci, steps, want)
			}
		}
	})
}

type nextJob struct {
	payload []byte
	queue   string
}

// compareContinuation runs p from queue once under the release's Worker and once under a
// Go worker (two prefixes, one clock) and requires the same Redis content afterwards. It
// returns the next job PHP dispatched, or nil when there is none.
func compareContinuation(t *testing.T, srv *testenv.Redis, major int, rel laraq.Release, p []byte, queue string, now int64) *nextJob {
	t.Helper()
	ctx := context.Background()
	phpPrefix, goPrefix := testenv.Prefix(t), testenv.Prefix(t)
	for _, prefix := range []string{phpPrefix, goPrefix} {
		r, _ := rdb.New(srv.Client(t, 0), rdb.Options{Prefix: prefix})
		if err := r.Push(ctx, queue, p); err != nil {
			t.Fatal(err)
		}
	}
	testkit.RunWorker(t, testenv.PHPEnv{Major: major, Redis: srv, Prefix: phpPrefix, CacheDB: major, Record: testkit.RecordFile(t)}, 30*time.Second,
		"--max-jobs=1", "--stop-when-empty", "--sleep=0", "--queue="+queue, fmt.Sprint("--now=", now))
	var log bytes.Buffer
	w, err := testkit.NewWorker(srv.Client(t, 0), testkit.Setup{
		Prefix: goPrefix, Release: rel, Queues: []string{queue}, Registry: matrixChainRegistry(), Failed: &testkit.MemStore{},
		Now: func() time.Time { return time.Unix(now, 0) }, MaxJobs: 1, StopWhenEmpty: true,
		Sleep: -1, MigrateInterval: -1, Cache: laraq.CacheStore{Disabled: true}, Logger: testkit.SlogTo(&log),
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); !errors.Is(err, laraq.ErrMaxJobs) {
		t.Fatalf("Go worker: %v\n%s", err, log.String())
	}
	if strings.Contains(log.String(), "no Go type") {
		t.Errorf("a step without a declared type:\n%s", log.String())
	}
	php, gos := testkit.Queued(t, ctx, srv, phpPrefix, now), testkit.Queued(t, ctx, srv, goPrefix, now)
	if testkit.Describe(php) != testkit.Describe(gos) {
		var where strings.Builder
		for k, a := range php {
			if b, ok := gos[k]; ok && a != b {
				fmt.Fprintf(&where, "  %s: %s\n", k, testkit.FirstDifference(a, b))
			}
		}
		t.Fatalf("%s: after running %s from the same bytes:\nPHP left\n%sGo left\n%s%s", rel, queue, testkit.Describe(php), testkit.Describe(gos), where.String())
	}
	// The one job left is the next of the chain.
	keys, err := testenv.Keys(ctx, srv.Client(t, 0), phpPrefix)
	if err != nil {
		t.Fatal(err)
	}
	c := srv.Client(t, 0)
	for _, k := range keys {
		name := strings.TrimPrefix(k, phpPrefix+"queues:")
		switch {
		case strings.HasSuffix(k, ":notify"):
		case strings.HasSuffix(k, ":delayed"):
			m := c.ZRange(ctx, k, 0, -1).Val()
			return &nextJob{[]byte(m[0]), strings.TrimSuffix(name, ":delayed")}
		default:
			if items := c.LRange(ctx, k, 0, -1).Val(); len(items) == 1 {
				return &nextJob{[]byte(items[0]), name}
			}
		}
	}
	return nil
}

// TestChainIntoUndeclaredClassSaysWhatMayBeMissing: continuing a chain into a class
// without a Go type, a worker cannot know the class defaults a 9.4+ payload leaves out;
// it says which metadata properties the next job's payload lacks, once per class.
func TestChainIntoUndeclaredClassSaysWhatMayBeMissing(t *testing.T) {
	e := testkit.NewEnv(t)
	rel := testkit.MustRelease(t, "13.26.1")
	cfg := testkit.DispatchSetup{Release: rel, Now: fixedClock(0)}
	d, err := testkit.NewDispatcher(e.Client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		m, err := d.Prepare(testkit.MxChainStep{Step: int64(1)}, laraq.Chain(testkit.MxDefaults{Changed: "x"}))
		if err != nil {
			t.Fatal(err)
		}
		e.Push("default", m.Payload)
	}
	log := &testkit.SyncBuffer{}
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[testkit.MxChainStep]) error { return nil })
	jobs.HandleFunc(`App\Jobs\Matrix\DefaultsJob`, func(ctx context.Context, j *laraq.JobInfo) error { return nil })
	s := e.Config(jobs)
	s.Release, s.StopWhenEmpty, s.Logger = rel, true, testkit.SlogTo(log)
	e.RunToEnd(e.Consumer(s))
	out := log.String()
	if n := strings.Count(out, "has no Go type"); n != 1 {
		t.Fatalf("%d warnings, want 1 for two chains into the class:\n%s", n, out)
	}
	if !strings.Contains(out, `next=App\Jobs\Matrix\DefaultsJob`) || !strings.Contains(out, "absent=tries,maxExceptions,backoff,timeout,failOnTimeout,retryUntil,deleteWhenMissingModels") {
		t.Errorf("the warning does not say what may be missing:\n%s", out)
	}

	// Declared, the same chain needs no warning.
	log = &testkit.SyncBuffer{}
	jobs = laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[testkit.MxChainStep]) error { return nil })
	laraq.Declare[testkit.MxDefaults](jobs)
	jobs.HandleFunc(`App\Jobs\Matrix\DefaultsJob`, func(ctx context.Context, j *laraq.JobInfo) error { return nil })
	m, err := d.Prepare(testkit.MxChainStep{Step: int64(1)}, laraq.Chain(testkit.MxDefaults{Changed: "x"}))
	if err != nil {
		t.Fatal(err)
	}
	e.Push("default", m.Payload)
	s.Registry, s.Logger = jobs, testkit.SlogTo(log)
	e.RunToEnd(e.Consumer(s))
	if strings.Contains(log.String(), "has no Go type") {
		t.Errorf("warned about a declared class:\n%s", log.String())
	}
}
