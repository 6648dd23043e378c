package laraq_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
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
	"github.com/laraq/laraq/payload"
)

// The Horizon records of the worker and the dispatcher on a real redis-server: what
// needs no PHP (their round trips, failures that must not touch the jobs, the delayed
// push of 12.11+, supervisor records and trimming). The records themselves are compared
// with Horizon's PHP code in cli/horizon_*_test.go and internal/rdb.

// hzEnv is a test's queue connection with Horizon on, under its own prefixes.
type hzEnv struct {
	*testkit.Env
	hzPrefix string
	conn     *laraq.Connection
}

func newHzEnv(t *testing.T, rel string) *hzEnv {
	t.Helper()
	e := testkit.NewEnv(t)
	h := &hzEnv{Env: e, hzPrefix: strings.TrimSuffix(e.Prefix, "_database_") + "_horizon:"}
	h.conn = e.Config(nil).NewConnection(e.Client)
	h.conn.Release = testkit.MustRelease(t, rel)
	h.conn.Horizon = &laraq.HorizonOptions{Prefix: h.hzPrefix}
	t.Cleanup(func() {
		if keys, _ := testenv.Keys(context.Background(), e.Client, testenv.EscapeGlob(h.hzPrefix)); len(keys) > 0 {
			e.Client.Del(context.Background(), keys...)
		}
	})
	return h
}

func (h *hzEnv) hash(id string) map[string]string {
	h.T.Helper()
	m, err := h.Client.HGetAll(h.Ctx, h.hzPrefix+id).Result()
	if err != nil {
		h.T.Fatal(err)
	}
	return m
}

func (h *hzEnv) dispatcher() *laraq.Dispatcher {
	h.T.Helper()
	d, err := laraq.NewDispatcher(h.conn)
	if err != nil {
		h.T.Fatal(err)
	}
	return d
}

// hzBatchSHA is the SHA1 of the batch script of Horizon's records: the one EVALSHA a
// batch sends (internal/rdb/horizon_batch.go assembles it).
func hzBatchSHA(t *testing.T) string {
	t.Helper()
	b := &rdb.HorizonBatch{}
	h, err := rdb.NewHorizon(rdb.HorizonOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = h.Released(context.Background(), b, rdb.HorizonJob{ID: "x"})
	cmd, err := b.Queue(context.Background(), redis.NewClient(&redis.Options{}).Pipeline())
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprint(cmd.Args()[1])
}

// pipelineLog records the commands of each pipeline a client sends: "zrem", or for a
// batch of Horizon's records (rdb.HorizonBatch) "batch" and the scripts it calls, by
// their number in horizon_batch.lua (2 update, 3 completed, 6 metrics, …; a group of
// completions, 7, as one script3 per job), and after a metrics call one "runtime" per
// job it measures.
type pipelineLog struct {
	batchSHA string
	mu       sync.Mutex
	pipes    [][]string
}

func (l *pipelineLog) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (l *pipelineLog) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (l *pipelineLog) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var names []string
		for _, c := range cmds {
			args := c.Args()
			if c.Name() != "evalsha" || fmt.Sprint(args[1]) != l.batchSHA {
				names = append(names, c.Name())
				continue
			}
			names = append(names, "batch")
			argv := args[3+args[2].(int):]
			calls := argv[0].(int)
			off := 1 + 3*calls // the first call's arguments
			for i := range calls {
				names = append(names, fmt.Sprint("script", argv[1+3*i]))
				na := argv[3+3*i].(int)
				switch fmt.Sprint(argv[1+3*i]) {
				case "6": // metrics: one runtime per job
					names = append(names, strings.Repeat("runtime ", na))
				case "3": // completed, with the reservation when its ARGV[11] says so
					if argv[off+10] == "reserved" {
						names = append(names, "with-reserved")
					}
				case "7": // a group of completions: one per job key after the five shared
					jobs := argv[2+3*i].(int) - 5
					for range jobs {
						names = append(names, "script3")
						if argv[off+6] == "reserved" {
							names = append(names, "with-reserved")
						}
					}
				}
				off += na
			}
		}
		l.mu.Lock()
		l.pipes = append(l.pipes, names)
		l.mu.Unlock()
		return next(ctx, cmds)
	}
}

// TestHorizonRecordsRideTheAcknowledgements: with Horizon's keys on the queue's client,
// the completed and metrics records of finished jobs go in the pipeline of their
// deletion, never in a round trip of their own, and the reserved records of a pop go
// in one pipeline, before the jobs run (or, when one shares its batch with the job's
// completion, in the completed call: ReservedCompleted).
func TestHorizonRecordsRideTheAcknowledgements(t *testing.T) {
	h := newHzEnv(t, "11.56")
	log := &pipelineLog{batchSHA: hzBatchSHA(t)}
	h.Client.AddHook(log)
	const n = 48
	for i := range n {
		if _, err := h.dispatcher().Dispatch(h.Ctx, testkit.SendInvoice{InvoiceID: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	log.mu.Lock()
	log.pipes = nil // the dispatches' own
	log.mu.Unlock()
	var ran atomic.Int64
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\SendInvoice`, func(ctx context.Context, cmd *testkit.SendInvoice, job *laraq.JobInfo) error {
		time.Sleep(time.Millisecond)
		ran.Add(1)
		return nil
	})
	cfg := h.Config(reg)
	cfg.Concurrency, cfg.StopWhenEmpty, cfg.Now = 8, true, nil
	w, err := laraq.NewWorker(h.conn, reg, cfg.WorkerConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.RunToEnd(w); !errors.Is(err, laraq.ErrQueueEmpty) || ran.Load() != n {
		t.Fatalf("Run: %v after %d jobs", err, ran.Load())
	}
	var completedCalls, reservedCalls, metricsCalls, runtimes, batches int
	for _, p := range log.pipes {
		joined := strings.Join(p, " ")
		batches += strings.Count(joined, "batch")
		completed := strings.Count(joined, "script3")
		completedCalls += completed
		reservedCalls += strings.Count(joined, "script2") + strings.Count(joined, "with-reserved")
		metrics := strings.Count(joined, "script6")
		metricsCalls += metrics
		runtimes += strings.Count(joined, "runtime")
		if metrics > 2*strings.Count(joined, "batch") {
			// one call per metrics hash (queue:default, job:SendInvoice) and batch
			t.Errorf("%d metrics calls in one batch: %v", metrics, p)
		}
		if completed > 0 && strings.Count(joined, "zrem") < completed {
			t.Errorf("completed records without their deletion: %v", p)
		}
		if strings.Count(joined, "batch") > 1 {
			t.Errorf("more than one batch in a pipeline: %v", p)
		}
	}
	if completedCalls != n || reservedCalls != n || runtimes != 2*n {
		t.Fatalf("%d completed, %d reserved records and %d runtimes measured for %d jobs", completedCalls, reservedCalls, runtimes, n)
	}
	if metricsCalls >= 2*n {
		t.Errorf("%d metrics calls for %d jobs: none merged", metricsCalls, n)
	}
	if batches >= n {
		t.Errorf("%d script calls for the records of %d jobs: nothing was batched", batches, n)
	}
	for _, k := range []string{"completed_jobs", "recent_jobs"} {
		if c, _ := h.Client.ZCard(h.Ctx, h.hzPrefix+k).Result(); c != n {
			t.Errorf("%s holds %d jobs, want %d", k, c, n)
		}
	}
	if tp, _ := h.Client.HGet(h.Ctx, h.hzPrefix+"queue:default", "throughput").Result(); tp != fmt.Sprint(n) {
		t.Errorf("queue throughput %s, want %d", tp, n)
	}
}

// flaky is App\Jobs\Flaky: fails or releases per its plan.
type flaky struct {
	Plan string `php:"plan"`
}

func (flaky) PHPClass() string { return `App\Jobs\Flaky` }

// TestHorizonFailuresNeverTouchJobs breaks every Horizon record (its pending_jobs key is
// a string, so each script fails with WRONGTYPE, in the same pipelines as the queue's
// commands): dispatches still push, and the worker still runs, releases, deletes and
// fails its jobs exactly as without Horizon, logging the records it could not write.
func TestHorizonFailuresNeverTouchJobs(t *testing.T) {
	h := newHzEnv(t, "11.56")
	if err := h.Client.Set(h.Ctx, h.hzPrefix+"pending_jobs", "not a zset", 0).Err(); err != nil {
		t.Fatal(err)
	}
	d := h.dispatcher()
	for _, plan := range []string{"ok", "fail", "release"} {
		if _, err := d.Dispatch(h.Ctx, flaky{Plan: plan}); err != nil {
			t.Fatalf("dispatch %s: %v", plan, err)
		}
	}
	var mu sync.Mutex
	ran := map[string]int{}
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\Flaky`, func(ctx context.Context, cmd *flaky, job *laraq.JobInfo) error {
		mu.Lock()
		ran[cmd.Plan]++
		mu.Unlock()
		switch {
		case cmd.Plan == "fail":
			return laraq.Fail(errors.New("flaky failed"))
		case cmd.Plan == "release" && job.Attempt == 1:
			return laraq.ReleaseAfter(0)
		}
		return nil
	})
	cfg := h.Config(reg)
	cfg.StopWhenEmpty, cfg.MigrateInterval, cfg.Now = true, -1, nil
	cfg.Tries = new(3)
	w, err := laraq.NewWorker(h.conn, reg, cfg.WorkerConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.RunToEnd(w); !errors.Is(err, laraq.ErrQueueEmpty) {
		t.Fatal(err)
	}
	if fmt.Sprint(ran) != "map[fail:1 ok:1 release:2]" {
		t.Errorf("ran %v", ran)
	}
	if n := len(h.Store.All()); n != 1 {
		t.Errorf("%d failed records, want 1", n)
	}
	if keys := h.Keys(); len(keys) != 0 {
		t.Errorf("queue keys left: %v", keys)
	}
	if !strings.Contains(h.Logs.String(), "writing Horizon's records failed") || !strings.Contains(h.Logs.String(), "WRONGTYPE") {
		t.Errorf("no warning about the records:\n%s", h.Logs.String())
	}
}

// TestHorizonRecordsSurviveScriptFlush: a server that lost Horizon's scripts (restart,
// SCRIPT FLUSH) answers NOSCRIPT; the records are sent again with the script.
func TestHorizonRecordsSurviveScriptFlush(t *testing.T) {
	h := newHzEnv(t, "11.56")
	d := h.dispatcher()
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\SendInvoice`, func(ctx context.Context, cmd *testkit.SendInvoice, job *laraq.JobInfo) error { return nil })
	var ids []string
	for i := range 2 {
		if err := h.Client.ScriptFlush(h.Ctx).Err(); err != nil {
			t.Fatal(err)
		}
		id, err := d.Dispatch(h.Ctx, testkit.SendInvoice{InvoiceID: int64(i)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
		if err := h.Client.ScriptFlush(h.Ctx).Err(); err != nil {
			t.Fatal(err)
		}
		cfg := h.Config(reg)
		cfg.StopWhenEmpty, cfg.Now = true, nil
		w, err := laraq.NewWorker(h.conn, reg, cfg.WorkerConfig())
		if err != nil {
			t.Fatal(err)
		}
		if err := h.RunToEnd(w); !errors.Is(err, laraq.ErrQueueEmpty) {
			t.Fatal(err)
		}
	}
	for _, id := range ids {
		if rec := h.hash(id); rec["status"] != "completed" || rec["reserved_at"] == "" || rec["created_at"] == "" {
			t.Errorf("job %s: %v", id, rec)
		}
	}
	if tp, _ := h.Client.HGet(h.Ctx, h.hzPrefix+"job:App\\Jobs\\SendInvoice", "throughput").Result(); tp != "2" {
		t.Errorf("job throughput %q, want 2", tp)
	}
}

// TestHorizonDelayedDispatch: Horizon's later() builds the payload without the delay,
// so on Laravel 12.11+ a delayed job Horizon pushes says "delay":null where the
// framework's says the seconds (payload/horizon_test.go proves it on the PHP trees);
// the job is recorded pending with the bytes in :delayed, keyed by its uuid.
func TestHorizonDelayedDispatch(t *testing.T) {
	for _, tc := range []struct {
		rel, want string
		horizon   bool
	}{{"12.67", `"delay":null`, true}, {"12.67", `"delay":5`, false}, {"11.56", `"pushedAt"`, true}} {
		t.Run(fmt.Sprintf("%s/horizon=%v", tc.rel, tc.horizon), func(t *testing.T) {
			h := newHzEnv(t, tc.rel)
			if !tc.horizon {
				h.conn.Horizon = nil
			}
			id, err := h.dispatcher().Dispatch(h.Ctx, testkit.SendInvoice{InvoiceID: 7}, laraq.Delay(5*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			members := h.ZSet("queues:default:delayed")
			if len(members) != 1 {
				t.Fatalf("delayed: %v", members)
			}
			raw := members[0].Member.(string)
			if !strings.Contains(raw, tc.want) || strings.Contains(raw, `"delay":null`) != (tc.horizon && tc.rel == "12.67") {
				t.Errorf("delayed payload %s, want %s", raw, tc.want)
			}
			env, err := payload.Parse([]byte(raw))
			if err != nil {
				t.Fatal(err)
			}
			rec := h.hash(env.UUID)
			if !tc.horizon {
				if len(rec) != 0 || id != env.ID {
					t.Errorf("Horizon record %v without Horizon; id %s", rec, id)
				}
				return
			}
			if id != env.UUID || env.ID != env.UUID || rec["status"] != "pending" || rec["payload"] != raw {
				t.Errorf("dispatch id %s, payload id %s uuid %s, record %v", id, env.ID, env.UUID, rec)
			}
			if s, _ := h.Client.ZScore(h.Ctx, h.hzPrefix+"pending_jobs", env.UUID).Result(); s >= 0 {
				t.Errorf("pending_jobs score %v", s)
			}
		})
	}
}

// TestHorizonHandedBackJobIsPendingAgain: a job no handler takes, handed back to its
// queue with its attempt unspent, is recorded pending with the bytes now in the queue.
func TestHorizonHandedBackJobIsPendingAgain(t *testing.T) {
	h := newHzEnv(t, "11.56")
	id, err := h.dispatcher().Dispatch(h.Ctx, testkit.SendInvoice{InvoiceID: 1})
	if err != nil {
		t.Fatal(err)
	}
	cfg := h.Config(laraq.NewJobs())
	cfg.Unhandled, cfg.Now = laraq.UnhandledPolicy{Action: laraq.HandBackUnhandled, Delay: time.Hour}, nil
	w, err := laraq.NewWorker(h.conn, laraq.NewJobs(), cfg.WorkerConfig())
	if err != nil {
		t.Fatal(err)
	}
	stop, _ := h.Run(w)
	testkit.Eventually(t, 5*time.Second, "the hand-back", func() bool { return strings.Contains(h.Logs.String(), "handed back") })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	ready := h.List("queues:default")
	rec := h.hash(id)
	if len(ready) != 1 || rec["status"] != "pending" || rec["payload"] != ready[0] || rec["reserved_at"] == "" {
		t.Errorf("ready %v, record %v", ready, rec)
	}
}

// TestHorizonSupervisorRecords: a worker with HorizonSupervisor writes its master and
// supervisor while it runs (status paused while paused), trims the job lists as a PHP
// master does when asked to, and removes its records when it stops.
func TestHorizonSupervisorRecords(t *testing.T) {
	for _, trim := range []bool{true, false} {
		t.Run(fmt.Sprintf("trim=%v", trim), func(t *testing.T) {
			h := newHzEnv(t, "11.56")
			now := time.Now().Unix()
			old, fresh := fmt.Sprint(-(now - 7200)), fmt.Sprint(-(now - 60))
			for _, key := range []string{"recent_jobs", "completed_jobs", "failed_jobs"} {
				score := old
				if key == "failed_jobs" {
					score = fmt.Sprint(-(now - 8*24*3600)) // older than trim.failed, a week
				}
				if err := h.Client.Do(h.Ctx, "zadd", h.hzPrefix+key, score, "old", fresh, "fresh").Err(); err != nil {
					t.Fatal(err)
				}
			}
			cfg := h.Config(laraq.NewJobs())
			cfg.Now, cfg.Concurrency, cfg.Queues = nil, 4, []string{"high", "default"}
			wc := cfg.WorkerConfig()
			wc.HorizonSupervisor = &laraq.HorizonSupervisor{Master: "box-Ab12", Name: "go", Trim: trim, Interval: 50 * time.Millisecond}
			w, err := laraq.NewWorker(h.conn, laraq.NewJobs(), wc)
			if err != nil {
				t.Fatal(err)
			}
			stop, _ := h.Run(w)
			status := func(key string) string { return h.hash(key)["status"] }
			testkit.Eventually(t, 5*time.Second, "the master", func() bool { return status("master:box-Ab12") == "running" })
			sup := h.hash("supervisor:box-Ab12:go")
			if sup["master"] != "box-Ab12" || sup["processes"] != `{"redis:high,default":4}` || sup["pid"] != fmt.Sprint(os.Getpid()) ||
				!strings.Contains(sup["options"], `"queue":"high,default"`) || !strings.Contains(sup["options"], `"maxProcesses":4`) {
				t.Errorf("supervisor %v", sup)
			}
			if m := h.hash("master:box-Ab12"); m["environment"] != "laraq" || m["supervisors"] != `["box-Ab12:go"]` {
				t.Errorf("master %v", m)
			}
			if ttl, _ := h.Client.TTL(h.Ctx, h.hzPrefix+"master:box-Ab12").Result(); ttl <= 0 || ttl > 15*time.Second {
				t.Errorf("master TTL %s", ttl)
			}
			w.Pause()
			testkit.Eventually(t, 5*time.Second, "paused", func() bool {
				return status("master:box-Ab12") == "paused" && status("supervisor:box-Ab12:go") == "paused"
			})
			w.Resume()
			testkit.Eventually(t, 5*time.Second, "running", func() bool { return status("master:box-Ab12") == "running" })
			for _, key := range []string{"recent_jobs", "completed_jobs", "failed_jobs"} {
				members, _ := h.Client.ZRange(h.Ctx, h.hzPrefix+key, 0, -1).Result()
				want := "[fresh old]"
				if trim {
					want = "[fresh]"
				}
				if fmt.Sprint(members) != want {
					t.Errorf("%s: %v, want %s", key, members, want)
				}
			}
			if err := stop(); err != nil {
				t.Fatal(err)
			}
			for _, key := range []string{"master:box-Ab12", "supervisor:box-Ab12:go"} {
				if rec := h.hash(key); len(rec) != 0 {
					t.Errorf("%s left after stop: %v", key, rec)
				}
			}
			for _, key := range []string{"masters", "supervisors"} {
				if n, _ := h.Client.ZCard(h.Ctx, h.hzPrefix+key).Result(); n != 0 {
					t.Errorf("%s still lists %d", key, n)
				}
			}
		})
	}
}

func TestHorizonSupervisorConfigErrors(t *testing.T) {
	h := newHzEnv(t, "11.56")
	for name, tc := range map[string]struct {
		horizon bool
		sup     laraq.HorizonSupervisor
	}{
		"no Horizon":    {false, laraq.HorizonSupervisor{}},
		"colon":         {true, laraq.HorizonSupervisor{Master: "a:b"}},
		"long interval": {true, laraq.HorizonSupervisor{Interval: time.Minute}},
	} {
		conn := *h.conn
		if !tc.horizon {
			conn.Horizon = nil
		}
		cfg := h.Config(laraq.NewJobs()).WorkerConfig()
		cfg.HorizonSupervisor = &tc.sup
		if _, err := laraq.NewWorker(&conn, laraq.NewJobs(), cfg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	h.conn.Horizon.Trim.Failed = -1
	if _, err := laraq.NewDispatcher(h.conn); err == nil {
		t.Error("negative trim accepted")
	}
}

func TestHorizonMasterName(t *testing.T) {
	a, b := laraq.HorizonMasterName("Web 01.example.com"), laraq.HorizonMasterName("Web 01.example.com")
	re := regexp.MustCompile(`^web-01examplecom-[A-Za-z0-9]{4}$`)
	if !re.MatchString(a) || !re.MatchString(b) {
		t.Errorf("names %q, %q", a, b)
	}
	seen := map[string]bool{}
	for range 20 {
		seen[laraq.HorizonMasterName("x")] = true
	}
	if len(seen) < 15 {
		t.Errorf("20 names, %d distinct: the token is not random", len(seen))
	}
}

// TestHorizonReservedWhileRunning: a running job shows reserved on the dashboard while it
// runs, whether or not its reservation is later merged with a completion; both jobs end
// completed with reserved_at and completed_at.
func TestHorizonReservedWhileRunning(t *testing.T) {
	h := newHzEnv(t, "11.56")
	long, err := h.dispatcher().Dispatch(h.Ctx, testkit.SendInvoice{InvoiceID: 1})
	if err != nil {
		t.Fatal(err)
	}
	short, err := h.dispatcher().Dispatch(h.Ctx, testkit.SendInvoice{InvoiceID: 2})
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var statusWhileRunning atomic.Value
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\SendInvoice`, func(ctx context.Context, cmd *testkit.SendInvoice, job *laraq.JobInfo) error {
		if cmd.InvoiceID == 1 {
			testkit.Eventually(t, 5*time.Second, "the reserved record of a running job", func() bool {
				return h.hash(long)["status"] == "reserved"
			})
			statusWhileRunning.Store(h.hash(long)["status"])
			close(release)
		}
		return nil
	})
	cfg := h.Config(reg)
	cfg.Concurrency, cfg.StopWhenEmpty, cfg.Now = 1, true, nil
	w, err := laraq.NewWorker(h.conn, reg, cfg.WorkerConfig())
	if err != nil {
		t.Fatal(err)
	}
	if err := h.RunToEnd(w); !errors.Is(err, laraq.ErrQueueEmpty) {
		t.Fatal(err)
	}
	<-release
	if s := statusWhileRunning.Load(); s != "reserved" {
		t.Errorf("status while running %v", s)
	}
	for _, id := range []string{long, short} {
		rec := h.hash(id)
		if rec["status"] != "completed" || rec["reserved_at"] == "" || rec["completed_at"] == "" {
			t.Errorf("%s: %v", id, rec)
		}
	}
}
