package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
)

// syncBuf is a goroutine-safe output buffer.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) { s.mu.Lock(); defer s.mu.Unlock(); return s.b.Write(p) }
func (s *syncBuf) String() string              { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }

// runWork runs `work` with args until it exits (or the test's deadline).
func runWorkCLI(t *testing.T, reg *laraq.Jobs, args ...string) (stdout, stderr string, rc int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	var out, errOut syncBuf
	opts := []Option{WithIO(bytes.NewReader(nil), &out, &errOut)}
	if reg != nil {
		opts = append(opts, WithJobs(reg))
	}
	rc = Main(ctx, append([]string{"work"}, args...), opts...)
	if ctx.Err() != nil {
		t.Fatalf("work did not stop by itself:\n%s\n%s", out.String(), errOut.String())
	}
	return out.String(), errOut.String(), rc
}

type received struct {
	header http.Header
	body   forwardRequest
}

// forwardService records what --forward sends; answer picks the reply per request.
func forwardService(t *testing.T, answer func(n int, w http.ResponseWriter)) (*httptest.Server, func() []received) {
	var mu sync.Mutex
	var got []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var body forwardRequest
		if err := json.Unmarshal(b, &body); err != nil || r.Method != http.MethodPost {
			t.Errorf("request %s %s: %v", r.Method, b, err)
		}
		mu.Lock()
		got = append(got, received{r.Header.Clone(), body})
		n := len(got)
		mu.Unlock()
		answer(n, w)
	}))
	t.Cleanup(srv.Close)
	return srv, func() []received { mu.Lock(); defer mu.Unlock(); return append([]received(nil), got...) }
}

func TestWorkForwardSendsWhatPHPUnserializes(t *testing.T) {
	testenv.NeedPHP(t)
	r := testenv.RedisServer(t)
	client := r.Client(t, 0)
	prefix := testenv.Prefix(t)
	queue := "fwd" + testenv.RandomName(3)
	env := testenv.PHPEnv{Redis: r, Prefix: prefix}
	reqs := []any{
		map[string]any{"class": `App\Jobs\PlainJob`, "queue": queue, "props": map[string]any{"name": "Grüße 😀 / \"q\"", "count": 3, "tags": []any{"a"}, "meta": map[string]any{"10": "x"}}},
		map[string]any{"class": `App\Jobs\VisibilityJob`, "queue": queue, "props": map[string]any{"pub": "p", "\x00*\x00prot": 7, "\x00App\\Jobs\\VisibilityJob\x00priv": []any{true, nil}}},
		map[string]any{"class": `App\Jobs\EnumJob`, "queue": queue, "props": map[string]any{"status": map[string]any{"@enum": `App\Enums\Status:Active`}, "suit": map[string]any{"@enum": `App\Enums\Suit:Hearts`}}},
		map[string]any{"string_job": `App\Jobs\StringJobs@deletes`, "queue": queue, "data": map[string]any{"n": []int{1, 2}}},
	}
	lines := phpDispatchLines(t, env, reqs)

	srv, got := forwardService(t, func(int, http.ResponseWriter) {})
	out, errOut, rc := runWorkCLI(t, nil, "--forward", srv.URL, "--redis", "redis://"+r.Addr+"/0", "--prefix", prefix,
		"--queue", queue, "--stop-when-empty", "--no-cache", "--sleep", "0", "--database", "null")
	if rc != 0 {
		t.Fatalf("rc %d\n%s\n%s", rc, out, errOut)
	}
	if n := strings.Count(out, "ms DONE\n"); n != len(reqs) {
		t.Errorf("%d DONE lines:\n%s", n, out)
	}
	rec := got()
	if len(rec) != len(reqs) {
		t.Fatalf("service got %d requests, want %d", len(rec), len(reqs))
	}
	dir := t.TempDir()
	var files []string
	for i, l := range lines {
		f := filepath.Join(dir, fmt.Sprintf("p%d.json", i))
		if err := os.WriteFile(f, []byte(l.Payload), 0o600); err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	cmd := exec.Command("php", append([]string{testenv.Testdata("phpser", "readable.php")}, files...)...)
	phpOut, err := cmd.Output()
	if err != nil {
		t.Fatalf("readable.php: %v", err)
	}
	phpLines := bytes.Split(bytes.TrimRight(phpOut, "\n"), []byte("\n"))
	for i, l := range lines {
		envl, err := payload.Parse([]byte(l.Payload))
		if err != nil {
			t.Fatal(err)
		}
		var body *received
		for j := range rec {
			if rec[j].body.UUID == envl.UUID {
				body = &rec[j]
			}
		}
		if body == nil {
			t.Errorf("job %d not forwarded", i)
			continue
		}
		b := body.body
		if b.ID != envl.ID || b.Attempt != 1 || b.Queue != queue || b.Connection != "redis" || b.Name != envl.Name() ||
			body.header.Get("Content-Type") != "application/json" || body.header.Get("X-Laraq-Job-Uuid") != envl.UUID ||
			body.header.Get("X-Laraq-Attempt") != "1" || body.header.Get("X-Laraq-Queue") != queue {
			t.Errorf("job %d: %+v %v", i, b, body.header)
		}
		gotTok, wantTok := tokens(t, b.Payload), tokens(t, phpLines[i])
		if fmt.Sprint(gotTok) != fmt.Sprint(wantTok) {
			t.Errorf("job %d: forwarded payload differs from PHP's unserialize():\n%s\n%s", i, b.Payload, phpLines[i])
		}
	}
	if keys, _ := testenv.Keys(context.Background(), client, prefix); len(keys) != 0 {
		t.Errorf("keys left: %v", keys)
	}
}

type fwdJob struct {
	N int `php:"n"`
}

func (fwdJob) PHPClass() string { return `App\Jobs\Fwd` }

func TestWorkForwardErrorsAndRetryAfter(t *testing.T) {
	r := testenv.RedisServer(t)
	client := r.Client(t, 0)
	prefix := testenv.Prefix(t)
	ctx := context.Background()
	p, err := testDispatcher(client, prefix, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Dispatch(ctx, fwdJob{N: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Dispatch(ctx, fwdJob{N: 2}); err != nil {
		t.Fatal(err)
	}
	srv, _ := forwardService(t, func(n int, w http.ResponseWriter) {
		if n == 1 {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "boom: ledger locked\nsecond line\n")
			return
		}
		w.Header().Set("Retry-After", "120")
		w.WriteHeader(http.StatusServiceUnavailable)
	})
	db := filepath.Join(t.TempDir(), "failed.sqlite")
	before := time.Now().Unix()
	out, errOut, rc := runWorkCLI(t, nil, "--forward", srv.URL, "--redis", "redis://"+r.Addr+"/0", "--prefix", prefix,
		"--stop-when-empty", "--no-cache", "--database", "sqlite:"+db, "--create-failed-table")
	if rc != 0 {
		t.Fatalf("rc %d\n%s\n%s", rc, out, errOut)
	}
	store, err := database.Open(ctx, "sqlite:"+db, database.Options{CreateTable: database.CreateIfMissing})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	recs, err := store.All(ctx)
	if err != nil || len(recs) != 1 {
		t.Fatalf("failed records %v %v", recs, err)
	}
	if !strings.Contains(recs[0].Exception, "500 Internal Server Error: boom: ledger locked in ") ||
		strings.Contains(recs[0].Exception, "second line") || recs[0].Queue != "default" || recs[0].Connection != "redis" {
		t.Errorf("record %+v", recs[0])
	}
	z, err := client.ZRangeWithScores(ctx, prefix+"queues:default:delayed", 0, -1).Result()
	if err != nil || len(z) != 1 || int64(z[0].Score) < before+120 || int64(z[0].Score) > time.Now().Unix()+120 {
		t.Fatalf("delayed %v %v", z, err)
	}
	// The 500 fails the job (one try), the 503 releases it from the handler: DONE, as a
	// PHP job calling $this->release() prints.
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 4 || !strings.HasSuffix(lines[1], "ms FAIL") ||
		!strings.HasSuffix(lines[3], "ms DONE") || !strings.Contains(lines[1], ` App\Jobs\Fwd ...`) {
		t.Errorf("output:\n%s", out)
	}
}

func TestWorkRunsRegisteredHandlers(t *testing.T) {
	r := testenv.RedisServer(t)
	client := r.Client(t, 0)
	prefix := testenv.Prefix(t)
	ctx := context.Background()
	p, err := testDispatcher(client, prefix, "")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := p.Dispatch(ctx, fwdJob{N: i}); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var got []int
	reg := laraq.NewJobs()
	handle(reg, `App\Jobs\Fwd`, func(ctx context.Context, cmd *fwdJob, job *laraq.JobInfo) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, cmd.N)
		slices.Sort(got)
		return nil
	})
	base := []string{"--redis", "redis://" + r.Addr + "/0", "--prefix", prefix, "--no-cache", "--database", "null", "--log-format", "artisan8"}
	out, errOut, rc := runWorkCLI(t, reg, append(base, "--once")...)
	if rc != 0 || fmt.Sprint(got) != "[0]" {
		t.Fatalf("--once: rc %d, got %v\n%s\n%s", rc, got, out, errOut)
	}
	// [2024-05-06 07:08:09][<32 chars>] Processing: App\Jobs\Fwd
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		want := []string{"Processing: App\\Jobs\\Fwd", "Processed:  App\\Jobs\\Fwd"}[i]
		if len(l) != 21+34+len(want)+1 || !strings.HasSuffix(l, "] "+want) || l[0] != '[' || l[20] != ']' {
			t.Errorf("line %q", l)
		}
	}
	_, errOut, rc = runWorkCLI(t, reg, append(base, "--max-jobs", "1", "--memory", "1")...)
	if rc != 12 || !strings.Contains(errOut, "memory limit") {
		t.Errorf("--memory 1: rc %d\n%s", rc, errOut)
	}
	_, _, rc = runWorkCLI(t, reg, append(base, "--stop-when-empty", "--concurrency", "4")...)
	if rc != 0 || fmt.Sprint(got) != "[0 1 2]" {
		t.Errorf("rc %d, got %v", rc, got)
	}
	for _, bad := range [][]string{{"--backoff", "1,x"}, {"--tries", "-1"}, {"--unhandled", "drop"}, {"--block-for", "soon"}, {"--forward", "ftp://x"}, {"--unhandled-delay", "0"}} {
		if _, _, rc := runWorkCLI(t, reg, append(base, bad...)...); rc == 0 {
			t.Errorf("%v accepted", bad)
		}
	}
}

// TestWorkMaxJobsWithConcurrency: --max-jobs N takes exactly N jobs also when more
// slots are free than jobs are left, and when slots free one by one.
func TestWorkMaxJobsWithConcurrency(t *testing.T) {
	r := testenv.RedisServer(t)
	client := r.Client(t, 0)
	for _, tc := range []struct{ maxJobs, concurrency int }{{3, 4}, {5, 2}} {
		prefix := testenv.Prefix(t)
		p, err := testDispatcher(client, prefix, "")
		if err != nil {
			t.Fatal(err)
		}
		ids := dispatchN(t, p, 10)
		var mu sync.Mutex
		ran := map[string]int{}
		reg := laraq.NewJobs()
		handle(reg, `App\Jobs\Fwd`, func(ctx context.Context, cmd *fwdJob, job *laraq.JobInfo) error {
			time.Sleep(time.Duration(cmd.N%3) * 20 * time.Millisecond)
			mu.Lock()
			ran[job.ID]++
			mu.Unlock()
			return nil
		})
		out, errOut, rc := runWorkCLI(t, reg, "--redis", "redis://"+r.Addr+"/0", "--prefix", prefix, "--no-cache",
			"--database", "null", "--sleep", "0.05", "--max-jobs", strconv.Itoa(tc.maxJobs), "--concurrency", strconv.Itoa(tc.concurrency))
		want := tc.maxJobs
		ready, delayed, reserved, _ := queueState(t, client, prefix, "default")
		if rc != 0 || len(ran) != want || len(ready) != len(ids)-want || delayed != 0 || reserved != 0 {
			t.Errorf("--max-jobs %d --concurrency %d: rc %d, ran %d jobs, %d ready, %d delayed, %d reserved\n%s",
				tc.maxJobs, tc.concurrency, rc, len(ran), len(ready), delayed, reserved, errOut)
		}
		if n := strings.Count(out, " DONE\n"); n != want {
			t.Errorf("%d DONE lines, want %d:\n%s", n, want, out)
		}
	}
}

func TestWorkPausesOnSIGUSR2(t *testing.T) {
	r := testenv.RedisServer(t)
	client := r.Client(t, 0)
	prefix := testenv.Prefix(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := testDispatcher(client, prefix, "")
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan int, 2)
	reg := laraq.NewJobs()
	handle(reg, `App\Jobs\Fwd`, func(ctx context.Context, cmd *fwdJob, job *laraq.JobInfo) error {
		ran <- cmd.N
		return nil
	})
	var out, errOut syncBuf
	done := make(chan int)
	go func() {
		done <- Main(ctx, []string{"work", "--redis", "redis://" + r.Addr + "/0", "--prefix", prefix, "--no-cache", "--sleep", "0.05", "--database", "null"},
			WithIO(nil, &out, &errOut), WithJobs(reg))
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errOut.String(), "worker started") {
		if time.Now().After(deadline) {
			t.Fatalf("worker did not start:\n%s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGUSR2); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := p.Dispatch(ctx, fwdJob{N: 9}); err != nil {
		t.Fatal(err)
	}
	select {
	case n := <-ran:
		t.Fatalf("job %d ran while paused", n)
	case <-time.After(300 * time.Millisecond):
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("job did not run after SIGCONT")
	}
	cancel()
	if rc := <-done; rc != 0 {
		t.Fatalf("rc %d\n%s", rc, errOut.String())
	}
}

// ExampleRun shows a team's own worker binary: the laraq command line with its Go
// handlers registered, so that `mybinary work --queue=high,default --tries=3` runs them
// next to PHP workers. main is just:
//
//	func main() { os.Exit(cli.Run(registry())) }
func ExampleRun() {
	type WelcomeEmail struct {
		UserID int64 `php:"userId"`
	}
	registry := func() *laraq.Jobs {
		reg := laraq.NewJobs()
		handle(reg, `App\Jobs\SendWelcomeEmail`, func(ctx context.Context, cmd *WelcomeEmail, job *laraq.JobInfo) error {
			return sendWelcome(ctx, cmd.UserID)
		})
		return reg
	}
	var main = func() int { return Run(registry()) }
	_ = main
	fmt.Println(registry().Classes())
	// Output: [App\Jobs\SendWelcomeEmail]
}

func sendWelcome(ctx context.Context, userID int64) error { return nil }

// TestWorkLaravelVersion: the worker imitates the application's release; the
// MaxAttemptsExceededException text changed in 10.10, and a pre-8 application is worked
// as 8.x.
func TestWorkLaravelVersion(t *testing.T) {
	r := testenv.RedisServer(t)
	client := r.Client(t, 0)
	ctx := context.Background()
	for _, tc := range []struct{ version, want, notWant string }{
		{"8", "has been attempted too many times or run too long.", ""},
		{"7", "has been attempted too many times or run too long.", ""},
		{"11", `App\Jobs\Fwd has been attempted too many times.`, "or run too long"},
	} {
		prefix := testenv.Prefix(t)
		p, err := testDispatcher(client, prefix, "")
		if err != nil {
			t.Fatal(err)
		}
		dispatchN(t, p, 1)
		// One attempt already spent: the pop makes it 2, beyond --tries 1.
		key := prefix + "queues:default"
		raw, err := client.LIndex(ctx, key, 0).Result()
		if err != nil || !strings.Contains(raw, `"attempts":0`) {
			t.Fatalf("queued payload %q: %v", raw, err)
		}
		client.LSet(ctx, key, 0, strings.Replace(raw, `"attempts":0`, `"attempts":1`, 1))
		ran := 0
		reg := laraq.NewJobs()
		handle(reg, `App\Jobs\Fwd`, func(ctx context.Context, cmd *fwdJob, job *laraq.JobInfo) error { ran++; return nil })
		db := "sqlite:" + filepath.Join(t.TempDir(), "failed.sqlite")
		_, errOut, rc := runWorkCLI(t, reg, "--redis", "redis://"+r.Addr+"/0", "--prefix", prefix, "--no-cache",
			"--database", db, "--create-failed-table", "--tries", "1", "--stop-when-empty", "--laravel-version", tc.version)
		if rc != 0 || ran != 0 {
			t.Fatalf("--laravel-version %s: rc %d, ran %d\n%s", tc.version, rc, ran, errOut)
		}
		failedCLI := func(args ...string) string {
			t.Helper()
			var out, errs syncBuf
			args = append([]string{"failed"}, append(args, "--json", "--database", db, "--laravel-version", tc.version)...)
			if rc := Main(ctx, args, WithIO(bytes.NewReader(nil), &out, &errs)); rc != 0 {
				t.Fatalf("%v: %d %s", args, rc, errs.String())
			}
			return out.String()
		}
		var rows []struct {
			ID any `json:"id"`
		}
		if err := json.Unmarshal([]byte(failedCLI("list")), &rows); err != nil || len(rows) != 1 {
			t.Fatalf("--laravel-version %s: rows %v: %v", tc.version, rows, err)
		}
		out := failedCLI("show", fmt.Sprint(rows[0].ID))
		var shown map[string]any
		if err := json.Unmarshal([]byte(out), &shown); err != nil {
			t.Fatal(err)
		}
		exc := fmt.Sprint(shown["exception"])
		if !strings.Contains(exc, tc.want) || (tc.notWant != "" && strings.Contains(exc, tc.notWant)) {
			t.Errorf("--laravel-version %s: exception %q\nwant %q", tc.version, exc, tc.want)
		}
	}
}

// TestWorkUnhandledDelay: --unhandled release --unhandled-delay N releases a job no
// handler takes for N seconds, its attempt counted.
func TestWorkUnhandledDelay(t *testing.T) {
	r := testenv.RedisServer(t)
	client := r.Client(t, 0)
	prefix := testenv.Prefix(t)
	p, err := testDispatcher(client, prefix, "")
	if err != nil {
		t.Fatal(err)
	}
	dispatchN(t, p, 1)
	start := time.Now()
	_, errOut, rc := runWorkCLI(t, laraq.NewJobs(), "--redis", "redis://"+r.Addr+"/0", "--prefix", prefix,
		"--no-cache", "--database", "null", "--unhandled", "release", "--unhandled-delay", "30", "--once")
	if rc != 0 {
		t.Fatalf("rc %d\n%s", rc, errOut)
	}
	zs, err := client.ZRangeWithScores(context.Background(), prefix+"queues:default:delayed", 0, -1).Result()
	if err != nil || len(zs) != 1 {
		t.Fatalf("delayed %v: %v", zs, err)
	}
	if due := time.Unix(int64(zs[0].Score), 0).Sub(start); due < 29*time.Second || due > 32*time.Second {
		t.Errorf("released for %v, want 30s", due)
	}
	if m := zs[0].Member.(string); !strings.Contains(m, `"attempts":1`) {
		t.Errorf("released payload %s", m)
	}
}
