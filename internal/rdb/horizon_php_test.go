package rdb

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/redis/go-redis/v9"
)

// The Horizon interop tests run one story twice on each Horizon-supported Laravel peer:
// once with a PHP worker (Laravel's Worker on Horizon's RedisQueue with Horizon's
// listeners) and once with a Go worker that uses this package, both times with the
// jobs dispatched, retried and monitored by Horizon's PHP code. Then everything is read
// back twice: the raw keys, and what the dashboard shows through Horizon's repositories
// and controllers. After ids, timestamps and runtimes are normalised, the two runs must
// be identical.

// storyJob is one job of a story, as op.php dispatch takes it.
type storyJob struct {
	Kind    string   `json:"kind,omitempty"`
	Plan    []string `json:"plan,omitempty"`
	Tries   int      `json:"tries,omitempty"`
	User    *int     `json:"user,omitempty"`
	Users   []int    `json:"users,omitempty"`
	Vanilla bool     `json:"vanilla,omitempty"`
}

// storyStep is one step: dispatch jobs, retry a failed job (the token of the job), or
// let the worker drain the queue.
type storyStep struct {
	dispatch []storyJob
	retry    string
	work     bool
	pop      bool          // take the next job and abandon it (a worker that died)
	wait     time.Duration // let time pass (reservations expire)
}

type story struct {
	monitor []string
	steps   []storyStep
	tags    []string // the tags the read-back asks about
}

func intp(n int) *int { return &n }

// stockTrim is horizon.trim of the stock config/horizon.php.
var stockTrim = map[string]int{"recent": 60, "pending": 60, "completed": 60, "recent_failed": 10080, "failed": 10080, "monitored": 10080}

// storyRun is one run of a story.
type storyRun struct {
	php        testenv.HorizonPHP
	goWorker   bool
	retryAfter int64 // the queue's retry_after, seconds
	// goDispatch: jobs are built by PHP's framework payload (what any dispatch writes),
	// prepared by payload.PrepareForHorizon and pushed with Push and Horizon.Pushed.
	goDispatch bool
	c          *redis.Client
	r          *RDB
	h          *Horizon
	ids        []string            // job ids in dispatch/retry order: token "J<n>" is ids[n-1]
	driverID   map[string]string   // the Redis driver's random payload id of a vanilla push → token
	plans      map[string]storyJob // by id
	failures   map[string]string   // by token: the exception text the Go worker records
}

func newStoryRun(t *testing.T, major int, goWorker bool, silenced []string) *storyRun {
	srv := testenv.RedisServer(t)
	c := srv.Client(t, 0)
	base := "lq" + testenv.RandomName(4)
	run := &storyRun{
		php: testenv.HorizonPHP{Major: major, Redis: srv, Prefix: base + "_database_",
			HorizonPrefix: base + "_horizon:", Silenced: silenced, Trim: stockTrim},
		goWorker: goWorker, c: c, plans: map[string]storyJob{}, driverID: map[string]string{}, retryAfter: 90,
	}
	var err error
	if run.r, err = New(c, Options{Prefix: run.php.Prefix}); err != nil {
		t.Fatal(err)
	}
	trim := HorizonTrim{Recent: stockTrim["recent"], Pending: stockTrim["pending"], Completed: stockTrim["completed"],
		RecentFailed: stockTrim["recent_failed"], Failed: stockTrim["failed"], Monitored: stockTrim["monitored"]}
	if run.h, err = NewHorizon(HorizonOptions{Prefix: run.php.HorizonPrefix, Trim: trim}); err != nil {
		t.Fatal(err)
	}
	if err := run.h.LoadScripts(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		keys, _ := testenv.Keys(ctx, c, base)
		if len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	return run
}

func (run *storyRun) play(t *testing.T, s story) {
	if len(s.monitor) > 0 {
		run.php.Run(t, "monitor", map[string]any{"tags": s.monitor}, nil)
	}
	for _, step := range s.steps {
		switch {
		case step.dispatch != nil && run.goDispatch:
			run.dispatch(t, step.dispatch)
		case step.dispatch != nil:
			var out []struct{ ID, Payload string }
			run.php.Run(t, "dispatch", map[string]any{"jobs": step.dispatch}, &out)
			for i, o := range out {
				run.ids = append(run.ids, o.ID)
				run.plans[o.ID] = step.dispatch[i]
				var p struct{ ID string }
				if err := json.Unmarshal([]byte(o.Payload), &p); err == nil && p.ID != o.ID {
					run.driverID[p.ID] = fmt.Sprintf("J%d-driver-id", len(run.ids))
				}
			}
		case step.retry != "":
			parent := run.id(t, step.retry)
			var out struct{ ID string }
			run.php.Run(t, "retry", map[string]any{"id": parent}, &out)
			run.ids = append(run.ids, out.ID)
			run.plans[out.ID] = run.plans[parent]
		case step.wait > 0:
			time.Sleep(step.wait)
		case step.pop && run.goWorker:
			run.take(t)
		case step.pop:
			var out struct{ ID *string }
			run.php.Run(t, "pop", map[string]any{}, &out)
			if out.ID == nil {
				t.Fatal("nothing to pop")
			}
		case step.work && run.goWorker:
			run.work(t)
		case step.work:
			var out struct{ Runs int }
			run.php.Run(t, "work", map[string]any{}, &out)
		}
	}
}

func (run *storyRun) id(t *testing.T, token string) string {
	n, err := strconv.Atoi(strings.TrimPrefix(token, "J"))
	if err != nil || n < 1 || n > len(run.ids) {
		t.Fatalf("no job %s", token)
	}
	return run.ids[n-1]
}

func (run *storyRun) token(id string) string {
	for i, v := range run.ids {
		if v == id {
			return "J" + strconv.Itoa(i+1)
		}
	}
	return ""
}

// dispatch is the Go dispatcher: the framework's payload of each job (no push), Horizon's
// preparation in Go, then Push and Pushed. What PHP learns from the job object the test
// states: tags() of TaggedStep and the Silenced interface of MarkedQuietStep.
func (run *storyRun) dispatch(t *testing.T, jobs []storyJob) {
	ctx := context.Background()
	type prepareCase struct {
		storyJob
		UUID string `json:"uuid"`
	}
	cases := make([]prepareCase, len(jobs))
	for i, j := range jobs {
		if j.Kind == "" {
			j.Kind = "step"
		}
		cases[i] = prepareCase{j, uuidV4(t)}
	}
	var out []struct{ Plain string }
	run.php.Run(t, "prepare", map[string]any{"cases": cases, "push": false}, &out)
	for i, o := range out {
		opts := payload.HorizonPrepare{PushedAt: time.Now(), SilencedClasses: run.php.Silenced}
		switch jobs[i].Kind {
		case "tagged":
			opts.Tags = []string{"laraq", "region:eu/west"}
		case "marked":
			opts.Silenced = true
		}
		prepared, err := payload.PrepareForHorizon([]byte(o.Plain), opts)
		if err != nil {
			t.Fatal(err)
		}
		job, err := HorizonJobFromPayload(prepared, "redis", "default")
		if err != nil {
			t.Fatal(err)
		}
		if err := run.r.Push(ctx, "default", prepared); err != nil {
			t.Fatal(err)
		}
		p := run.c.Pipeline()
		if err := run.h.Pushed(ctx, p, job); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatal(err)
		}
		run.ids = append(run.ids, job.ID)
		run.plans[job.ID] = jobs[i]
		time.Sleep(time.Millisecond) // distinct push times, as separate dispatches have
	}
}

func uuidV4(t *testing.T) string {
	u := payload.NewUUID()
	if len(u) != 36 {
		t.Fatalf("uuid %q", u)
	}
	return u
}

// take is RedisQueue::pop as the Go worker does it: migrate delayed, migrate reserved
// (JobsMigrated each time), the pop script, then JobReserved with the reserved copy. A nil
// env means the queue was empty.
func (run *storyRun) take(t *testing.T) (env *payload.Envelope, job HorizonJob, reserved []byte, reservedAt time.Time) {
	ctx := context.Background()
	const queue, conn = "default", "redis"
	exec := func(fn func(p redis.Pipeliner) error) {
		t.Helper()
		p := run.c.Pipeline()
		if err := fn(p); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("pipeline: %v", err)
		}
	}
	now := time.Now().Unix()
	for _, from := range []Zset{Delayed, Reserved} {
		moved, err := run.r.MigrateExpiredJobs(ctx, from, queue, now, NoLimit)
		if err != nil {
			t.Fatal(err)
		}
		var jobs []HorizonJob
		for _, m := range moved {
			j, err := HorizonJobFromPayload(m, conn, queue)
			if err != nil {
				t.Fatal(err)
			}
			jobs = append(jobs, j)
		}
		exec(func(p redis.Pipeliner) error { return run.h.Migrated(ctx, p, jobs...) })
	}
	popped, reserved, err := run.r.Pop(ctx, queue, now+run.retryAfter)
	if err != nil {
		t.Fatal(err)
	}
	if popped == nil {
		return nil, HorizonJob{}, nil, time.Time{}
	}
	if env, err = payload.Parse(popped); err != nil {
		t.Fatal(err)
	}
	if job, err = NewHorizonJob(env, conn, queue, reserved); err != nil {
		t.Fatal(err)
	}
	exec(func(p redis.Pipeliner) (err error) {
		reservedAt, err = run.h.Reserved(ctx, p, job)
		return err
	})
	return env, job, reserved, reservedAt
}

// work is the Go worker: what Laravel's Worker does with Horizon's RedisQueue, step by
// step, with this package's queue operations and Horizon bookkeeping.
func (run *storyRun) work(t *testing.T) {
	ctx := context.Background()
	const queue, conn = "default", "redis"
	k := run.r.Keys(queue)
	exec := func(fn func(p redis.Pipeliner) error) {
		t.Helper()
		p := run.c.Pipeline()
		if err := fn(p); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Exec(ctx); err != nil {
			t.Fatalf("pipeline: %v", err)
		}
	}
	for runs := 0; runs < 50; runs++ {
		n, err := run.r.Client().Eval(ctx, `return redis.call('llen', KEYS[1]) + redis.call('zcard', KEYS[2]) + redis.call('zcard', KEYS[3])`,
			[]string{k.Queue, k.Delayed, k.Reserved}).Int()
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			return
		}
		env, job, reserved, reservedAt := run.take(t)
		if env == nil {
			continue
		}
		time.Sleep(2 * time.Millisecond) // the job runs
		plan := run.plans[job.ID]
		attempt := int(env.Attempts) + 1
		action := "ok"
		if attempt <= len(plan.Plan) {
			action = plan.Plan[attempt-1]
		}
		if action == "throw-unless-retry" && job.RetryOf == "" {
			action = "throw"
		}
		tries := plan.Tries
		if tries == 0 {
			tries = 3
		}
		switch {
		case action == "release" || action == "throw" && attempt < tries:
			// $this->release(0), or the Worker releasing after an exception (backoff 0).
			if _, err := run.r.Release(ctx, queue, reserved, time.Now().Unix()); err != nil {
				t.Fatal(err)
			}
			exec(func(p redis.Pipeliner) error { return run.h.Released(ctx, p, job) })
		case action == "throw":
			exec(func(p redis.Pipeliner) error {
				p.ZRem(ctx, k.Reserved, reserved)
				return run.h.Failed(ctx, p, job, Failure{Exception: run.failures[run.token(job.ID)]})
			})
		default:
			exec(func(p redis.Pipeliner) error {
				p.ZRem(ctx, k.Reserved, reserved)
				if err := run.h.Completed(ctx, p, job); err != nil {
					return err
				}
				run.h.Metrics(ctx, p, queue, job.Name, reservedAt)
				return nil
			})
		}
	}
	t.Fatal("the Go worker did not drain the queue in 50 runs")
}

// readBack returns the raw Horizon keys and the dashboard's view, both normalised.
func (run *storyRun) readBack(t *testing.T, tags []string) (raw, dash any) {
	rawState := dumpAll(t, run.c, run.php.HorizonPrefix)
	var out any
	run.php.Run(t, "read", map[string]any{"ids": run.ids, "tags": tags, "snapshot": true}, &out)
	n := run.normaliser()
	return n.JSON(t, rawState), n.Value("", out)
}

func TestHorizonWorkerMatchesPHP(t *testing.T) {
	s := story{
		monitor: []string{"laraq", `Laraq\HorizonTest\User:1`},
		tags:    []string{"laraq", "region:eu/west", `Laraq\HorizonTest\User:1`, `Laraq\HorizonTest\User:2`, `Laraq\HorizonTest\User:3`},
		steps: []storyStep{
			{dispatch: []storyJob{
				{Plan: []string{"ok"}, User: intp(1), Users: []int{1, 2}},       // J1 monitored via User:1
				{Plan: []string{"release", "ok"}},                               // J2 released, migrated, completed
				{Plan: []string{"throw-unless-retry"}, Tries: 1, User: intp(3)}, // J3 fails; its retries complete
				{Plan: []string{"throw", "ok"}, Tries: 2},                       // J4 exception, released, completed
				{Kind: "quiet"},  // J5 silenced by horizon.silenced
				{Kind: "marked"}, // J6 silenced by the Silenced interface
				{Kind: "tagged"}, // J7 explicit tags, "laraq" monitored
				{Kind: "tagged", Plan: []string{"throw"}, Tries: 1}, // J8 fails with tags
			}},
			{work: true},
			{retry: "J3"}, // J9 completes: J3's retried_by entry becomes completed
			{retry: "J8"}, // J10 fails again: J8's entry becomes failed
			{work: true},
			{retry: "J3"}, // J11: a second entry on J3
			{work: true},
		},
	}
	for _, major := range testenv.HorizonMajors {
		t.Run(fmt.Sprintf("laravel-%d", major), func(t *testing.T) {
			silenced := []string{`Laraq\HorizonTest\QuietStep`}
			php := newStoryRun(t, major, false, silenced)
			php.play(t, s)
			phpRaw, phpDash := php.readBack(t, s.tags)

			gow := newStoryRun(t, major, true, silenced)
			gow.failures = failuresOf(t, php, phpDash)
			gow.play(t, s)
			goRaw, goDash := gow.readBack(t, s.tags)

			if len(php.ids) != 11 || len(gow.ids) != 11 {
				t.Fatalf("jobs: php %d, go %d", len(php.ids), len(gow.ids))
			}
			assertSameJSON(t, "raw keys", goRaw, phpRaw)
			assertSameJSON(t, "dashboard", goDash, phpDash)
			if t.Failed() {
				return
			}
			// The story exercised what it claims to, in both runs.
			d := phpDash.(map[string]any)
			counts := d["counts"].(map[string]any)
			for k, want := range map[string]string{"completed": "6", "silenced": "2", "failed": "3", "recent": "11"} {
				if got := fmt.Sprint(counts[k]); got != want {
					t.Errorf("count %s = %s, want %s", k, got, want)
				}
			}
			rec := d["records"].(map[string]any)
			if rb := fmt.Sprint(rec["J3"].(map[string]any)["retried_by"]); !strings.Contains(rb, "status:completed") {
				t.Errorf("J3 retried_by %s", rb)
			}
			if rb := fmt.Sprint(rec["J8"].(map[string]any)["retried_by"]); !strings.Contains(rb, "status:failed") {
				t.Errorf("J8 retried_by %s", rb)
			}
		})
	}
}

// failuresOf returns the exception text of each failed job of the PHP run by token, for
// the Go worker to record (a Go job's failure text is the worker's to choose; using
// PHP's makes the records comparable byte for byte).
func failuresOf(t *testing.T, php *storyRun, dash any) map[string]string {
	out := map[string]string{}
	for token, rec := range dash.(map[string]any)["records"].(map[string]any) {
		if r, ok := rec.(map[string]any); ok {
			if e, ok := r["exception"].(string); ok && e != "" {
				out[token] = e
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("the PHP run recorded no exception")
	}
	return out
}

// TestHorizonAdoptsJobsHorizonDidNotPush runs jobs pushed by the framework's own
// RedisQueue (a vanilla Laravel or laraq dispatch) through both workers. A PHP Horizon
// worker records them without id: the dashboard drops the completed ones (getJobs keeps
// rows whose id is set) and never counts them as recent. The Go worker adopts them: the
// difference must be exactly the adoption (id, connection, queue, name, created_at, the
// recent_jobs entry), and everything else must match.
func TestHorizonAdoptsJobsHorizonDidNotPush(t *testing.T) {
	s := story{
		steps: []storyStep{
			{dispatch: []storyJob{
				{Vanilla: true}, // J1 completes
				{Vanilla: true, Plan: []string{"throw"}, Tries: 1},              // J2 fails
				{Vanilla: true, Plan: []string{"release", "ok"}, User: intp(2)}, // J3 released, migrated, completes
			}},
			{work: true},
		},
	}
	const name = `Laraq\HorizonTest\Step`
	for _, major := range testenv.HorizonMajors {
		t.Run(fmt.Sprintf("laravel-%d", major), func(t *testing.T) {
			php := newStoryRun(t, major, false, nil)
			php.play(t, s)
			phpRaw, phpDash := php.readBack(t, nil)
			gow := newStoryRun(t, major, true, nil)
			gow.failures = failuresOf(t, php, phpDash)
			gow.play(t, s)
			goRaw, goDash := gow.readBack(t, nil)

			// Raw keys: the adoption, then nothing else.
			gr, pr := goRaw.(map[string]any), phpRaw.(map[string]any)
			for _, tok := range []string{"J1", "J2", "J3"} {
				gh := gr[tok].(map[string]any)["hash"].(map[string]any)
				want := map[string]any{"id": tok, "connection": "redis", "queue": "default", "name": name, "created_at": "T"}
				for f, v := range want {
					if gh[f] != v {
						t.Errorf("%s: go hash %s = %v, want %v", tok, f, gh[f], v)
					}
					delete(gh, f)
					if ph, ok := pr[tok].(map[string]any)["hash"].(map[string]any); ok && f != "created_at" {
						delete(ph, f)
					}
				}
			}
			if got := fmt.Sprint(gr["recent_jobs"]); !strings.Contains(got, "J1") || !strings.Contains(got, "J2") || !strings.Contains(got, "J3") {
				t.Errorf("go recent_jobs %s", got)
			}
			if pr["recent_jobs"] != nil {
				t.Errorf("php recent_jobs %v", pr["recent_jobs"])
			}
			delete(gr, "recent_jobs")
			assertSameJSON(t, "raw keys beyond the adoption", goRaw, phpRaw)

			// Dashboard: Go's completed jobs are listed, PHP's are not.
			gd, pd := goDash.(map[string]any), phpDash.(map[string]any)
			grec, prec := gd["records"].(map[string]any), pd["records"].(map[string]any)
			for _, tok := range []string{"J1", "J3"} {
				if prec[tok] != nil {
					t.Errorf("php lists %s: %v", tok, prec[tok])
				}
				r, ok := grec[tok].(map[string]any)
				if !ok || r["id"] != tok || r["status"] != "completed" || r["name"] != name || r["queue"] != "default" {
					t.Errorf("go record %s: %v", tok, grec[tok])
				}
				delete(grec, tok)
				delete(prec, tok)
			}
			for _, l := range []string{"completed", "recent"} {
				if n := len(gd["lists"].(map[string]any)[l].([]any)); n == 0 {
					t.Errorf("go lists no %s jobs", l)
				}
				if n := len(pd["lists"].(map[string]any)[l].([]any)); n != 0 {
					t.Errorf("php lists %d %s jobs", n, l)
				}
				delete(gd["lists"].(map[string]any), l)
				delete(pd["lists"].(map[string]any), l)
			}
			for _, m := range []map[string]any{gd, pd} {
				delete(m["counts"].(map[string]any), "recent")
				delete(m["counts"].(map[string]any), "total_recent")
				delete(m["stats"].(map[string]any), "recentJobs")
			}
			assertSameJSON(t, "dashboard beyond the adoption", goDash, phpDash)
		})
	}
}

// TestHorizonGoDispatchMatchesPHP dispatches the jobs of a story through Horizon's PHP
// RedisQueue and, in the second run, with payload.PrepareForHorizon, Push and
// Horizon.Pushed; a PHP Horizon worker then runs both. The records must be the same
// before the work (what StoreJob and StoreMonitoredTags write) and after it.
func TestHorizonGoDispatchMatchesPHP(t *testing.T) {
	s := story{
		monitor: []string{"laraq", `Laraq\HorizonTest\User:1`},
		tags:    []string{"laraq", "region:eu/west", `Laraq\HorizonTest\User:1`, `Laraq\HorizonTest\User:2`},
		steps: []storyStep{{dispatch: []storyJob{
			{Plan: []string{"ok"}, User: intp(1), Users: []int{1, 2}},
			{Plan: []string{"release", "ok"}},
			{Plan: []string{"throw"}, Tries: 1, User: intp(2)},
			{Kind: "quiet"},
			{Kind: "marked"},
			{Kind: "tagged"},
		}}},
	}
	work := story{steps: []storyStep{{work: true}}}
	for _, major := range testenv.HorizonMajors {
		t.Run(fmt.Sprintf("laravel-%d", major), func(t *testing.T) {
			silenced := []string{`Laraq\HorizonTest\QuietStep`}
			php := newStoryRun(t, major, false, silenced)
			php.play(t, s)
			phpRaw, phpDash := php.readBack(t, s.tags)
			gor := newStoryRun(t, major, false, silenced)
			gor.goDispatch = true
			gor.play(t, s)
			goRaw, goDash := gor.readBack(t, s.tags)
			assertSameJSON(t, "pushed: raw keys", goRaw, phpRaw)
			assertSameJSON(t, "pushed: dashboard", goDash, phpDash)

			php.play(t, work)
			gor.play(t, work)
			phpRaw, phpDash = php.readBack(t, s.tags)
			goRaw, goDash = gor.readBack(t, s.tags)
			assertSameJSON(t, "worked: raw keys", goRaw, phpRaw)
			assertSameJSON(t, "worked: dashboard", goDash, phpDash)
			if n := fmt.Sprint(phpDash.(map[string]any)["counts"].(map[string]any)["failed"]); n != "1" {
				t.Errorf("failed count %s", n)
			}
		})
	}
}

// TestHorizonExpiredReservationMatchesPHP abandons a reserved job (a worker that died):
// after retry_after the next pop migrates its reserved copy back (JobsMigrated from
// :reserved, attempts already counted) and it runs again.
func TestHorizonExpiredReservationMatchesPHP(t *testing.T) {
	s := story{steps: []storyStep{
		{dispatch: []storyJob{{Plan: []string{"ok"}, User: intp(1)}, {Plan: []string{"throw"}, Tries: 1}}},
		{pop: true},
		{wait: 2100 * time.Millisecond},
		{work: true},
	}}
	for _, major := range testenv.HorizonMajors {
		t.Run(fmt.Sprintf("laravel-%d", major), func(t *testing.T) {
			t.Parallel() // the majors wait at the same time
			runs := [2]*storyRun{}
			for i, goWorker := range []bool{false, true} {
				runs[i] = newStoryRun(t, major, goWorker, nil)
				runs[i].retryAfter = 1
				runs[i].php.Extra = map[string]string{"LARAQ_RETRY_AFTER": "1"}
			}
			runs[0].play(t, s)
			phpRaw, phpDash := runs[0].readBack(t, nil)
			runs[1].failures = failuresOf(t, runs[0], phpDash)
			runs[1].play(t, s)
			goRaw, goDash := runs[1].readBack(t, nil)
			assertSameJSON(t, "raw keys", goRaw, phpRaw)
			assertSameJSON(t, "dashboard", goDash, phpDash)
			rec := phpDash.(map[string]any)["records"].(map[string]any)["J1"].(map[string]any)
			if a := fmt.Sprint(rec["payload"].(map[string]any)["attempts"]); a != "2" || rec["status"] != "completed" {
				t.Errorf("J1 ran again with attempts %s, status %v", a, rec["status"])
			}
		})
	}
}
