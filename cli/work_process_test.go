package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// buildLaraq builds cmd/laraq into a directory of the test: the signal tests run the
// real binary as a child process, as a supervisor does.
func buildLaraq(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "laraq")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/laraq")
	cmd.Dir = testenv.RepoRoot()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/laraq: %v\n%s", err, out)
	}
	return bin
}

// worker is a `laraq work` child process.
type worker struct {
	cmd    *exec.Cmd
	stdout syncBuf
	stderr syncBuf
	done   chan struct{}
	err    error
}

// startWorker starts the binary with args and a clean environment (HOME in the test's
// directory, no LARAQ_* or REDIS_* of the machine).
func startWorker(t *testing.T, bin string, args ...string) *worker {
	t.Helper()
	w := &worker{cmd: exec.Command(bin, append([]string{"work"}, args...)...), done: make(chan struct{})}
	w.cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}
	w.cmd.Stdout, w.cmd.Stderr = &w.stdout, &w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { w.err = w.cmd.Wait(); close(w.done) }()
	t.Cleanup(func() {
		select {
		case <-w.done:
		default:
			_ = w.cmd.Process.Kill()
			<-w.done
		}
	})
	w.waitLog(t, "worker started")
	return w
}

func (w *worker) signal(t *testing.T, s syscall.Signal) {
	t.Helper()
	if err := w.cmd.Process.Signal(s); err != nil {
		t.Fatal(err)
	}
}

// waitLog waits until stderr contains s.
func (w *worker) waitLog(t *testing.T, s string) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !strings.Contains(w.stderr.String(), s) {
		select {
		case <-w.done:
			t.Fatalf("worker exited (%v) before logging %q:\n%s\n%s", w.err, s, w.stdout.String(), w.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker did not log %q:\n%s", s, w.stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// exitCode waits for the process to end and returns its status.
func (w *worker) exitCode(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-w.done:
	case <-time.After(within):
		t.Fatalf("worker still running after %s:\n%s\n%s", within, w.stdout.String(), w.stderr.String())
	}
	if w.err == nil {
		return 0
	}
	if ee, ok := w.err.(*exec.ExitError); ok {
		return ee.ExitCode()
	}
	t.Fatal(w.err)
	return -1
}

// slowService answers every forwarded job after delay and records the job ids it
// finished, in order.
type slowService struct {
	mu      sync.Mutex
	done    []string
	started chan string
	gate    chan struct{} // when set, requests are answered once it is closed
}

func newSlowService(t *testing.T, delay time.Duration) (*slowService, string) {
	return newService(t, delay, nil)
}

// newGatedService is a slowService whose answers wait until the test closes s.gate.
func newGatedService(t *testing.T) (*slowService, string) {
	return newService(t, 0, make(chan struct{}))
}

func newService(t *testing.T, delay time.Duration, gate chan struct{}) (*slowService, string) {
	s := &slowService{started: make(chan string, 1000), gate: gate}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get("X-Laraq-Job-Id")
		s.started <- id
		if s.gate != nil {
			<-s.gate
		}
		time.Sleep(delay)
		s.mu.Lock()
		s.done = append(s.done, id)
		s.mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return s, srv.URL
}

func (s *slowService) finished() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.done...)
}

// queueState reads the four keys of a queue.
func queueState(t *testing.T, c *redis.Client, prefix, queue string) (ready []string, delayed, reserved, notify int64) {
	t.Helper()
	ctx := context.Background()
	k := prefix + "queues:" + queue
	ready = c.LRange(ctx, k, 0, -1).Val()
	return ready, c.ZCard(ctx, k+":delayed").Val(), c.ZCard(ctx, k+":reserved").Val(), c.LLen(ctx, k+":notify").Val()
}

func dispatchN(t *testing.T, p *laraq.Dispatcher, n int, opts ...laraq.DispatchOption) []string {
	t.Helper()
	ids := make([]string, n)
	for i := range n {
		id, err := p.Dispatch(context.Background(), fwdJob{N: i}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = id
	}
	return ids
}

// TestWorkProcess runs the built binary as a supervisor would and checks how it stops.
func TestWorkProcess(t *testing.T) {
	bin := buildLaraq(t)
	srv := testenv.RedisServer(t)
	client := srv.Client(t, 0)
	redisURL := "redis://" + srv.Addr + "/0"

	t.Run("SIGTERM drains a burst: no job lost, none stranded", func(t *testing.T) {
		prefix := testenv.Prefix(t)
		p, _ := testDispatcher(client, prefix, "")
		svc, url := newSlowService(t, 150*time.Millisecond)
		const n = 40
		ids := dispatchN(t, p, n)
		w := startWorker(t, bin, "--redis", redisURL, "--prefix", prefix, "--forward", url, "--concurrency", "4",
			"--database", "null", "--sleep", "0.05")
		for range 10 {
			<-svc.started
		}
		w.signal(t, syscall.SIGTERM)
		if rc := w.exitCode(t, 10*time.Second); rc != 0 {
			t.Fatalf("exit %d\n%s", rc, w.stderr.String())
		}
		ready, delayed, reserved, notify := queueState(t, client, prefix, "default")
		finished := svc.finished()
		if delayed != 0 || reserved != 0 || notify != int64(len(ready)) {
			t.Errorf("after SIGTERM: %d ready, %d delayed, %d reserved, %d notify tokens", len(ready), delayed, reserved, notify)
		}
		seen := map[string]int{}
		for _, id := range finished {
			seen[id]++
		}
		for _, raw := range ready {
			for _, id := range ids {
				if strings.Contains(raw, `"id":"`+id+`"`) {
					seen[id]++
				}
			}
		}
		for _, id := range ids {
			if seen[id] != 1 {
				t.Errorf("job %s: finished or still queued %d times, want exactly once", id, seen[id])
			}
		}
		if len(finished) < 10 || len(finished) == n {
			t.Errorf("%d of %d jobs ran: the signal did not land mid-burst", len(finished), n)
		}
		if got := strings.Count(w.stdout.String(), " DONE\n"); got != len(finished) {
			t.Errorf("%d DONE lines for %d finished jobs:\n%s", got, len(finished), w.stdout.String())
		}
	})

	t.Run("SIGUSR2 pauses and SIGCONT resumes", func(t *testing.T) {
		prefix := testenv.Prefix(t)
		p, _ := testDispatcher(client, prefix, "")
		svc, url := newSlowService(t, 0)
		w := startWorker(t, bin, "--redis", redisURL, "--prefix", prefix, "--forward", url, "--database", "null", "--sleep", "0.05")
		w.signal(t, syscall.SIGUSR2)
		w.waitLog(t, "paused (SIGUSR2)")
		dispatchN(t, p, 1)
		select {
		case id := <-svc.started:
			t.Fatalf("job %s ran while paused", id)
		case <-time.After(500 * time.Millisecond):
		}
		w.signal(t, syscall.SIGCONT)
		select {
		case <-svc.started:
		case <-time.After(5 * time.Second):
			t.Fatalf("job did not run after SIGCONT:\n%s", w.stderr.String())
		}
		w.signal(t, syscall.SIGINT)
		if rc := w.exitCode(t, 10*time.Second); rc != 0 {
			t.Errorf("exit %d after SIGINT", rc)
		}
	})

	t.Run("queue:restart written by PHP's cache store stops it after the job in flight", func(t *testing.T) {
		testenv.NeedPHP(t)
		prefix := testenv.Prefix(t)
		cachePrefix := "lqcache" + testenv.RandomName(3)
		envFile := laravel8App(t, srv, prefix, cachePrefix)
		p, _ := testDispatcher(client, prefix, "")
		svc, url := newGatedService(t)
		ids := dispatchN(t, p, 3)
		// No --redis, --prefix or cache flags: all of it comes from the application's .env.
		w := startWorker(t, bin, "--env-file", envFile, "--laravel-version", "8", "--forward", url, "--database", "null", "--sleep", "0.05")
		first := <-svc.started
		startedAt := time.Now()
		php := testenv.PHPEnv{Redis: srv, Prefix: prefix, CachePrefix: cachePrefix}
		php.Run(t, nil, "ops_cache.php", "forever", "illuminate:queue:restart", strconv.FormatInt(time.Now().Unix(), 10))
		// The job ends after the signal was written, and after the worker's signal
		// interval (1 s), so that a read of the signal is due when its slot frees.
		time.Sleep(time.Until(startedAt.Add(1200 * time.Millisecond)))
		close(svc.gate)
		if rc := w.exitCode(t, 10*time.Second); rc != 0 {
			t.Fatalf("exit %d\n%s", rc, w.stderr.String())
		}
		if !strings.Contains(w.stderr.String(), "queue restart signal received") {
			t.Errorf("stderr:\n%s", w.stderr.String())
		}
		// PHP reads the signal after every job and starts no other; so does the
		// consumer, between taking the freed slot and popping.
		got := svc.finished()
		if len(got) != 1 || got[0] != first || first != ids[0] {
			t.Errorf("finished %v, want exactly the job in flight %s", got, ids[0])
		}
		ready, delayed, reserved, _ := queueState(t, client, prefix, "default")
		if len(ready)+len(got) != len(ids) || delayed != 0 || reserved != 0 {
			t.Errorf("after restart: %d ready, %d delayed, %d reserved, %d finished", len(ready), delayed, reserved, len(got))
		}
	})

	t.Run("--memory exits 12 and --max-time 0", func(t *testing.T) {
		prefix := testenv.Prefix(t)
		p, _ := testDispatcher(client, prefix, "")
		_, url := newSlowService(t, 0)
		dispatchN(t, p, 1)
		w := startWorker(t, bin, "--redis", redisURL, "--prefix", prefix, "--forward", url, "--database", "null", "--memory", "1")
		if rc := w.exitCode(t, 10*time.Second); rc != 12 {
			t.Errorf("--memory 1: exit %d, want 12\n%s", rc, w.stderr.String())
		}
		start := time.Now()
		w = startWorker(t, bin, "--redis", redisURL, "--prefix", prefix, "--database", "null", "--max-time", "1", "--sleep", "0.1")
		if rc := w.exitCode(t, 10*time.Second); rc != 0 || time.Since(start) < time.Second {
			t.Errorf("--max-time 1: exit %d after %s", rc, time.Since(start))
		}
	})
}

// envFile writes a .env with the given lines and returns its path.
func envFile(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// mainAsync runs the command line in a goroutine; done receives its exit status.
func mainAsync(ctx context.Context, args []string, opts ...Option) (stdout, stderr *syncBuf, done chan int) {
	stdout, stderr, done = &syncBuf{}, &syncBuf{}, make(chan int, 1)
	go func() {
		done <- Main(ctx, args, append([]Option{WithIO(bytes.NewReader(nil), stdout, stderr)}, opts...)...)
	}()
	return stdout, stderr, done
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
