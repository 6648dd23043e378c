package laraq_test

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// gate is a handler whose jobs block until the test lets them go; it counts the jobs
// started.
type gate struct {
	started atomic.Int32
	running chan struct{}
	release chan struct{}
}

func newGate() *gate {
	return &gate{running: make(chan struct{}, 100), release: make(chan struct{})}
}

func (g *gate) registry() *laraq.Jobs {
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
		g.started.Add(1)
		g.running <- struct{}{}
		<-g.release
		return nil
	})
	return reg
}

// waitRunning waits until n jobs are in their handler.
func (g *gate) waitRunning(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-g.running:
		case <-time.After(5 * time.Second):
			t.Fatalf("only %d jobs started", g.started.Load())
		}
	}
}

// TestStopConditionsAreCheckedBeforeEachPop sets off a stop condition while every slot
// is busy. The loop waits for a slot then; the slot freed by a finishing job must not
// be used to pop one more job.
func TestStopConditionsAreCheckedBeforeEachPop(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		concurrency int
		stop        func(e *testkit.Env, c *laraq.Worker)
		want        error // nil: Run is cancelled by the test
	}{
		{"queue:restart", 2, func(e *testkit.Env, c *laraq.Worker) {
			if err := e.RDB.Cache().SignalRestart(e.Ctx, 2); err != nil {
				e.T.Fatal(err)
			}
		}, laraq.ErrRestart},
		{"max time", 3, func(e *testkit.Env, c *laraq.Worker) { e.Clock.Add(time.Hour) }, laraq.ErrMaxTime},
		{"pause", 2, func(e *testkit.Env, c *laraq.Worker) { c.Pause() }, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := testkit.NewEnv(t)
			g := newGate()
			cfg := e.Config(g.registry())
			cfg.Concurrency = tc.concurrency
			cfg.MaxTime = time.Minute
			cfg.SignalInterval = 20 * time.Millisecond
			cfg.Logger = testkit.QuietLogger(t)
			if err := e.RDB.Cache().SignalRestart(e.Ctx, 1); err != nil {
				t.Fatal(err)
			}
			const total = 6
			for i := range total {
				e.Push("default", testkit.Job(t, testkit.SendInvoice{InvoiceID: int64(i)}, nil))
			}
			c := e.Consumer(cfg)
			stop, done := e.Run(c)
			defer stop()
			g.waitRunning(t, tc.concurrency)
			tc.stop(e, c)
			// Longer than SignalInterval: the signal read before the next pop is due.
			time.Sleep(60 * time.Millisecond)
			close(g.release)
			if tc.want != nil {
				select {
				case <-done:
				case <-time.After(5 * time.Second):
					t.Fatal("Run did not stop")
				}
				if err := stop(); !errors.Is(err, tc.want) {
					t.Fatalf("Run = %v, want %v", err, tc.want)
				}
			} else {
				// Paused: give a wrong pop every chance to happen.
				time.Sleep(300 * time.Millisecond)
			}
			if n := int(g.started.Load()); n != tc.concurrency {
				t.Errorf("%d jobs started, want exactly the %d in flight", n, tc.concurrency)
			}
			if ready := len(e.List("queues:default")); ready != total-tc.concurrency {
				t.Errorf("%d jobs left ready, want %d", ready, total-tc.concurrency)
			}
			if tc.want == nil {
				c.Resume()
				testkit.Eventually(t, 5*time.Second, "the remaining jobs after Resume", func() bool {
					return g.started.Load() == total
				})
				if err := stop(); err != nil {
					t.Errorf("Run = %v", err)
				}
			}
		})
	}
}

// TestMaxJobsWithFreeSlots pops in batches as large as the free slots, never beyond
// MaxJobs, also when jobs finish one by one and free slots while others still run.
func TestMaxJobsWithFreeSlots(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ concurrency, maxJobs int }{{4, 1}, {4, 3}, {3, 5}, {2, 7}} {
		e := testkit.NewEnv(t)
		var ran atomic.Int32
		reg := laraq.NewJobs()
		reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
			ran.Add(1)
			time.Sleep(time.Duration(j.Attempt) * 5 * time.Millisecond)
			return nil
		})
		cfg := e.Config(reg)
		cfg.Concurrency, cfg.MaxJobs = tc.concurrency, tc.maxJobs
		cfg.Logger = testkit.QuietLogger(t)
		for i := range 12 {
			e.Push("default", testkit.Job(t, testkit.SendInvoice{InvoiceID: int64(i)}, nil))
		}
		if err := e.RunToEnd(e.Consumer(cfg)); !errors.Is(err, laraq.ErrMaxJobs) {
			t.Fatalf("%+v: Run = %v", tc, err)
		}
		if int(ran.Load()) != tc.maxJobs || len(e.List("queues:default")) != 12-tc.maxJobs || len(e.ZSet("queues:default:reserved")) != 0 {
			t.Errorf("%+v: ran %d, ready %d", tc, ran.Load(), len(e.List("queues:default")))
		}
	}
}

// loopEvents keeps the EventLoop heartbeats.
type loopEvents struct {
	mu   sync.Mutex
	errs []error
}

func (l *loopEvents) add(e laraq.Event) {
	if e.Kind != laraq.EventLoop {
		return
	}
	if e.Job != nil {
		panic("EventLoop with a job")
	}
	l.mu.Lock()
	l.errs = append(l.errs, e.Err)
	l.mu.Unlock()
}

// since returns the heartbeats after the first n.
func (l *loopEvents) since(n int) []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs[min(n, len(l.errs)):]...)
}

func (l *loopEvents) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.errs)
}

// TestHeartbeatReportsRedis stops and restarts Redis under a running worker: the
// heartbeats carry the error while Redis is gone, and no error once it is back; they keep
// coming while the worker sleeps between empty polls and while every slot is busy.
func TestHeartbeatReportsRedis(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		busy bool // every slot runs a job that does not end during the outage
	}{{"idle", false}, {"busy", true}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			mr := miniredis.NewMiniRedis()
			if err := mr.Start(); err != nil {
				t.Fatal(err)
			}
			defer mr.Close()
			client := redis.NewClient(&redis.Options{Addr: mr.Addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
			defer client.Close()
			g := newGate()
			var beats loopEvents
			c, err := testkit.NewWorker(client, testkit.Setup{
				Registry: g.registry(), Concurrency: 1, Sleep: 5 * time.Second, Cache: laraq.CacheStore{Disabled: true},
				OnEvent: beats.add, Logger: testkit.QuietLogger(t),
			})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.busy {
				// Queued before Run, so that the first pop takes it rather than a 5 s sleep.
				if err := client.RPush(ctx, "queues:default", testkit.Job(t, testkit.SendInvoice{}, nil)).Err(); err != nil {
					t.Fatal(err)
				}
			}
			done := make(chan error, 1)
			go func() { done <- c.Run(ctx) }()
			if tc.busy {
				g.waitRunning(t, 1)
			}
			testkit.Eventually(t, 5*time.Second, "a healthy heartbeat", func() bool {
				b := beats.since(0)
				return len(b) > 0 && b[len(b)-1] == nil
			})

			mr.Close()
			n := beats.len()
			// Sleep (5 s) and the busy slot both outlast the wait: the heartbeat must
			// come from the waits themselves.
			testkit.Eventually(t, 8*time.Second, "a heartbeat with the Redis error", func() bool {
				for _, err := range beats.since(n) {
					if err != nil {
						return true
					}
				}
				return false
			})

			if err := mr.Restart(); err != nil {
				t.Fatal(err)
			}
			n = beats.len()
			testkit.Eventually(t, 10*time.Second, "a healthy heartbeat after the restart", func() bool {
				b := beats.since(n)
				return len(b) > 0 && b[len(b)-1] == nil
			})
			close(g.release)
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Run = %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Run did not return")
			}
		})
	}
}
