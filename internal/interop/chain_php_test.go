package interop

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
)

// Go twins of testdata/php/jobs_parity.php.
type goStep struct {
	Step    int64 `php:"step"`
	Tries   any   `php:"tries"`
	Backoff any   `php:"backoff"`
	Timeout any   `php:"timeout"`
	laraq.Queueable
}

type parityChainStep struct {
	Step          int64 `php:"step"`
	MaxExceptions any   `php:"maxExceptions"`
	FailOnTimeout any   `php:"failOnTimeout"`
	RetryUntil    any   `php:"retryUntil"`
	Secret        any   `php:"secret,protected"`
	Hidden        any   `php:"hidden,private"`
	laraq.Queueable
}

// chainRequest dispatches a 3-step chain through Laravel's Bus: GoStep 1, then
// ParityChainStep 2 on its own queue "other" with a 5 s delay and a retryUntil date,
// then GoStep 3, which gets the chain's queue "chainq"; the chain's connection is redis.
// allOnQueue and allOnConnection set the first job's own queue and connection too.
const chainRequest = `{"class":"App\\Jobs\\GoStep","props":{"step":1},` +
	`"chain":[{"class":"App\\Jobs\\ParityChainStep","props":{"step":2,"retryUntil":{"@class":"Illuminate\\Support\\Carbon","date":"2023-11-15 00:00:00.000000","timezone_type":3,"timezone":"UTC"}},"queue":"other","delay":5},` +
	`{"class":"App\\Jobs\\GoStep","props":{"step":3}}],"chain_queue":"chainq","chain_connection":"redis"}`

// stepRecord is what a Go handler saw.
type stepRecord struct {
	class        string
	step         int64
	queue        string
	attempt      int
	chained      int
	chainQueue   string
	chainConnSet bool
}

type stepLog struct {
	mu  sync.Mutex
	all []stepRecord
}

func (l *stepLog) add(r stepRecord) {
	l.mu.Lock()
	l.all = append(l.all, r)
	l.mu.Unlock()
}

func (l *stepLog) list() []stepRecord {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]stepRecord(nil), l.all...)
}

func chainRegistry(log *stepLog, outcome error) *laraq.Jobs {
	reg := laraq.NewJobs()
	strOf := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	testkit.Register(reg, `App\Jobs\GoStep`, func(ctx context.Context, cmd *goStep, job *laraq.JobInfo) error {
		log.add(stepRecord{`App\Jobs\GoStep`, cmd.Step, job.Queue, job.Attempt, len(cmd.Chained), strOf(cmd.ChainQueue), cmd.ChainConnection != nil})
		return outcome
	})
	testkit.Register(reg, `App\Jobs\ParityChainStep`, func(ctx context.Context, cmd *parityChainStep, job *laraq.JobInfo) error {
		log.add(stepRecord{`App\Jobs\ParityChainStep`, cmd.Step, job.Queue, job.Attempt, len(cmd.Chained), strOf(cmd.ChainQueue), cmd.ChainConnection != nil})
		return outcome
	})
	reg.HandleFunc(`App\Jobs\DeletingStep`, func(ctx context.Context, job *laraq.JobInfo) error { return laraq.Delete() })
	return reg
}

// runGoOnce runs one job of queues with the clock at now.
func runGoOnce(t *testing.T, srv *testenv.Redis, prefix string, queues []string, now int64, reg *laraq.Jobs) {
	t.Helper()
	c, err := testkit.NewWorker(srv.Client(t, 0), testkit.Setup{
		Prefix: prefix, Queues: queues, Registry: reg, Failed: &testkit.MemStore{},
		Now: func() time.Time { return time.Unix(now, 0) }, MaxJobs: 1, StopWhenEmpty: true,
		Sleep: -1, MigrateInterval: -1, Cache: laraq.CacheStore{Disabled: true}, Logger: testkit.QuietLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Run(ctx); !errors.Is(err, laraq.ErrMaxJobs) {
		t.Fatalf("Go worker: %v", err)
	}
}

// compareNextDispatch runs the job p from queue once under Laravel's worker and once
// under the Go consumer (clocks frozen at now, two prefixes), and requires the two to
// leave the same Redis content, the next job of the chain byte for byte (uuid and id
// aside). It returns that content.
func compareNextDispatch(t *testing.T, srv *testenv.Redis, p []byte, queue string, now int64, goOutcome error) map[string]string {
	t.Helper()
	ctx := context.Background()
	phpPrefix, goPrefix := testenv.Prefix(t), testenv.Prefix(t)
	for _, prefix := range []string{phpPrefix, goPrefix} {
		r, _ := rdb.New(srv.Client(t, 0), rdb.Options{Prefix: prefix})
		if err := r.Push(ctx, queue, p); err != nil {
			t.Fatal(err)
		}
	}
	testkit.RunWorker(t, testenv.PHPEnv{Redis: srv, Prefix: phpPrefix, Record: testkit.RecordFile(t)}, 30*time.Second,
		"--max-jobs=1", "--stop-when-empty", "--sleep=0", "--queue="+queue, fmt.Sprint("--now=", now))
	runGoOnce(t, srv, goPrefix, []string{queue}, now, chainRegistry(&stepLog{}, goOutcome))
	php, gos := testkit.Queued(t, ctx, srv, phpPrefix, now), testkit.Queued(t, ctx, srv, goPrefix, now)
	if testkit.Describe(php) != testkit.Describe(gos) {
		var where strings.Builder
		for k, a := range php {
			if b, ok := gos[k]; ok && a != b {
				fmt.Fprintf(&where, "  %s: %s\n", k, testkit.FirstDifference(a, b))
			}
		}
		t.Fatalf("after running %s from the same bytes:\nPHP left\n%sGo left\n%s%s", queue, testkit.Describe(php), testkit.Describe(gos), where.String())
	}
	if len(php) == 0 {
		t.Fatal("no next job was dispatched")
	}
	return php
}

func TestChainNextJobIsLaravels(t *testing.T) {
	testenv.NeedPHP(t)
	srv := testenv.RedisServer(t)
	t0 := int64(1_700_000_000)
	prefix := testenv.Prefix(t)
	d := testkit.PHPDispatch(t, testenv.PHPEnv{Redis: srv, Prefix: prefix}, []string{fmt.Sprint("--now=", t0)}, chainRequest)[0]
	step1 := []byte(d.Payload)

	// Step 1 → step 2: own queue and delay, a retryUntil date, protected and private
	// properties; the chain's queue and connection are carried along.
	if d.Queue != "chainq" {
		t.Fatalf("allOnQueue sends the first job to the chain's queue too; it went to %s", d.Queue)
	}
	after1 := compareNextDispatch(t, srv, step1, "chainq", t0+10, nil)
	step2, ok := after1["queues:other:delayed(now+5)"]
	if !ok || !strings.Contains(step2, `"retryUntil":1700006400`) || !strings.Contains(step2, `"maxExceptions":2`) ||
		!strings.Contains(step2, `"failOnTimeout":true`) || !strings.Contains(step2, `s:10:\"chainQueue\";s:6:\"chainq\";`) {
		t.Fatalf("step 2 is not what the chain asked for:\n%s", testkit.Describe(after1))
	}
	// Step 2 → step 3: no queue of its own, so the chain's; the last one carries an
	// empty chain.
	raw2 := restoreIDs(step2)
	after2 := compareNextDispatch(t, srv, raw2, "other", t0+20, nil)
	step3, ok := after2["queues:chainq[0]"]
	if !ok || !strings.Contains(step3, `s:7:\"chained\";a:0:{}`) || !strings.Contains(step3, `"backoff":"2,4"`) {
		t.Fatalf("step 3 is not what the chain asked for:\n%s", testkit.Describe(after2))
	}
	// A handler that deletes its job still continues the chain (CallQueuedHandler checks
	// only "released" and "failed").
	del := testkit.PHPDispatch(t, testenv.PHPEnv{Redis: srv, Prefix: prefix}, []string{fmt.Sprint("--now=", t0)},
		`{"class":"App\\Jobs\\DeletingStep","props":{"step":1},"queue":"deleting","chain":[{"class":"App\\Jobs\\GoStep","props":{"step":2}}]}`)[0]
	afterDel := compareNextDispatch(t, srv, []byte(del.Payload), "deleting", t0+30, nil)
	if _, ok := afterDel["queues:default[0]"]; !ok {
		t.Fatalf("delete() did not continue the chain:\n%s", testkit.Describe(afterDel))
	}
}

// restoreIDs gives an anonymous payload a uuid and id again, so it can run.
func restoreIDs(p string) []byte {
	p = strings.Replace(p, `"uuid":"<uuid>"`, `"uuid":"`+payload.NewUUID()+`"`, 1)
	return []byte(strings.Replace(p, `"id":"<id>"`, `"id":"`+payload.NewID()+`"`, 1))
}

// TestChainMixedFleet runs a chain across both worlds: Go runs step 1, Laravel's worker
// step 2 (which it dispatched from Go's push), Go step 3 (dispatched by PHP).
func TestChainMixedFleet(t *testing.T) {
	testenv.NeedPHP(t)
	srv := testenv.RedisServer(t)
	ctx := context.Background()
	t0 := int64(1_700_000_000)
	prefix := testenv.Prefix(t)
	records := testkit.RecordFile(t)
	penv := testenv.PHPEnv{Redis: srv, Prefix: prefix, Record: records}
	testkit.PHPDispatch(t, penv, []string{fmt.Sprint("--now=", t0)}, chainRequest)

	log := &stepLog{}
	reg := chainRegistry(log, nil)
	runGoOnce(t, srv, prefix, []string{"chainq"}, t0, reg)
	testkit.RunWorker(t, penv, 30*time.Second, "--max-jobs=1", "--stop-when-empty", "--sleep=0", "--queue=other", fmt.Sprint("--now=", t0+10))
	runGoOnce(t, srv, prefix, []string{"chainq"}, t0+20, reg)

	got := log.list()
	want := []stepRecord{
		{`App\Jobs\GoStep`, 1, "chainq", 1, 2, "chainq", true},
		{`App\Jobs\GoStep`, 3, "chainq", 1, 0, "chainq", true},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Go ran %+v\nwant %+v", got, want)
	}
	recs := testkit.ReadRecords(t, records)
	if len(recs) != 1 || recs[0].Class != `App\Jobs\ParityChainStep` || recs[0].Queue != "other" || recs[0].Attempts != 1 {
		t.Fatalf("PHP ran %+v", recs)
	}
	var chained, step string
	for _, p := range recs[0].Props {
		switch p.K {
		case "chained":
			for _, it := range p.V.Items {
				chained += it.V.Text()
			}
		case "step":
			step = p.V.Text()
		}
	}
	if step != "2" || !strings.HasPrefix(chained, `O:15:"App\Jobs\GoStep":`) {
		t.Errorf("PHP's step 2 got step %s, chained %s", step, chained)
	}
	if left := testkit.Queued(t, ctx, srv, prefix, t0+20); len(left) != 0 {
		t.Errorf("left in Redis:\n%s", testkit.Describe(left))
	}
}
