package interop

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// dispatchSteps queues n ChainStep jobs with Laravel-identical payloads and returns their
// uuids.
func dispatchSteps(t testing.TB, client redis.UniversalClient, prefix, queue string, n int) map[string]bool {
	t.Helper()
	p, err := testkit.NewDispatcher(client, testkit.DispatchSetup{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	uuids := map[string]bool{}
	jobs := make([]any, 0, 500)
	flush := func() {
		if len(jobs) == 0 {
			return
		}
		msgs := make([]*laraq.Message, len(jobs))
		for i, j := range jobs {
			if msgs[i], err = p.Prepare(j, laraq.OnQueue(queue)); err != nil {
				t.Fatal(err)
			}
			uuids[msgs[i].UUID] = true
		}
		for _, m := range msgs {
			if err := p.Enqueue(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		}
		jobs = jobs[:0]
	}
	for i := range n {
		jobs = append(jobs, testkit.WChainStep{Step: i})
		if len(jobs) == cap(jobs) {
			flush()
		}
	}
	flush()
	if len(uuids) != n {
		t.Fatalf("%d uuids for %d jobs", len(uuids), n)
	}
	return uuids
}

func TestMixedFleetRunsEachJobOnce(t *testing.T) {
	testenv.NeedPHP(t)
	const total = 5000
	srv := testenv.RedisServer(t)
	client := srv.Client(t, 0)
	prefix := testenv.Prefix(t)
	queue := "fleet" + testenv.RandomName(3)
	uuids := dispatchSteps(t, client, prefix, queue, total)

	recFile := testkit.RecordFile(t)
	penv := testenv.PHPEnv{Redis: srv, Prefix: prefix, Record: recFile, RetryAfter: 90}
	var phpOut [2]string
	var wg sync.WaitGroup
	for i := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			phpOut[i] = testkit.RunWorker(t, penv, 120*time.Second, "--queue="+queue, "--stop-when-empty", "--sleep=0.05")
		}()
	}

	var mu sync.Mutex
	var goRan []string
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\ChainStep`, func(ctx context.Context, cmd *testkit.WChainStep, job *laraq.JobInfo) error {
		time.Sleep(time.Millisecond) // a job that does something, so PHP gets its share
		mu.Lock()
		goRan = append(goRan, job.UUID)
		mu.Unlock()
		return nil
	})
	c, err := testkit.NewWorker(client, testkit.Setup{
		Queues: []string{queue}, Prefix: prefix, Registry: reg, Concurrency: 16, StopWhenEmpty: true,
		Logger: testkit.QuietLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // let PHP boot
	if err := c.Run(context.Background()); !errors.Is(err, laraq.ErrQueueEmpty) {
		t.Fatalf("Run = %v", err)
	}
	wg.Wait()

	seen := map[string]string{}
	var dups []string
	for _, u := range goRan {
		if seen[u] != "" {
			dups = append(dups, u)
		}
		seen[u] = "go"
	}
	phpRan := 0
	for _, r := range testkit.ReadRecords(t, recFile) {
		if r.UUID == nil || r.Event != "handle" {
			continue
		}
		phpRan++
		if seen[*r.UUID] != "" {
			dups = append(dups, *r.UUID)
		}
		seen[*r.UUID] = "php"
	}
	t.Logf("Go ran %d jobs, the two PHP workers %d", len(goRan), phpRan)
	if len(dups) != 0 {
		t.Errorf("%d jobs ran twice, e.g. %s", len(dups), dups[0])
	}
	for u := range uuids {
		if seen[u] == "" {
			t.Errorf("job %s never ran", u)
			break
		}
	}
	if len(seen) != total || len(goRan) == 0 || phpRan == 0 {
		t.Errorf("ran %d distinct jobs (Go %d, PHP %d), want %d shared", len(seen), len(goRan), phpRan, total)
	}
	if strings.Contains(phpOut[0]+phpOut[1], "Failed:") {
		t.Errorf("PHP failures:\n%s\n%s", phpOut[0], phpOut[1])
	}
	if keys, _ := testenv.Keys(context.Background(), client, prefix); len(keys) != 0 {
		t.Errorf("keys left: %v", keys)
	}
}

// TestCrashWorkerChild is the worker process TestCrashLosesNothing kills; it does
// nothing unless started by that test.
func TestCrashWorkerChild(t *testing.T) {
	addr := os.Getenv("LARAQ_CRASH_REDIS")
	if addr == "" {
		return
	}
	client := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 20})
	done, err := os.OpenFile(os.Getenv("LARAQ_CRASH_DONE"), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\ChainStep`, func(ctx context.Context, cmd *testkit.WChainStep, job *laraq.JobInfo) error {
		time.Sleep(50 * time.Millisecond)
		_, err := fmt.Fprintf(done, "child %s\n", job.UUID)
		return err
	})
	c, err := testkit.NewWorker(client, testkit.Setup{
		Queues: []string{os.Getenv("LARAQ_CRASH_QUEUE")}, Prefix: os.Getenv("LARAQ_CRASH_PREFIX"), Registry: reg,
		Concurrency: 8, RetryAfter: 2 * time.Second, StopWhenEmpty: true, Tries: new(3),
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println("started")
	_ = c.Run(context.Background())
}

func TestCrashLosesNothing(t *testing.T) {
	const total = 300
	srv := testenv.RedisServer(t)
	client := srv.Client(t, 0)
	prefix := testenv.Prefix(t)
	queue := "crash" + testenv.RandomName(3)
	uuids := dispatchSteps(t, client, prefix, queue, total)
	doneFile := testkit.RecordFile(t)

	child := exec.Command(os.Args[0], "-test.run=^TestCrashWorkerChild$", "-test.count=1")
	child.Env = append(os.Environ(), "LARAQ_CRASH_REDIS="+srv.Addr, "LARAQ_CRASH_PREFIX="+prefix,
		"LARAQ_CRASH_QUEUE="+queue, "LARAQ_CRASH_DONE="+doneFile)
	stdout, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil || line != "started\n" {
		t.Fatalf("child: %q %v", line, err)
	}
	go io.Copy(io.Discard, stdout)
	time.Sleep(600 * time.Millisecond) // mid-run: 8 jobs in flight, most not yet taken
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = child.Wait()
	inFlight := client.ZCard(context.Background(), prefix+"queues:"+queue+":reserved").Val()
	if inFlight == 0 {
		t.Fatal("the crash left no job reserved; the test did not kill a busy worker")
	}

	// Another worker takes over; the jobs the crash left reserved come back after the
	// child's retry_after (2 s).
	var mu sync.Mutex
	var after []string
	var ran atomic.Int32
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\ChainStep`, func(ctx context.Context, cmd *testkit.WChainStep, job *laraq.JobInfo) error {
		mu.Lock()
		after = append(after, job.UUID)
		mu.Unlock()
		ran.Add(1)
		return nil
	})
	c, err := testkit.NewWorker(client, testkit.Setup{Queues: []string{queue}, Prefix: prefix, Registry: reg,
		Concurrency: 8, RetryAfter: 2 * time.Second, Sleep: 50 * time.Millisecond, Logger: testkit.QuietLogger(t),
		Tries: new(3)}) // the killed attempt counts, as with PHP: a crashed job needs a second try
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- c.Run(ctx) }()
	b, _ := os.ReadFile(doneFile)
	childDone := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if u, ok := strings.CutPrefix(l, "child "); ok {
			childDone[u] = true
		}
	}
	testkit.Eventually(t, 15*time.Second, "every unfinished job to run again", func() bool {
		mu.Lock()
		defer mu.Unlock()
		seen := map[string]bool{}
		for _, u := range after {
			seen[u] = true
		}
		for u := range uuids {
			if !seen[u] && !childDone[u] {
				return false
			}
		}
		return true
	})
	cancel()
	<-stopped
	twice := 0
	for _, u := range after {
		if childDone[u] {
			twice++ // finished by the child but killed before its ZREM: at-least-once
		}
	}
	t.Logf("child finished %d jobs, %d were reserved at the kill, the new worker ran %d (%d of them again)",
		len(childDone), inFlight, len(after), twice)
	if twice > int(inFlight) {
		t.Errorf("%d jobs ran again, but only %d were in flight", twice, inFlight)
	}
	// The killed worker leaves only its pop tickets, which expire.
	keys, _ := testenv.Keys(context.Background(), client, prefix)
	for _, k := range keys {
		ttl, err := client.TTL(context.Background(), k).Result()
		if !strings.Contains(k, ":laraq-pop:") || err != nil || ttl <= 0 {
			t.Errorf("key left: %s (ttl %v, %v)", k, ttl, err)
		}
	}
}

// proxy forwards TCP connections to Redis and can cut them all, as a network partition
// or a Redis restart does.
type proxy struct {
	ln     net.Listener
	target string
	mu     sync.Mutex
	conns  []net.Conn
	down   bool
}

func newProxy(t *testing.T, target string) *proxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target}
	t.Cleanup(func() { ln.Close(); p.cut() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			down := p.down
			p.mu.Unlock()
			if down {
				c.Close()
				continue
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { io.Copy(up, c); up.Close() }()
			go func() { io.Copy(c, up); c.Close() }()
		}
	}()
	return p
}

func (p *proxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *proxy) restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

func TestRedisOutageIsSurvived(t *testing.T) {
	const total = 400
	srv := testenv.RedisServer(t)
	direct := srv.Client(t, 0)
	prefix := testenv.Prefix(t)
	queue := "outage" + testenv.RandomName(3)
	uuids := dispatchSteps(t, direct, prefix, queue, total)

	px := newProxy(t, srv.Addr)
	client := redis.NewClient(&redis.Options{Addr: px.ln.Addr().String(), PoolSize: 10,
		DialTimeout: 200 * time.Millisecond, ReadTimeout: time.Second, MaxRetries: -1})
	t.Cleanup(func() { client.Close() })

	var mu sync.Mutex
	count := map[string]int{}
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\ChainStep`, func(ctx context.Context, cmd *testkit.WChainStep, job *laraq.JobInfo) error {
		time.Sleep(2 * time.Millisecond)
		mu.Lock()
		count[job.UUID]++
		mu.Unlock()
		return nil
	})
	logs := &testkit.SyncBuffer{}
	store := &testkit.MemStore{}
	// A pop whose reply the cut swallows has reserved its jobs all the same: they come
	// back after retry_after with that attempt counted, as with PHP, hence 3 tries.
	c, err := testkit.NewWorker(client, testkit.Setup{Queues: []string{queue}, Prefix: prefix, Registry: reg,
		Concurrency: 4, RetryAfter: 5 * time.Second, Sleep: 20 * time.Millisecond, Cache: laraq.CacheStore{Disabled: true},
		Tries: new(3), Failed: store, Logger: testkit.SlogTo(logs)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- c.Run(ctx) }()
	done := func() int { mu.Lock(); defer mu.Unlock(); return len(count) }
	testkit.Eventually(t, 10*time.Second, "some jobs", func() bool { return done() >= 50 })
	px.cut()
	time.Sleep(time.Second)
	select {
	case err := <-stopped:
		t.Fatalf("Run returned during the outage: %v", err)
	default:
	}
	px.restore()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("worker log:\n%s", logs.String())
		}
	})
	testkit.Eventually(t, 30*time.Second, "every job after the outage", func() bool { return done() == total })
	cancel()
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	for u := range uuids {
		if count[u] != 1 {
			t.Errorf("job %s ran %d times", u, count[u])
		}
	}
	if recs := store.All(); len(recs) != 0 {
		t.Errorf("%d jobs failed", len(recs))
	}
	if keys, _ := testenv.Keys(context.Background(), direct, prefix); len(keys) != 0 {
		t.Errorf("keys left: %v", keys)
	}
	if !strings.Contains(logs.String(), "failed; retrying") {
		t.Errorf("no retry logged:\n%s", logs.String())
	}
}
