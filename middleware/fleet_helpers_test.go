package middleware_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq"
	busdb "github.com/laraq/laraq/bus/database"
	cachedb "github.com/laraq/laraq/cache/database"
	"github.com/laraq/laraq/failed"
	fdb "github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/internal/testenv"
	mw "github.com/laraq/laraq/middleware"
)

// The fleet tests run the real Illuminate\Queue\Worker of each release (work.php) and a
// laraq worker on one queue, the jobs App\Jobs\MiddlewareGuarded of
// testdata/php/jobs_middleware.php, whose middleware() the Go type below returns the same.

// guarded is App\Jobs\MiddlewareGuarded in Go.
type guarded struct {
	Key     string  `php:"key,default=\"k\""`
	Guard   string  `php:"guard,default=\"none\""`
	Wait    *string `php:"wait,default=null"`
	Throw   bool    `php:"throw,default=false"`
	BatchID *string `php:"batchId,default=null"`
	laraq.Queueable
}

const guardedClass = `App\Jobs\MiddlewareGuarded`

func (guarded) PHPClass() string { return guardedClass }

// Middleware is the class's middleware(), guard by guard.
func (j guarded) Middleware() []laraq.Middleware {
	switch j.Guard {
	case "overlap":
		return []laraq.Middleware{mw.WithoutOverlapping(j.Key).ReleaseAfter(7 * time.Second).ExpireAfter(2 * time.Minute)}
	case "overlap-dont-release":
		return []laraq.Middleware{mw.WithoutOverlapping(j.Key).DontRelease().ExpireAfter(2 * time.Minute)}
	case "limited":
		return []laraq.Middleware{mw.RateLimited("fleet")}
	case "limited-dont-release":
		return []laraq.Middleware{mw.RateLimited("fleet").DontRelease()}
	case "limited-redis":
		return []laraq.Middleware{mw.RateLimitedWithRedis("fleet")}
	case "throttled":
		return []laraq.Middleware{mw.ThrottlesExceptions(2, 5*time.Minute).Backoff(time.Minute)}
	case "throttled-redis":
		return []laraq.Middleware{mw.ThrottlesExceptionsWithRedis(2, 5*time.Minute).Backoff(time.Minute)}
	case "skip":
		return []laraq.Middleware{mw.SkipWhen(true)}
	case "batch-cancelled":
		return []laraq.Middleware{mw.SkipIfBatchCancelled()}
	case "fail-on-exception":
		return []laraq.Middleware{mw.FailOnException(func(err error) bool {
			var e *failed.Exception
			return errors.As(err, &e) && e.Class == "RuntimeException"
		})}
	case "release":
		return []laraq.Middleware{mw.ReleaseWhen(true, 15*time.Second)}
	}
	return nil
}

// fleetLimiters are the application's RateLimiter::for, as jobs_middleware.php defines it.
func fleetLimiters() *mw.Limiters {
	return mw.NewLimiters().For("fleet", func(*laraq.JobInfo) []mw.Limit { return []mw.Limit{mw.PerMinute(3).By("fleet")} })
}

// guardedJob is a dispatch.php request for the class.
func guardedJob(props string) string {
	return `{"class":"App\\Jobs\\MiddlewareGuarded","props":{` + props + `}}`
}

// fleet is one queue shared by PHP and Go workers: a Redis prefix, a failed-job and batch
// database, optionally a database cache store, and what each side's handlers ran.
type fleet struct {
	t        *testing.T
	srv      *testenv.Redis
	major    int
	rel      laraq.Release
	side     side   // prefix and the database cache store's file
	dbFile   string // failed_jobs and job_batches
	record   string // what PHP's handlers ran
	database bool

	mu    sync.Mutex
	goRan []string
}

func newFleet(t *testing.T, srv *testenv.Redis, major int, database bool) *fleet {
	t.Helper()
	f := &fleet{t: t, srv: srv, major: major, rel: releaseOf(t, major), side: newSide(t, database), database: database,
		dbFile: filepath.Join(t.TempDir(), "app-"+testenv.RandomName(4)+".sqlite"), record: filepath.Join(t.TempDir(), "records.jsonl")}
	store, err := fdb.Open(context.Background(), "sqlite:"+f.dbFile, fdb.Options{CreateTable: fdb.CreateIfMissing})
	if err != nil {
		t.Fatal(err)
	}
	_ = store.Close()
	f.exec(`create table job_batches (id varchar not null primary key, name varchar not null, total_jobs integer not null,
		pending_jobs integer not null, failed_jobs integer not null, failed_job_ids text not null, options text,
		cancelled_at integer, created_at integer not null, finished_at integer)`)
	return f
}

// exec runs SQL on the application's database.
func (f *fleet) exec(query string, args ...any) {
	f.t.Helper()
	db, _, _, err := fdb.OpenDB(context.Background(), "sqlite:"+f.dbFile)
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query, args...); err != nil {
		f.t.Fatal(err)
	}
}

func (f *fleet) php() testenv.PHPEnv {
	return testenv.PHPEnv{Major: f.major, Redis: f.srv, Prefix: f.side.prefix, CachePrefix: cachePrefix, CacheStoreDB: f.side.dbFile,
		FailedDB: f.dbFile, Record: f.record}
}

// dispatch queues jobs through PHP's dispatcher and returns their payloads.
func (f *fleet) dispatch(reqs ...string) []string {
	f.t.Helper()
	var out []string
	for _, d := range f.php().Dispatch(f.t, nil, reqs...) {
		out = append(out, d.Payload)
	}
	return out
}

// dispatchGuarded queues n jobs of the class with this guard, keys "1" to n.
func (f *fleet) dispatchGuarded(n int, guard string) {
	f.t.Helper()
	reqs := make([]string, n)
	for i := range reqs {
		reqs[i] = guardedJob(fmt.Sprintf(`"key":"%d","guard":"%s"`, i+1, guard))
	}
	f.dispatch(reqs...)
}

// push queues payloads as they are (RPUSH, as RedisQueue::pushRaw).
func (f *fleet) push(payloads ...string) {
	f.t.Helper()
	c := f.srv.Client(f.t, 0)
	for _, p := range payloads {
		if err := c.RPush(context.Background(), f.side.prefix+"queues:default", p).Err(); err != nil {
			f.t.Fatal(err)
		}
	}
}

// phpStart starts `work.php` (queue:work) with args; wait for it with phpWait.
func (f *fleet) phpStart(args ...string) (cmd *exec.Cmd, out *bytes.Buffer) {
	f.t.Helper()
	cmd = f.php().Command("work.php", append([]string{"--sleep=0"}, args...)...)
	out = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	return cmd, out
}

func (f *fleet) phpWait(cmd *exec.Cmd, out *bytes.Buffer) {
	f.t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			f.t.Fatalf("work.php: %v\n%s", err, out)
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		f.t.Fatalf("work.php did not stop\n%s", out)
	}
}

// phpOnce is `queue:work --once`: the next job, if any.
func (f *fleet) phpOnce(args ...string) {
	f.t.Helper()
	f.phpWait(f.phpStart(append([]string{"--once"}, args...)...))
}

// connection is the Go side's Connection to the same Redis, cache store and database.
func (f *fleet) connection() *laraq.Connection {
	f.t.Helper()
	ctx := context.Background()
	db0 := f.srv.Client(f.t, 0)
	conn := &laraq.Connection{Client: db0, Prefix: f.side.prefix, Release: f.rel,
		Cache: laraq.CacheStore{Client: f.srv.Client(f.t, 1), Prefix: cachePrefix}}
	failedStore, err := fdb.Open(ctx, "sqlite:"+f.dbFile, fdb.Options{})
	if err != nil {
		f.t.Fatal(err)
	}
	batches, err := busdb.Open(ctx, "sqlite:"+f.dbFile, "job_batches")
	if err != nil {
		f.t.Fatal(err)
	}
	conn.Failed, conn.Batches = failedStore, batches
	conn.Owned = append(conn.Owned, failedStore, batches)
	if f.database {
		store, err := cachedb.Open(ctx, "sqlite:"+f.side.dbFile, cachedb.Options{Prefix: cachePrefix})
		if err != nil {
			f.t.Fatal(err)
		}
		conn.Cache.Store = store
		conn.Owned = append(conn.Owned, store)
	}
	f.t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// goWorker returns a laraq worker running the Go type's handler, which records what ran,
// waits for a wait file and throws as PHP's does. untyped registers the class with
// HandleFunc instead: no Go declaration, no middleware() of its own.
func (f *fleet) goWorker(cfg laraq.WorkerConfig, untyped bool) *laraq.Worker {
	f.t.Helper()
	jobs := laraq.NewJobs()
	handle := func(ctx context.Context, j guarded) error {
		f.mu.Lock()
		f.goRan = append(f.goRan, "go "+j.Key)
		f.mu.Unlock()
		if j.Wait != nil {
			waitGate(*j.Wait)
		}
		if j.Throw {
			return failed.New("RuntimeException", "boom", 0)
		}
		return nil
	}
	if untyped {
		jobs.HandleFunc(guardedClass, func(ctx context.Context, info *laraq.JobInfo) error {
			var j guarded
			if err := info.Bind(&j); err != nil {
				return err
			}
			return handle(ctx, j)
		})
	} else {
		laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[guarded]) error { return handle(ctx, j.Command) })
	}
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if cfg.Limiters == nil {
		cfg.Limiters = fleetLimiters()
	}
	cfg.Sleep = -1
	w, err := laraq.NewWorker(f.connection(), jobs, cfg)
	if err != nil {
		f.t.Fatal(err)
	}
	return w
}

// goOnce runs a Go worker for the next job, if any, as --once.
func (f *fleet) goOnce(cfg laraq.WorkerConfig) {
	f.t.Helper()
	cfg.MaxJobs, cfg.StopWhenEmpty = 1, true
	f.goRun(f.goWorker(cfg, false))
}

func (f *fleet) goRun(w *laraq.Worker) {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := w.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) && !errors.Is(err, laraq.ErrMaxJobs) {
		f.t.Fatalf("Go worker: %v", err)
	}
}

// waitGate writes path.started and waits for path, at most 20 s, as the PHP handler does.
func waitGate(path string) {
	_ = os.WriteFile(path+".started", []byte("1"), 0o644)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ran lists the jobs whose handler ran, "php KEY" or "go KEY", sorted.
func (f *fleet) ran() []string {
	f.t.Helper()
	f.mu.Lock()
	out := append([]string(nil), f.goRan...)
	f.mu.Unlock()
	for _, r := range testenv.ReadRecords(f.t, f.record) {
		if r.Event == "handle" && r.Class == guardedClass {
			out = append(out, fmt.Sprint("php ", r.Fields["key"]))
		}
	}
	sort.Strings(out)
	return out
}

// failedRows lists the failed_jobs rows: their exception's first line, without its place.
func (f *fleet) failedRows() []string {
	f.t.Helper()
	db, _, _, err := fdb.OpenDB(context.Background(), "sqlite:"+f.dbFile)
	if err != nil {
		f.t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`select exception from failed_jobs order by id`)
	if err != nil {
		f.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var e string
		if err := rows.Scan(&e); err != nil {
			f.t.Fatal(err)
		}
		line, _, _ := strings.Cut(e, "\n")
		if i := strings.LastIndex(line, " in "); i >= 0 {
			line = line[:i]
		}
		out = append(out, line)
	}
	return out
}

// delayed returns the :delayed set: each job's attempts and score.
func (f *fleet) delayed() map[string]float64 {
	f.t.Helper()
	out := map[string]float64{}
	for _, z := range f.srv.Client(f.t, 0).ZRangeWithScores(context.Background(), f.side.prefix+"queues:default:delayed", 0, -1).Val() {
		out[z.Member.(string)] = z.Score
	}
	return out
}

// gate is a file a handler waits for; started reports that the handler runs.
type gate string

func newGate(t *testing.T) gate {
	return gate(filepath.Join(t.TempDir(), "gate-"+testenv.RandomName(3)))
}

func (g gate) waitStarted(t *testing.T) {
	t.Helper()
	waitFile(t, string(g)+".started")
}

func (g gate) open(t *testing.T) {
	t.Helper()
	if err := os.WriteFile(string(g), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// left says what is still ready or reserved; "" when nothing.
func (f *fleet) left() string {
	f.t.Helper()
	ctx := context.Background()
	c := f.srv.Client(f.t, 0)
	q := f.side.prefix + "queues:default"
	ready, reserved := c.LLen(ctx, q).Val(), c.ZCard(ctx, q+":reserved").Val()
	if ready == 0 && reserved == 0 {
		return ""
	}
	return fmt.Sprintf("(ready %d, reserved %d)", ready, reserved)
}

// shipsSince is the first release of each middleware (docs/middleware.md;
// Illuminate\Queue\Middleware arrived in 8.x, testenv.JobMiddleware).
var shipsSince = map[string][3]int{
	"WithoutOverlapping": {8, 11, 0}, "RateLimited": {8, 11, 0}, "RateLimitedWithRedis": {8, 11, 0},
	"ThrottlesExceptions": {8, 32, 0}, "ThrottlesExceptionsWithRedis": {8, 32, 0},
	"SkipIfBatchCancelled": {9, 49, 0}, "Skip": {11, 23, 0}, "FailOnException": {12, 19, 0}, "Release": {13, 18, 1},
}

// needMiddleware skips, by name, a test of a middleware the release does not ship.
func needMiddleware(t *testing.T, rel laraq.Release, names ...string) {
	t.Helper()
	for _, n := range names {
		v, ok := shipsSince[n]
		if !ok {
			t.Fatalf("no release known for %s", n)
		}
		if !rel.AtLeast(v[0], v[1], v[2]) {
			t.Skipf("Laravel %s does not ship %s (%d.%d.%d+)", rel, n, v[0], v[1], v[2])
		}
	}
}
