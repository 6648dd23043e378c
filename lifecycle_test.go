package laraq_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/redis/go-redis/v9"
)

func TestTimeouts(t *testing.T) {
	t.Parallel()
	type tc struct {
		name         string
		honour       bool // the handler returns when its context ends
		mod          func(*payload.ObjectJob)
		tries        int
		releases     bool
		wantReserved bool
		wantDelayed  bool
		wantFailed   bool
		wantExcCount string
	}
	cases := []tc{
		{name: "stays reserved like PHP", honour: true, tries: 3, wantReserved: true},
		{name: "stays reserved when the handler ignores its context", honour: false, tries: 3, wantReserved: true},
		{name: "last try fails", honour: true, tries: 1, wantFailed: true},
		{name: "failOnTimeout fails", honour: true, tries: 3, wantFailed: true,
			mod: func(j *payload.ObjectJob) { j.FailOnTimeout = true }},
		{name: "TimeoutReleases releases", honour: true, tries: 3, releases: true, wantDelayed: true},
		{name: "counts toward maxExceptions", honour: true, tries: 0, wantReserved: true, wantExcCount: "1",
			mod: func(j *payload.ObjectJob) { j.MaxExceptions = new(int64(5)) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := testkit.NewEnv(t)
			reg := laraq.NewJobs()
			var deadlineSeen atomic.Bool
			reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
				if d, ok := ctx.Deadline(); ok && time.Until(d) <= time.Second {
					deadlineSeen.Store(true)
				}
				if c.honour {
					<-ctx.Done()
					return ctx.Err()
				}
				time.Sleep(2500 * time.Millisecond)
				return nil
			})
			cfg := e.Config(reg)
			cfg.Tries = new(c.tries)
			cfg.TimeoutReleases = c.releases
			cfg.Backoff = []int{60}
			cfg.StopWhenEmpty = true
			ev := &events{}
			cfg.OnEvent = ev.add
			mod := func(j *payload.ObjectJob) {
				j.Timeout = new(int64(1))
				if c.mod != nil {
					c.mod(j)
				}
			}
			p := testkit.Job(t, testkit.SendInvoice{}, mod)
			env, _ := payload.Parse(p)
			e.Push("default", p)
			e.RunToEnd(e.Consumer(cfg))
			if !deadlineSeen.Load() {
				t.Error("handler context had no deadline from the payload timeout")
			}
			if ev.count(laraq.EventTimedOut) != 1 {
				t.Errorf("events %v", ev.kinds())
			}
			if got := len(e.ZSet("queues:default:reserved")) == 1; got != c.wantReserved {
				t.Errorf("reserved: %v", e.ZSet("queues:default:reserved"))
			}
			if got := len(e.ZSet("queues:default:delayed")) == 1; got != c.wantDelayed {
				t.Errorf("delayed: %v", e.ZSet("queues:default:delayed"))
			}
			recs := e.Store.All()
			if got := len(recs) == 1; got != c.wantFailed {
				t.Errorf("records: %+v", recs)
			}
			if c.wantFailed && !strings.HasPrefix(recs[0].Exception, `Illuminate\Queue\MaxAttemptsExceededException: `+maxAttemptsMsg) {
				t.Errorf("exception %q", recs[0].Exception)
			}
			if c.wantExcCount != "" {
				if v := e.Client.Get(e.Ctx, e.Prefix+"job-exceptions:"+env.UUID).Val(); v != c.wantExcCount {
					t.Errorf("exception counter %q", v)
				}
			}
		})
	}
}

func TestTimedOutJobComesBackAndFailsAsAlreadyExceeded(t *testing.T) {
	t.Parallel()
	e := testkit.NewEnv(t)
	runs := 0
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
		runs++
		<-ctx.Done()
		return ctx.Err()
	})
	cfg := e.Config(reg)
	cfg.Tries = new(2)
	cfg.StopWhenEmpty = true
	cfg.RetryAfter = 30 * time.Second
	e.Push("default", testkit.Job(t, testkit.SendInvoice{}, func(j *payload.ObjectJob) { j.Timeout = new(int64(1)) }))
	e.RunToEnd(e.Consumer(cfg)) // attempt 1 times out, stays reserved
	e.Clock.Add(31 * time.Second)
	e.RunToEnd(e.Consumer(cfg)) // migrated back; attempt 2 times out: last try, failed
	if runs != 2 {
		t.Fatalf("runs %d", runs)
	}
	if recs := e.Store.All(); len(recs) != 1 || attemptsOf(t, recs[0].Payload) != 1 {
		t.Fatalf("records %+v", recs)
	}
	if k := e.Keys(); len(k) != 0 {
		t.Errorf("keys %v", k)
	}
}

func TestRestartSignalStopsAfterInFlightJobs(t *testing.T) {
	t.Parallel()
	e := testkit.NewEnv(t)
	started := make(chan struct{})
	release := make(chan struct{})
	var finished atomic.Bool
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
		close(started)
		<-release
		finished.Store(true)
		return nil
	})
	cfg := e.Config(reg)
	cfg.SignalInterval = 10 * time.Millisecond
	// A restart signal written before the worker started is the reference, not a restart.
	if err := e.RDB.Cache().SignalRestart(e.Ctx, 1); err != nil {
		t.Fatal(err)
	}
	e.Push("default", testkit.Job(t, testkit.SendInvoice{}, nil))
	c := e.Consumer(cfg)
	stop, done := e.Run(c)
	defer stop()
	<-started
	if err := e.RDB.Cache().SignalRestart(e.Ctx, 2); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
		t.Fatalf("Run returned %v with a job in flight", stop())
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	select {
	case <-done:
		if err := stop(); !errors.Is(err, laraq.ErrRestart) || !finished.Load() {
			t.Fatalf("Run = %v, finished %v", err, finished.Load())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no restart")
	}
	if k := e.Keys(); fmt.Sprint(k) != "[illuminate:queue:restart]" {
		t.Errorf("keys %v", k)
	}
}

func TestMaxJobsTakesNoMore(t *testing.T) {
	t.Parallel()
	e := testkit.NewEnv(t)
	var n atomic.Int32
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { n.Add(1); return nil })
	cfg := e.Config(reg)
	cfg.Concurrency = 4
	cfg.MaxJobs = 2
	for i := range 5 {
		e.Push("default", testkit.Job(t, testkit.SendInvoice{InvoiceID: int64(i)}, nil))
	}
	if err := e.RunToEnd(e.Consumer(cfg)); !errors.Is(err, laraq.ErrMaxJobs) {
		t.Fatalf("Run = %v", err)
	}
	if n.Load() != 2 || len(e.List("queues:default")) != 3 || len(e.ZSet("queues:default:reserved")) != 0 {
		t.Fatalf("ran %d, ready %d", n.Load(), len(e.List("queues:default")))
	}
}

func TestMaxTime(t *testing.T) {
	t.Parallel()
	e := testkit.NewEnv(t)
	cfg := e.Config(laraq.NewJobs())
	cfg.MaxTime = time.Minute
	c := e.Consumer(cfg)
	go func() {
		time.Sleep(50 * time.Millisecond)
		e.Clock.Add(time.Minute)
	}()
	if err := e.RunToEnd(c); !errors.Is(err, laraq.ErrMaxTime) {
		t.Fatalf("Run = %v", err)
	}
}

func TestPriorityOrder(t *testing.T) {
	t.Parallel()
	e := testkit.NewEnv(t)
	var order []string
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
		order = append(order, j.Queue)
		return nil
	})
	cfg := e.Config(reg)
	cfg.Queues = []string{"high", "low"}
	cfg.StopWhenEmpty = true
	e.Push("low", testkit.Job(t, testkit.SendInvoice{}, nil), testkit.Job(t, testkit.SendInvoice{}, nil))
	e.Push("high", testkit.Job(t, testkit.SendInvoice{}, nil), testkit.Job(t, testkit.SendInvoice{}, nil))
	e.RunToEnd(e.Consumer(cfg))
	if fmt.Sprint(order) != "[high high low low]" {
		t.Errorf("order %v", order)
	}
}

func TestPauseFlagsAndPauseMethod(t *testing.T) {
	t.Parallel()
	e := testkit.NewEnv(t)
	var mu sync.Mutex
	var got []string
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
		mu.Lock()
		got = append(got, j.Queue)
		mu.Unlock()
		return nil
	})
	count := func() int { mu.Lock(); defer mu.Unlock(); return len(got) }
	// php artisan queue:pause redis:high (Laravel 12.40+)
	if err := e.RDB.Cache().Pause(e.Ctx, "redis", "high"); err != nil {
		t.Fatal(err)
	}
	cfg := e.Config(reg)
	cfg.Queues = []string{"high", "low"}
	cfg.SignalInterval = 10 * time.Millisecond
	e.Push("high", testkit.Job(t, testkit.SendInvoice{}, nil))
	e.Push("low", testkit.Job(t, testkit.SendInvoice{}, nil))
	c := e.Consumer(cfg)
	stop, _ := e.Run(c)
	defer stop()
	testkit.Eventually(t, 5*time.Second, "low job", func() bool { return count() == 1 })
	time.Sleep(50 * time.Millisecond)
	if count() != 1 || got[0] != "low" {
		t.Fatalf("got %v while high is paused", got)
	}

	c.Pause()
	if err := e.RDB.Cache().Resume(e.Ctx, "redis", "high"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if count() != 1 || !c.Paused() {
		t.Fatalf("got %v while the worker is paused", got)
	}
	c.Resume()
	testkit.Eventually(t, 5*time.Second, "high job after resume", func() bool { return count() == 2 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestConcurrencyBoundsReservations: the worker never runs or holds reserved more jobs
// than its slots, with one fetch loop and, from 32 slots, with two (each pops with a
// ticket of its own, so the tickets say how many loops popped).
func TestConcurrencyBoundsReservations(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ slots, jobs, loops int }{{4, 40, 1}, {40, 400, 2}} {
		t.Run(fmt.Sprintf("%d slots", c.slots), func(t *testing.T) {
			t.Parallel()
			e := testkit.NewEnv(t)
			var running, peak atomic.Int32
			var peakReserved atomic.Int64
			var mu sync.Mutex
			tickets := map[string]bool{}
			reg := laraq.NewJobs()
			reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
				n := running.Add(1)
				defer running.Add(-1)
				for {
					p := peak.Load()
					if n <= p || peak.CompareAndSwap(p, n) {
						break
					}
				}
				if r := e.Client.ZCard(ctx, e.Prefix+"queues:default:reserved").Val(); r > peakReserved.Load() {
					peakReserved.Store(r)
				}
				keys, err := e.Client.Keys(ctx, e.Prefix+"queues:default*pop:*").Result()
				if err != nil {
					return err
				}
				mu.Lock()
				for _, k := range keys {
					tickets[k] = true
				}
				mu.Unlock()
				time.Sleep(20 * time.Millisecond)
				return nil
			})
			cfg := e.Config(reg)
			cfg.Concurrency = c.slots
			cfg.StopWhenEmpty = true
			for i := range c.jobs {
				e.Push("default", testkit.Job(t, testkit.SendInvoice{InvoiceID: int64(i)}, nil))
			}
			e.RunToEnd(e.Consumer(cfg))
			if peak.Load() != int32(c.slots) {
				t.Errorf("peak concurrency %d, want %d", peak.Load(), c.slots)
			}
			if peakReserved.Load() > int64(c.slots) {
				t.Errorf("peak reservations %d > %d", peakReserved.Load(), c.slots)
			}
			if len(tickets) != c.loops {
				t.Errorf("pop tickets %v: %d loops popped, want %d", tickets, len(tickets), c.loops)
			}
			if k := e.Keys(); len(k) != 0 {
				t.Errorf("keys %v", k)
			}
		})
	}
}

func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	t.Run("in-flight job finishes", func(t *testing.T) {
		t.Parallel()
		e := testkit.NewEnv(t)
		started := make(chan struct{})
		var finished atomic.Bool
		reg := laraq.NewJobs()
		reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
			close(started)
			time.Sleep(300 * time.Millisecond)
			finished.Store(ctx.Err() == nil)
			return nil
		})
		cfg := e.Config(reg)
		e.Push("default", testkit.Job(t, testkit.SendInvoice{}, nil), testkit.Job(t, testkit.SendInvoice{}, nil))
		stop, _ := e.Run(e.Consumer(cfg))
		<-started
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		if !finished.Load() {
			t.Fatal("job context cancelled within the grace")
		}
		// The first job is done, the second was never taken.
		if len(e.ZSet("queues:default:reserved")) != 0 || len(e.List("queues:default")) != 1 {
			t.Fatalf("keys %v", e.Keys())
		}
	})
	t.Run("past the grace the job is released", func(t *testing.T) {
		t.Parallel()
		e := testkit.NewEnv(t)
		started := make(chan struct{})
		reg := laraq.NewJobs()
		reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
			close(started)
			<-ctx.Done()
			return ctx.Err()
		})
		cfg := e.Config(reg)
		cfg.ShutdownGrace = 50 * time.Millisecond
		cfg.Tries = new(1)
		e.Push("default", testkit.Job(t, testkit.SendInvoice{}, nil))
		stop, _ := e.Run(e.Consumer(cfg))
		<-started
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		z := e.ZSet("queues:default:delayed")
		if len(z) != 1 || int64(z[0].Score) != e.Clock.Now().Unix() || len(e.Store.All()) != 0 {
			t.Fatalf("delayed %v, failed %d", z, len(e.Store.All()))
		}
	})
	t.Run("a handler ignoring its context is left reserved", func(t *testing.T) {
		t.Parallel()
		e := testkit.NewEnv(t)
		started := make(chan struct{})
		// The handler returns only when the test lets it, after Run has returned: Run
		// must not wait for it, however loaded the machine is.
		release := make(chan struct{})
		returned := make(chan struct{})
		reg := laraq.NewJobs()
		reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
			close(started)
			<-release
			close(returned)
			return nil
		})
		cfg := e.Config(reg)
		cfg.ShutdownGrace = -1
		e.Push("default", testkit.Job(t, testkit.SendInvoice{}, nil))
		stop, _ := e.Run(e.Consumer(cfg))
		<-started
		if err := stop(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-returned:
			t.Fatal("the handler returned before it was released")
		default:
		}
		if len(e.ZSet("queues:default:reserved")) != 1 {
			t.Fatalf("keys %v", e.Keys())
		}
		close(release)
		<-returned
		// What the abandoned handler returns later changes nothing.
		testkit.Eventually(t, 5*time.Second, "the late return logged", func() bool {
			return strings.Contains(e.Logs.String(), "abandoned handler returned")
		})
		if len(e.ZSet("queues:default:reserved")) != 1 {
			t.Fatalf("after the late return: keys %v", e.Keys())
		}
	})
}

func TestBlockForWakesOnPush(t *testing.T) {
	t.Parallel()
	e := testkit.NewEnv(t)
	done := make(chan struct{}, 1)
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { done <- struct{}{}; return nil })
	cfg := e.Config(reg)
	cfg.Sleep = time.Hour // without blocking the worker would sleep for an hour
	cfg.BlockFor = new(time.Duration(0))
	stop, _ := e.Run(e.Consumer(cfg))
	defer stop()
	time.Sleep(100 * time.Millisecond) // idle now, waiting on the notify list
	e.Push("default", testkit.Job(t, testkit.SendInvoice{}, nil))
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("pushed job not picked up while blocking")
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

func TestMigrationIsThrottled(t *testing.T) {
	t.Parallel()
	e := testkit.NewEnv(t)
	ran := make(chan struct{}, 4)
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { ran <- struct{}{}; return nil })
	cfg := e.Config(reg)
	cfg.MigrateInterval = time.Hour
	ev := &events{}
	cfg.OnEvent = ev.add
	// Due at start: moved by the first migration.
	if err := e.RDB.Later(e.Ctx, "default", e.Clock.Now().Unix()-1, testkit.Job(t, testkit.SendInvoice{InvoiceID: 1}, nil)); err != nil {
		t.Fatal(err)
	}
	stop, _ := e.Run(e.Consumer(cfg))
	defer stop()
	<-ran
	// Due later: with an interval of an hour nothing moves it.
	if err := e.RDB.Later(e.Ctx, "default", e.Clock.Now().Unix()-1, testkit.Job(t, testkit.SendInvoice{InvoiceID: 2}, nil)); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if len(ran) != 0 || len(e.ZSet("queues:default:delayed")) != 1 {
		t.Fatal("migrated before the interval")
	}
	if m, _ := ev.first(laraq.EventMigrated); m.Count != 1 || m.From != "delayed" || m.Queue != "default" {
		t.Errorf("migrated event %+v", m)
	}
	stop()
}

func TestFailedStoreOutageIsRetried(t *testing.T) {
	t.Parallel()
	e := testkit.NewEnv(t)
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { return laraq.Fail(errors.New("x")) })
	cfg := e.Config(reg)
	cfg.StopWhenEmpty = true
	e.Store.Fail.Store(2)
	e.Push("default", testkit.Job(t, testkit.SendInvoice{}, nil))
	e.RunToEnd(e.Consumer(cfg))
	if len(e.Store.All()) != 1 {
		t.Fatal("failed record lost")
	}
	if !strings.Contains(e.Logs.String(), "writing a failed job failed; retrying") {
		t.Errorf("log:\n%s", e.Logs.String())
	}
}

func TestConfigErrors(t *testing.T) {
	e := testkit.NewEnv(t)
	reg := laraq.NewJobs()
	for _, cfg := range []testkit.Setup{
		{},
		{Registry: reg, Queues: []string{"a,b"}},
		{Registry: reg, Queues: []string{"a", "a"}},
		{Registry: reg, Concurrency: -1},
		{Registry: reg, Tries: new(-2)},
		{Registry: reg, Backoff: []int{1, -2}},
		{Registry: reg, BlockFor: new(-time.Second)},
	} {
		if _, err := testkit.NewWorker(e.Client, cfg); err == nil {
			t.Errorf("New(%+v) accepted", cfg)
		}
	}
	if _, err := testkit.NewWorker(nil, testkit.Setup{Registry: reg}); err == nil {
		t.Error("nil client accepted")
	}
	small := redis.NewClient(&redis.Options{Addr: testenv.RedisServer(t).Addr, PoolSize: 4})
	defer small.Close()
	logs := &testkit.SyncBuffer{}
	if _, err := testkit.NewWorker(small, testkit.Setup{Registry: reg, Concurrency: 8, Logger: testkit.SlogTo(logs)}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "redis pool smaller than the worker needs") || !strings.Contains(logs.String(), "needed=10") {
		t.Errorf("no pool warning: %s", logs.String())
	}
}

// TestRestartSignalOfAlternativeScheme: with Cache.AlsoWatch the worker stops on a restart
// written under any watched scheme.
func TestRestartSignalOfAlternativeScheme(t *testing.T) {
	t.Parallel()
	e := testkit.NewEnv(t)
	hyphen := e.Prefix + "h-"
	l8 := rdb.CacheKeys{RedisPrefix: e.Prefix, Prefix: "app_cache", Separator: true}
	l12 := rdb.CacheKeys{RedisPrefix: hyphen, Prefix: "app-cache-"}
	cfg := e.Config(laraq.NewJobs())
	cfg.SignalInterval = 10 * time.Millisecond
	cfg.Cache = laraq.CacheStore{Prefix: "app_cache_", AlsoWatch: []laraq.CacheScheme{
		{ConnectionPrefix: e.Prefix, Prefix: "app_cache", Separator: true},
		{ConnectionPrefix: hyphen, Prefix: "app-cache-"},
	}}
	for i, k := range []rdb.CacheKeys{l8, l12} {
		stop, done := e.Run(e.Consumer(cfg))
		time.Sleep(50 * time.Millisecond) // the reference is read at start
		select {
		case <-done:
			t.Fatalf("Run returned %v before the signal", stop())
		default:
		}
		// The second run starts with the first key set: a later time raises the maximum.
		if err := e.Client.Set(e.Ctx, k.Restart(), 1_700_000_001+i, 0).Err(); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
			if err := stop(); !errors.Is(err, laraq.ErrRestart) {
				t.Fatalf("%s: Run = %v", k.Restart(), err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no restart on %s", k.Restart())
		}
	}
	if k := e.Keys(); fmt.Sprint(k) != "[app_cache:illuminate:queue:restart h-app-cache-illuminate:queue:restart]" {
		t.Errorf("keys %v", k)
	}
}
