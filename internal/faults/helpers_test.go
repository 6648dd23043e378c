package faults

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/cli"
)

// faultJob is the job every scenario dispatches; N tells the jobs apart.
type faultJob struct {
	N int `php:"n"`
}

func (faultJob) PHPClass() string { return `App\Jobs\FaultJob` }

// runs counts the runs of each job by N.
type runs struct {
	mu sync.Mutex
	n  map[int]int
}

func (r *runs) add(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.n == nil {
		r.n = map[int]int{}
	}
	r.n[n]++
}

// of returns how many times each of ns ran.
func (r *runs) of(ns ...int) []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]int, len(ns))
	for i, n := range ns {
		out[i] = r.n[n]
	}
	return out
}

// once reports whether each of ns ran exactly once.
func (r *runs) once(ns ...int) bool {
	for _, c := range r.of(ns...) {
		if c != 1 {
			return false
		}
	}
	return true
}

// total is the number of runs of every job.
func (r *runs) total() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	t := 0
	for _, c := range r.n {
		t += c
	}
	return t
}

// handlers runs faultJobs, counting them in r.
func handlers(r *runs) *laraq.Jobs {
	jobs := laraq.NewJobs()
	laraq.HandleClass(jobs, faultJob{}.PHPClass(), func(ctx context.Context, j *laraq.Job[faultJob]) error {
		r.add(j.Command.N)
		return nil
	})
	return jobs
}

// release is the Laravel release the scenarios' jobs are dispatched and worked as.
var release = laraq.Release{Major: 11, Minor: 0}

// dispatch queues faultJobs ns on queue through laraq's dispatcher.
func dispatch(t *testing.T, conn *laraq.Connection, queue string, ns ...int) {
	t.Helper()
	d, err := laraq.NewDispatcher(conn)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range ns {
		if _, err := d.Dispatch(context.Background(), faultJob{N: n}, laraq.OnQueue(queue)); err != nil {
			t.Fatalf("dispatch job %d to %s: %v", n, queue, err)
		}
	}
}

// syncBuf is a bytes.Buffer safe for the command's goroutines and the test's reads.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// work is one `laraq work` run in the test process.
type work struct {
	stderr  *syncBuf
	done    chan int
	cancel  context.CancelFunc
	metrics string // host:port of /metrics and /healthz
	rc      *int
}

// startWork runs `laraq work ARGS --log-format json --database null --metrics-addr
// 127.0.0.1:0` with the variables env (nothing of the process environment) and jobs,
// and waits for its start line, or for it to exit first.
func startWork(t *testing.T, env map[string]string, jobs *laraq.Jobs, args ...string) *work {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	w := &work{stderr: &syncBuf{}, done: make(chan int, 1), cancel: cancel}
	args = append([]string{"work"}, append(args, "--log-format", "json", "--database", "null", "--metrics-addr", "127.0.0.1:0")...)
	go func() {
		w.done <- cli.Main(ctx, args, cli.WithJobs(jobs), cli.WithIO(strings.NewReader(""), io.Discard, w.stderr),
			cli.WithGetenv(func(k string) string { return env[k] }))
	}()
	t.Cleanup(func() {
		cancel()
		w.exit(t, 30*time.Second)
	})
	eventually(t, 20*time.Second, "the worker to start", func() bool {
		if w.exited() {
			return true
		}
		m := regexp.MustCompile(`"serving metrics","addr":"([^"]+)"`).FindStringSubmatch(w.log())
		if m != nil {
			w.metrics = m[1]
		}
		return m != nil && strings.Contains(w.log(), `"worker started"`)
	})
	return w
}

// exited reports whether the command returned.
func (w *work) exited() bool {
	if w.rc != nil {
		return true
	}
	select {
	case rc := <-w.done:
		w.rc = &rc
		return true
	default:
		return false
	}
}

// exit waits up to d for the command to return and gives its exit status.
func (w *work) exit(t *testing.T, d time.Duration) int {
	t.Helper()
	if w.rc != nil {
		return *w.rc
	}
	select {
	case rc := <-w.done:
		w.rc = &rc
		return rc
	case <-time.After(d):
		t.Fatalf("laraq work still running after %v:\n%s", d, w.log())
		return -1
	}
}

// stop cancels the command (SIGTERM) and gives its exit status.
func (w *work) stop(t *testing.T) int {
	t.Helper()
	w.cancel()
	return w.exit(t, 30*time.Second)
}

func (w *work) log() string { return w.stderr.String() }

// lastLine is the last line the command wrote to stderr.
func (w *work) lastLine() string {
	s := strings.TrimRight(w.log(), "\n")
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}

// logLines returns the JSON log records whose msg starts with msg.
func (w *work) logLines(msg string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(w.log()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if json.Unmarshal(sc.Bytes(), &rec) != nil {
			continue
		}
		if m, _ := rec["msg"].(string); strings.HasPrefix(m, msg) {
			out = append(out, rec)
		}
	}
	return out
}

// health is the /healthz body.
type health struct {
	Healthy bool              `json:"healthy"`
	Refused bool              `json:"redis_refuses_pops"`
	Reason  string            `json:"reason"`
	Skipped map[string]string `json:"skipped_queues"`
}

// health asks /healthz.
func (w *work) health(t *testing.T) (int, health) {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + w.metrics + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var h health
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatalf("/healthz: %s: %v", b, err)
	}
	return resp.StatusCode, h
}

// metric returns the value of the /metrics sample line that starts with series, "" when
// there is none.
func (w *work) metric(t *testing.T, series string) string {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get("http://" + w.metrics + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, series+" "); ok {
			return v
		}
	}
	return ""
}

// eventually polls ok every 50 ms for up to d.
func eventually(t *testing.T, d time.Duration, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// keyState is what a queue's key holds: its type and, for a list or zset, its members.
type keyState struct {
	Type    string
	Members []string
}

// queueState reads the four keys of a queue (the ready list and :delayed, :reserved,
// :notify) under prefix.
func queueState(t *testing.T, c redis.UniversalClient, key string) map[string]keyState {
	t.Helper()
	ctx := context.Background()
	out := map[string]keyState{}
	for _, k := range []string{key, key + ":delayed", key + ":reserved", key + ":notify"} {
		typ, err := c.Type(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		s := keyState{Type: typ}
		switch typ {
		case "list":
			s.Members, err = c.LRange(ctx, k, 0, -1).Result()
		case "zset":
			s.Members, err = c.ZRange(ctx, k, 0, -1).Result()
		}
		if err != nil {
			t.Fatal(err)
		}
		out[k] = s
	}
	return out
}

// oneLine checks the line a command that stopped ends with: "laraq: " and the error,
// holding every part.
func oneLine(t *testing.T, w *work, parts ...string) {
	t.Helper()
	line := w.lastLine()
	if !strings.HasPrefix(line, "laraq: ") {
		t.Fatalf("last line %q is not the command's error line:\n%s", line, w.log())
	}
	for _, p := range parts {
		if !strings.Contains(line, p) {
			t.Errorf("last line lacks %q:\n%s", p, line)
		}
	}
}
