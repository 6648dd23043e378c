package chaos

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// Options configure a scenario's Env.
type Options struct {
	// RetryAfter is the connection's retry_after in seconds, for Go and PHP workers.
	RetryAfter int
	// MariaDB puts failed_jobs on a MariaDB of the scenario's own (which Env.MariaDB
	// can stop and start); otherwise on a SQLite file.
	MariaDB bool
	// FastJournal puts the recorder's journal on the memory file system (still synced
	// per run, which there costs nothing): on a disk the sync dominates each job's cycle.
	// The recorder lives in the test process, which no fault kills, so the records are
	// as safe from a worker's kill -9 either way.
	FastJournal bool
	// Sentinel adds a replica of the scenario's redis-server and three Sentinels
	// watching it (Env.Sentinels): the workers and the harness reach the master through
	// them, so that the master can fail over.
	Sentinel bool
	// Table collects the scenario's Result.
	Table *Table
}

// Env is one scenario's world: its own redis-server (AOF on), recorder, failed-job
// database and fleet of workers, on one queue under a fresh prefix.
type Env struct {
	T          testing.TB
	Name       string
	Dir        string // journals and logs; kept when the test fails
	Tag        string // 6 hex digits in every job key of the scenario
	Prefix     string
	Queue      string
	RetryAfter int
	Redis      *Redis
	Recorder   *Recorder
	Fleet      *Fleet
	MariaDB    *MariaDB // nil unless Options.MariaDB
	FailedDSN  string
	// Client is on the scenario's master: a failover client through the Sentinels when
	// there are some.
	Client    *redis.Client
	Sentinels *Sentinels // nil unless Options.Sentinel

	table  *Table
	start  time.Time
	mu     sync.Mutex
	jobs   []Job
	faults map[string]int
	order  []string
	checks []Check
	inputs Inputs // what Finish gathered

	tolerated map[string]string // problem kind -> why it does not fail this scenario
}

// NewEnv starts a scenario's servers and recorder; bin is the laraq binary. Everything
// is stopped when the test ends; the directory is removed unless the test failed or
// CHAOS_KEEP is set.
func NewEnv(t testing.TB, bin string, opts Options) *Env {
	t.Helper()
	testenv.NeedPHP(t)
	name := filepath.Base(t.Name())
	if opts.RetryAfter == 0 {
		opts.RetryAfter = 90
	}
	e := &Env{T: t, Name: name, Tag: testenv.RandomName(3), Queue: "chaos", RetryAfter: opts.RetryAfter,
		table: opts.Table, start: time.Now(), faults: map[string]int{}}
	e.Prefix = "cx" + e.Tag + "_database_"
	var err error
	if e.Dir, err = os.MkdirTemp("", "laraq-chaos-"+name+"-"); err != nil {
		t.Fatal(err)
	}
	// Servers' files go to memory when there is a memory file system: their fsyncs would
	// otherwise stall the other tests on a shared disk. The journals stay on e.Dir.
	fast, err := os.MkdirTemp(memDir(), "laraq-chaos-srv-")
	if err == nil {
		// mariadbd runs as the mysql account when the tests run as root.
		err = os.Chmod(fast, 0o755)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = os.RemoveAll(fast)
		if t.Failed() || os.Getenv("CHAOS_KEEP") != "" {
			t.Logf("scenario files kept in %s", e.Dir)
			return
		}
		_ = os.RemoveAll(e.Dir)
	})
	redisDir := filepath.Join(fast, "redis")
	if err := os.Mkdir(redisDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if e.Redis, err = StartRedis(redisDir); err != nil {
		testenv.Need(t, false, "%v", err)
	}
	t.Cleanup(e.Redis.Close)
	e.Client = e.Redis.Client(0)
	if opts.Sentinel {
		sdir := filepath.Join(fast, "sentinel")
		if err := os.Mkdir(sdir, 0o755); err != nil {
			t.Fatal(err)
		}
		if e.Sentinels, err = StartSentinels(sdir, e.Redis); err != nil {
			testenv.Need(t, false, "%v", err)
		}
		t.Cleanup(e.Sentinels.Close)
		_ = e.Client.Close()
		e.Client = e.Sentinels.Client(0)
	}
	t.Cleanup(func() { _ = e.Client.Close() })
	journalDir := e.Dir
	if opts.FastJournal {
		journalDir = fast
	}
	if e.Recorder, err = NewRecorder(filepath.Join(journalDir, "recorder.journal")); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = e.Recorder.Close() })

	if opts.MariaDB {
		dbDir := filepath.Join(fast, "mariadb")
		if err := os.Mkdir(dbDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if e.MariaDB, err = StartMariaDB(dbDir); err != nil {
			testenv.Need(t, false, "%v", err)
		}
		t.Cleanup(e.MariaDB.Close)
		e.FailedDSN = e.MariaDB.DSN()
	} else {
		e.FailedDSN = "sqlite:" + filepath.Join(e.Dir, "failed.sqlite")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := CreateFailedTable(ctx, e.FailedDSN); err != nil {
		t.Fatal(err)
	}

	e.Fleet = &Fleet{Dir: e.Dir, Bin: bin, RedisURL: e.Redis.URL(0), Prefix: e.Prefix, Recorder: e.Recorder, PHPEnv: e.phpEnv}
	if e.Sentinels != nil {
		e.Fleet.RedisArgs = e.Sentinels.Args()
	}
	t.Cleanup(e.Fleet.KillAll)
	return e
}

// memDir is /dev/shm when it is a usable directory, else the temporary directory.
func memDir() string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if f, err := os.CreateTemp("/dev/shm", "laraq-chaos-probe-"); err == nil {
			_ = f.Close()
			_ = os.Remove(f.Name())
			return "/dev/shm"
		}
	}
	return os.TempDir()
}

// phpEnv is the environment of a PHP worker or dispatcher (bootstrap.php's variables).
func (e *Env) phpEnv(worker, record string) []string { return e.phpEnvPrefix(worker, record, e.Prefix) }

// phpEnvPrefix is phpEnv with another Redis prefix.
func (e *Env) phpEnvPrefix(worker, record, prefix string) []string {
	pe := testenv.PHPEnv{
		Redis: &testenv.Redis{Addr: e.Redis.Addr(), Port: e.Redis.Port}, Prefix: prefix,
		RetryAfter: e.RetryAfter, FailedDB: e.FailedDSN,
		Extra: map[string]string{"LARAQ_CHAOS_WORKER": worker, "LARAQ_CHAOS_RECORD": record},
	}
	// bootstrap.php reads the same DSNs: sqlite:PATH and mysql://user:pass@host:port/db.
	return pe.Environ()
}

// Fault counts one injected fault of a kind ("kill -9", "redis stall 10s", ...).
func (e *Env) Fault(kind string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.faults[kind] == 0 {
		e.order = append(e.order, kind)
	}
	e.faults[kind]++
	e.T.Logf("%s: fault %s", e.Name, kind)
}

// Tolerate keeps problems of a kind (see Problems) from failing the scenario: they are
// logged with why. For an open fault the short form can hit by chance; remove the call
// once the fault is fixed.
func (e *Env) Tolerate(kind, why string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.tolerated == nil {
		e.tolerated = map[string]string{}
	}
	e.tolerated[kind] = why
}

// Check records a measurement with its limit.
func (e *Env) Check(name string, value, limit time.Duration) {
	e.AddCheck(Check{Name: name, Value: value, Limit: limit})
}

// AddCheck records a measurement.
func (e *Env) AddCheck(c Check) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.checks = append(e.checks, c)
}

// ChaosJobs makes n ChaosJob jobs of the scenario; actions(i) gives job i's actions.
func (e *Env) ChaosJobs(kind string, n int, via string, actions func(i int) []string) []Job {
	jobs := make([]Job, n)
	for i, k := range Keys(e.Tag, kind, n) {
		jobs[i] = Job{Key: k, Queue: e.Queue, Actions: actions(i), Via: via}
	}
	return jobs
}

// HostileJobs makes n hostile payloads, cycling through HostileKinds.
func (e *Env) HostileJobs(n int) []Job {
	jobs := make([]Job, n)
	for i := range jobs {
		kind := HostileKinds[i%len(HostileKinds)]
		jobs[i] = Job{Key: fmt.Sprintf("cx%s-%s-%d", e.Tag, kind, i), Queue: e.Queue, Via: ViaRaw, Hostile: kind}
	}
	return jobs
}

// Dispatch queues jobs (in order within each way of dispatching) and remembers them
// for the accounting.
func (e *Env) Dispatch(jobs []Job) {
	e.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	var php []Job
	var raw [][]byte
	for _, j := range jobs {
		switch j.Via {
		case ViaPHP:
			php = append(php, j)
		case ViaLaraq:
			if err := DispatchLaraq(ctx, e.Fleet.Bin, e.Redis.URL(0), e.Prefix, j); err != nil {
				e.T.Fatal(err)
			}
		case ViaRaw:
			p, err := Hostile(j.Hostile, j.Key)
			if err != nil {
				e.T.Fatal(err)
			}
			raw = append(raw, p)
		default:
			e.T.Fatalf("job %s: unknown way of dispatching %q", j.Key, j.Via)
		}
	}
	if err := DispatchPHP(ctx, testenv.Testdata("php", "dispatch_chaos.php"), e.phpEnv("dispatch", ""), php); err != nil {
		e.T.Fatal(err)
	}
	if err := PushRaw(ctx, e.Client, e.Prefix, e.Queue, raw); err != nil {
		e.T.Fatal(err)
	}
	e.mu.Lock()
	e.jobs = append(e.jobs, jobs...)
	e.mu.Unlock()
}

// StartGo starts a Go worker (`laraq work --forward`) on the scenario's queue, Redis,
// retry_after and failed-job database, with args added, and waits until it works.
func (e *Env) StartGo(args ...string) *Worker {
	e.T.Helper()
	base := []string{"--queue", e.Queue, "--retry-after", strconv.Itoa(e.RetryAfter), "--database", e.FailedDSN}
	w, err := e.Fleet.StartGo("go", append(base, args...)...)
	if err != nil {
		e.T.Fatal(err)
	}
	w.Args = args
	if err := w.WaitLog("worker started", 30*time.Second); err != nil {
		e.T.Fatal(err)
	}
	return w
}

// StartPHP starts Laravel 8.83's worker (testdata/php/work.php) on the scenario's queue
// with args (work.php's flags) added.
func (e *Env) StartPHP(args ...string) *Worker {
	e.T.Helper()
	w, err := e.Fleet.StartPHP(testenv.Testdata("php", "work.php"), "php", append([]string{"--queue=" + e.Queue}, args...)...)
	if err != nil {
		e.T.Fatal(err)
	}
	w.Args = args
	return w
}

// Sizes reads how many jobs wait in the queue's ready list, delayed and reserved sets.
func (e *Env) Sizes(ctx context.Context) (ready, delayed, reserved int64, err error) {
	r, err := rdb.New(e.Client, rdb.Options{Prefix: e.Prefix})
	if err != nil {
		return 0, 0, 0, err
	}
	return r.Sizes(ctx, e.Queue)
}

// WaitRuns waits until the recorder has seen n runs (Go workers only), or d passed.
func (e *Env) WaitRuns(n int64, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for e.Recorder.Runs() < n {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// WaitSettled waits up to d for the queue to be empty (nothing ready, delayed or
// reserved) with no run in progress, twice in a row a quarter second apart.
func (e *Env) WaitSettled(d time.Duration) bool {
	deadline := time.Now().Add(d)
	calm := 0
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		ready, delayed, reserved, err := e.Sizes(ctx)
		cancel()
		if err == nil && ready+delayed+reserved == 0 && e.Recorder.Active() == 0 {
			if calm++; calm == 2 {
				return true
			}
		} else {
			calm = 0
		}
		time.Sleep(250 * time.Millisecond)
	}
	return false
}

// Sleep waits d (a scenario's pacing), logging what it waits for.
func (e *Env) Sleep(d time.Duration, why string) {
	e.T.Logf("%s: waiting %s: %s", e.Name, d, why)
	time.Sleep(d)
}

// BuildLaraq builds ./cmd/laraq into dir and returns the binary's path.
func BuildLaraq(dir string) (string, error) {
	bin := filepath.Join(dir, "laraq")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/laraq")
	cmd.Dir = testenv.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/laraq: %v\n%s", err, out)
	}
	return bin, nil
}
