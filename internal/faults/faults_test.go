package faults_test

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

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
)

// stallEnv is an env on a redis-server of its own, which the test may stall, with the
// short timeouts and go-redis retries under which a stall loses replies.
func stallEnv(t *testing.T) (*testkit.Env, *testenv.Redis) {
	t.Helper()
	srv := testenv.PrivateRedis(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr, ReadTimeout: 200 * time.Millisecond, WriteTimeout: 200 * time.Millisecond,
		MaxRetries: 3, MinRetryBackoff: 10 * time.Millisecond, MaxRetryBackoff: 20 * time.Millisecond, PoolSize: 16})
	t.Cleanup(func() { client.Close() })
	e := testkit.NewEnv(t)
	r, err := rdb.New(client, rdb.Options{Prefix: e.Prefix, Cache: rdb.CacheOptions{Keys: rdb.CacheKeys{RedisPrefix: e.Prefix}}})
	if err != nil {
		t.Fatal(err)
	}
	e.Client, e.RDB = client, r
	return e, srv
}

// runs counts the runs of each invoice id.
type runs struct {
	mu sync.Mutex
	n  map[int64]int
}

func (r *runs) add(id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[int64]int{}
	}
	r.n[id]++
}

func (r *runs) get() map[int64]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make(map[int64]int, len(r.n))
	for k, v := range r.n {
		out[k] = v
	}
	return out
}

// A Redis stall while a pop is in flight: the pop and go-redis' re-sent copies run when
// Redis resumes, and their replies are lost. Without pop tickets those jobs stay
// reserved with no owner, come back after retry_after with an attempt spent, and with
// one try are failed without having run. With one slot the pop goes alone: go-redis
// does not re-send a single command after a read timeout, the worker sees the error
// and asks again with the same ticket. With more slots finished jobs' deletions ride
// the pop in one pipeline, which go-redis re-sends after a timeout: a copy that
// arrives after the stall gets the first copy's jobs again (the ticket) and finds the
// deletions done (the job was deleted by a copy whose reply was lost). From 32 slots two
// fetch loops pop, each with its own tickets.
func TestStalledPopLosesNoJobAndNoAttempt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		concurrency int
		evidence    string // the log line that shows a stall caught a pop
	}{
		{"the pop alone", 1, "a pop's reply was lost"},
		{"deletions riding the pop", 2, "an earlier copy of the call, whose reply was lost, had done it"},
		{"two fetch loops, deletions riding", 64, "an earlier copy of the call, whose reply was lost, had done it"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			stalledPop(t, tc.concurrency, tc.evidence)
		})
	}
}

func stalledPop(t *testing.T, concurrency int, evidence string) {
	e, srv := stallEnv(t)
	const jobs = 20000
	var ran runs
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\SendInvoice`, func(ctx context.Context, cmd *testkit.SendInvoice, j *laraq.JobInfo) error {
		ran.add(cmd.InvoiceID)
		return nil
	})
	var batch [][]byte
	for i := range jobs {
		batch = append(batch, testkit.Job(t, testkit.SendInvoice{InvoiceID: int64(i)}, nil))
		if len(batch) == 1000 {
			if err := e.RDB.PushBulk(e.Ctx, "default", batch); err != nil {
				t.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	cfg := e.Config(reg)
	cfg.Now = nil // reservations must expire on the real clock
	cfg.Concurrency = concurrency
	cfg.Tries = new(1)
	// Long enough that no reservation of a job that ran expires during the stall (its
	// score is whole seconds, so it lasts between 3 and 4 s).
	cfg.RetryAfter = 4 * time.Second
	cfg.MigrateInterval = 100 * time.Millisecond
	stop, _ := e.Run(e.Consumer(cfg))
	testkit.Eventually(t, 10*time.Second, "the first jobs", func() bool { return len(ran.get()) > 50 })
	// A stall may catch the worker acknowledging rather than popping: stall until one
	// caught a pop.
	for range 8 {
		srv.Stall(t, 1500*time.Millisecond)
		time.Sleep(1800 * time.Millisecond)
		if strings.Contains(e.Logs.String(), evidence) {
			break
		}
	}
	testkit.Eventually(t, 60*time.Second, "every job", func() bool { return len(ran.get())+len(e.Store.All()) >= jobs })
	// Orphaned reservations would expire now and be failed as attempted too many times.
	time.Sleep(cfg.RetryAfter + time.Second)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	got := ran.get()
	for i := range int64(jobs) {
		if got[i] != 1 {
			t.Errorf("invoice %d ran %d times", i, got[i])
		}
	}
	for _, f := range e.Store.All() {
		t.Errorf("failed without running: %.120s", f.Exception)
	}
	if n := len(e.ZSet("queues:default:reserved")); n != 0 {
		t.Errorf("%d jobs left reserved", n)
	}
	if !strings.Contains(e.Logs.String(), evidence) {
		t.Errorf("the stall caught no pop (no %q); the test did not test anything:\n%s", evidence, e.Logs.String())
	}
}

// failingWithDatabaseDown queues one job whose handler fails on its only try, with the
// failed-job database down until the test sets e.store.fail to 0.
func failingWithDatabaseDown(t *testing.T) (*testkit.Env, testkit.Setup) {
	e := testkit.NewEnv(t)
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { return fmt.Errorf("boom") })
	cfg := e.Config(reg)
	cfg.Tries = new(1)
	e.Store.Fail.Store(1 << 30)
	e.Push("default", testkit.Job(t, testkit.SendInvoice{InvoiceID: 7}, nil))
	return e, cfg
}

// A job whose failed row cannot be written (the database is down) stays reserved, its
// reservation held past retry_after, until the row is written; only then is it deleted.
func TestFailedRowIsWrittenBeforeTheJobLeavesRedis(t *testing.T) {
	t.Parallel()
	e, cfg := failingWithDatabaseDown(t)
	cfg.Now = nil
	cfg.RetryAfter = 2 * time.Second
	stop, _ := e.Run(e.Consumer(cfg))
	testkit.Eventually(t, 5*time.Second, "the failure", func() bool { return strings.Contains(e.Logs.String(), "writing a failed job failed") })
	// Well past retry_after the job is still reserved, and never ran again.
	time.Sleep(3 * time.Second)
	reserved := e.ZSet("queues:default:reserved")
	if len(reserved) != 1 || int64(reserved[0].Score) <= time.Now().Unix() {
		t.Fatalf("while the database is down: reserved %v (now %d), keys %v", reserved, time.Now().Unix(), e.Keys())
	}
	e.Store.Fail.Store(0) // the database is back
	testkit.Eventually(t, 10*time.Second, "the failed row", func() bool { return len(e.Store.All()) == 1 })
	testkit.Eventually(t, 5*time.Second, "the reserved copy deleted", func() bool { return len(e.ZSet("queues:default:reserved")) == 0 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if rows := e.Store.All(); len(rows) != 1 || !strings.Contains(rows[0].Exception, "boom") {
		t.Fatalf("failed rows %v", rows)
	}
}

// Stopped while the database is down, the worker keeps to its shutdown grace and leaves
// the failing job reserved, in Redis, for the next worker.
func TestStopWhileFailedRowIsPendingKeepsTheGraceAndTheJob(t *testing.T) {
	t.Parallel()
	e, cfg := failingWithDatabaseDown(t)
	cfg.ShutdownGrace = 500 * time.Millisecond
	stop, _ := e.Run(e.Consumer(cfg))
	testkit.Eventually(t, 5*time.Second, "the failure", func() bool { return strings.Contains(e.Logs.String(), "writing a failed job failed") })
	t0 := time.Now()
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// Grace, then abandonWait (1 s) and the final second for acknowledgements.
	if d := time.Since(t0); d > cfg.ShutdownGrace+2500*time.Millisecond {
		t.Errorf("Run took %v to stop with a %v grace", d, cfg.ShutdownGrace)
	}
	if n := len(e.ZSet("queues:default:reserved")); n != 1 {
		t.Fatalf("job not left reserved: keys %v", e.Keys())
	}
	if !strings.Contains(e.Logs.String(), "the job stays reserved") {
		t.Errorf("log does not say where the job is:\n%s", e.Logs.String())
	}
}

// An acknowledgement whose reply a stall lost, retried, finds the reservation gone: the
// earlier attempt removed it, and the worker must not claim the job ran too long.
func TestAckAfterALostReplyIsNotReportedAsExpired(t *testing.T) {
	t.Parallel()
	e, srv := stallEnv(t)
	var stalled atomic.Bool
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
		srv.Stall(t, 1500*time.Millisecond)
		stalled.Store(true)
		return nil
	})
	cfg := e.Config(reg)
	cfg.Now = nil
	cfg.StopWhenEmpty = true
	e.Push("default", testkit.Job(t, testkit.SendInvoice{InvoiceID: 1}, nil))
	if err := e.RunToEnd(e.Consumer(cfg)); err != laraq.ErrQueueEmpty {
		t.Fatal(err)
	}
	logs := e.Logs.String()
	if !stalled.Load() || !strings.Contains(logs, "deleting a finished job failed; retrying") {
		t.Fatalf("the stall did not make the acknowledgement fail:\n%s", logs)
	}
	if strings.Contains(logs, "ran longer than retry_after") || strings.Contains(logs, "level=WARN msg=\"deleting a finished job: the reservation is gone") {
		t.Errorf("false warning:\n%s", logs)
	}
	if keys := e.Keys(); len(keys) != 0 {
		t.Errorf("keys left: %v", keys)
	}
}

// aclUser creates a Redis ACL user with password pass on the shared server (the
// default user is left alone) and returns its name.
func aclUser(t *testing.T, e *testkit.Env, pass string) string {
	t.Helper()
	user := "lq" + testenv.RandomName(6)
	if err := e.Client.Do(e.Ctx, "acl", "setuser", user, "on", ">"+pass, "~*", "&*", "+@all").Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Client.Do(context.Background(), "acl", "deluser", user) })
	return user
}

// A worker whose credentials Redis stops accepting (the password was rotated) stops with
// a *RedisAuthError naming the server, instead of retrying forever.
func TestWorkerStopsOnRefusedCredentials(t *testing.T) {
	t.Parallel()
	e := testkit.NewEnv(t)
	user := aclUser(t, e, "first-secret")
	client := redis.NewClient(&redis.Options{Addr: e.Client.Options().Addr, Username: user, Password: "first-secret"})
	t.Cleanup(func() { client.Close() })
	reg := laraq.NewJobs()
	ran := make(chan struct{}, 1)
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { ran <- struct{}{}; return nil })
	cfg := e.Config(reg)
	w, err := testkit.NewWorker(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.Push("default", testkit.Job(t, testkit.SendInvoice{}, nil))
	result := make(chan error, 1)
	go func() { result <- w.Run(e.Ctx) }()
	<-ran
	// Rotate the password and drop the worker's connections.
	if err := e.Client.Do(e.Ctx, "acl", "setuser", user, "resetpass", ">second-secret").Err(); err != nil {
		t.Fatal(err)
	}
	if err := e.Client.Do(e.Ctx, "client", "kill", "user", user).Err(); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-result:
		var ae *laraq.RedisAuthError
		if !errors.As(err, &ae) || ae.Server != e.Client.Options().Addr+"/0" {
			t.Fatalf("Run returned %v, want a *RedisAuthError naming %s/0", err, e.Client.Options().Addr)
		}
		if strings.Contains(err.Error(), "secret") {
			t.Fatalf("error shows the password: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("worker still running with refused credentials:\n%s", e.Logs.String())
	}
}

// A job that really ran longer than retry_after, moved back meanwhile by another worker,
// is still reported: the warning is true then.
func TestJobThatOutlivedItsReservationIsReported(t *testing.T) {
	t.Parallel()
	e := testkit.NewEnv(t)
	migrated := make(chan struct{})
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error {
		<-migrated
		return nil
	})
	cfg := e.Config(reg)
	cfg.Now = nil
	cfg.RetryAfter = time.Second
	cfg.StopWhenEmpty = true
	wc := cfg.WorkerConfig()
	wc.ReservationHeartbeat = -1 // as a PHP worker: the reservation is never extended
	w, err := laraq.NewWorker(cfg.NewConnection(e.Client), reg, wc)
	if err != nil {
		t.Fatal(err)
	}
	e.Push("default", testkit.Job(t, testkit.SendInvoice{InvoiceID: 1}, nil))
	done := make(chan error, 1)
	go func() { done <- w.Run(e.Ctx) }()
	// Another worker's pop, past the expiry, moves it back to the ready list.
	testkit.Eventually(t, 10*time.Second, "the reservation to expire and move back", func() bool {
		n, err := e.RDB.MigrateReserved(e.Ctx, "default", time.Now().Unix(), 0)
		return err == nil && n == 1
	})
	close(migrated)
	if err := <-done; !errors.Is(err, laraq.ErrQueueEmpty) && err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(e.Logs.String(), "ran longer than retry_after") {
		t.Fatalf("no warning for a job that outlived its reservation:\n%s", e.Logs.String())
	}
}
