package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// clock is a settable Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

func TestObserveCounters(t *testing.T) {
	m, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	const cls = `App\Jobs\SendWelcome`
	a1, a2, a3 := new(int), new(int), new(int)
	m.Observe(Event{Kind: Processing, Queue: "default", Class: cls, Attempt: a1})
	m.Observe(Event{Kind: Processed, Queue: "default", Class: cls, Attempt: a1, Duration: 120 * time.Millisecond})
	m.Observe(Event{Kind: Processing, Queue: "default", Class: cls, Attempt: a2})
	m.Observe(Event{Kind: Exception, Queue: "default", Class: cls, Attempt: a2, Duration: 2 * time.Second})
	m.Observe(Event{Kind: Released, Queue: "default", Class: cls, Attempt: a2})
	m.Observe(Event{Kind: Processing, Queue: "default", Class: cls, Attempt: a3})
	m.Observe(Event{Kind: TimedOut, Queue: "default", Class: cls, Attempt: a3, Duration: time.Minute})
	m.Observe(Event{Kind: Failed, Queue: "default", Class: cls, Attempt: a3})
	m.Observe(Event{Kind: Migrated, Queue: "default", From: "reserved", Count: 3})
	m.Observe(Event{Kind: Migrated, Queue: "default", From: "delayed", Count: 2})
	m.Observe(Event{Kind: Invalid, Queue: "emails"})
	m.Observe(Event{Kind: HandedBack, Queue: "emails", Class: `App\Jobs\PhpOnly`})

	v := gather(t, m.Registry())
	want := map[string]float64{
		`laraq_jobs_processed_total{class="App\\Jobs\\SendWelcome",queue="default"}`:                                      1,
		`laraq_jobs_released_total{class="App\\Jobs\\SendWelcome",queue="default"}`:                                       1,
		`laraq_jobs_failed_total{class="App\\Jobs\\SendWelcome",queue="default"}`:                                         1,
		`laraq_job_exceptions_total{class="App\\Jobs\\SendWelcome",queue="default"}`:                                      1,
		`laraq_jobs_timed_out_total{class="App\\Jobs\\SendWelcome",queue="default"}`:                                      1,
		`laraq_jobs_migrated_total{from="reserved",queue="default"}`:                                                      3,
		`laraq_jobs_migrated_total{from="delayed",queue="default"}`:                                                       2,
		`laraq_jobs_invalid_total{queue="emails"}`:                                                                        1,
		`laraq_jobs_handed_back_total{class="App\\Jobs\\PhpOnly",queue="emails"}`:                                         1,
		`laraq_jobs_running{queue="default"}`:                                                                             0,
		`laraq_job_duration_seconds_count{class="App\\Jobs\\SendWelcome",outcome="processed",queue="default"}`:            1,
		`laraq_job_duration_seconds_sum{class="App\\Jobs\\SendWelcome",outcome="processed",queue="default"}`:              0.12,
		`laraq_job_duration_seconds_bucket{class="App\\Jobs\\SendWelcome",le="0.1",outcome="processed",queue="default"}`:  0,
		`laraq_job_duration_seconds_bucket{class="App\\Jobs\\SendWelcome",le="0.25",outcome="processed",queue="default"}`: 1,
		`laraq_job_duration_seconds_count{class="App\\Jobs\\SendWelcome",outcome="exception",queue="default"}`:            1,
		`laraq_job_duration_seconds_sum{class="App\\Jobs\\SendWelcome",outcome="timed_out",queue="default"}`:              60,
	}
	for k, w := range want {
		if got, ok := v[k]; !ok || got != w {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, w)
		}
	}
	// One duration observation per attempt (processed, exception, timed_out), none for
	// failed or released.
	n := 0
	for k := range v {
		if strings.HasPrefix(k, "laraq_job_duration_seconds_count") {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d duration series, want 3", n)
	}
}

// gather returns every sample of reg as "name{label="value",…}" (labels sorted, as the
// text format writes them; histograms as _bucket with le, _sum and _count).
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			var pairs []string
			for _, lp := range mt.GetLabel() {
				pairs = append(pairs, fmt.Sprintf("%s=%q", lp.GetName(), lp.GetValue()))
			}
			key := func(name string, extra ...string) string {
				ps := append(append([]string{}, pairs...), extra...)
				sort.Strings(ps)
				return name + "{" + strings.Join(ps, ",") + "}"
			}
			switch {
			case mt.Counter != nil:
				out[key(mf.GetName())] = mt.Counter.GetValue()
			case mt.Gauge != nil:
				out[key(mf.GetName())] = mt.Gauge.GetValue()
			case mt.Histogram != nil:
				h := mt.Histogram
				out[key(mf.GetName()+"_count")] = float64(h.GetSampleCount())
				out[key(mf.GetName()+"_sum")] = h.GetSampleSum()
				for _, b := range h.GetBucket() {
					out[key(mf.GetName()+"_bucket", fmt.Sprintf("le=%q", fmt.Sprint(b.GetUpperBound())))] = float64(b.GetCumulativeCount())
				}
			}
		}
	}
	return out
}

func TestQueueDepthFromRedis(t *testing.T) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	prefix := testenv.Prefix(t)
	r, err := rdb.New(srv.Client(t, 0), rdb.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	job := func(i int) []byte { return []byte(fmt.Sprintf(`{"uuid":"u%d","job":"x","attempts":0,"data":{}}`, i)) }
	for i := 0; i < 3; i++ {
		if err := r.Push(ctx, "default", job(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Later(ctx, "emails", time.Now().Unix()+600, job(9)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Pop(ctx, "default", time.Now().Unix()+90); err != nil {
		t.Fatal(err)
	}

	m, err := New(Config{Sizer: r})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.RefreshQueueDepths(ctx); err != nil {
		t.Fatal(err)
	}
	v := gather(t, m.Registry())
	for k, w := range map[string]float64{
		`laraq_queue_depth_up{}`:                             1,
		`laraq_queue_jobs{queue="default",state="ready"}`:    2,
		`laraq_queue_jobs{queue="default",state="delayed"}`:  0,
		`laraq_queue_jobs{queue="default",state="reserved"}`: 1,
		`laraq_queue_jobs{queue="emails",state="ready"}`:     0,
		`laraq_queue_jobs{queue="emails",state="delayed"}`:   1,
		`laraq_queue_jobs{queue="emails",state="reserved"}`:  0,
	} {
		if got, ok := v[k]; !ok || got != w {
			t.Errorf("%s = %v (present %v), want %v", k, got, ok, w)
		}
	}

	// A fixed queue list reports those queues only, read through the /metrics handler.
	m, _ = New(Config{Sizer: r, Queues: []string{"emails"}})
	body := get(t, m.Handler(), "/metrics", http.StatusOK)
	if !strings.Contains(body, `laraq_queue_jobs{queue="emails",state="delayed"} 1`) || strings.Contains(body, `queue="default"`) {
		t.Errorf("/metrics:\n%s", body)
	}
}

type failingSizer struct{}

func (failingSizer) Queues(context.Context) ([]string, error) { return []string{"default"}, nil }
func (failingSizer) Sizes(ctx context.Context, q string) (int64, int64, int64, error) {
	<-ctx.Done()
	return 0, 0, 0, ctx.Err()
}

func TestQueueDepthTimeout(t *testing.T) {
	m, _ := New(Config{Sizer: failingSizer{}, ScrapeTimeout: 50 * time.Millisecond})
	m.Observe(Event{Kind: Processed, Queue: "default", Class: "A"})
	body := get(t, m.Handler(), "/metrics", http.StatusOK)
	if !strings.Contains(body, "laraq_queue_depth_up 0") || strings.Contains(body, "laraq_queue_jobs{") {
		t.Errorf("a timed-out depth read should give depth_up 0 and no depths:\n%s", body)
	}
	if !strings.Contains(body, `laraq_jobs_processed_total{class="A",queue="default"} 1`) {
		t.Errorf("counters missing after a failed depth read:\n%s", body)
	}
}

// TestRunningGauge plays every event sequence the worker sends for one attempt (see
// lifecycle.go) and checks that laraq_jobs_running is back to 0 after each, and
// that it counted the attempt while it ran.
func TestRunningGauge(t *testing.T) {
	const (
		P  = Processing
		D  = Processed
		F  = Failed
		R  = Released
		X  = Exception
		TO = TimedOut
		H  = HandedBack
	)
	for _, c := range []struct {
		name    string
		events  []Kind
		tracked bool // the sequence starts with Processing
	}{
		{"processed", []Kind{P, D}, true},
		{"deleted by the handler", []Kind{P, D}, true},
		{"released by the handler", []Kind{P, R, D}, true},
		{"failed by the handler (Fail returns normally)", []Kind{P, F, D}, true},
		{"command cannot be decoded", []Kind{P, F}, true},
		{"no handler, failed by the policy", []Kind{P, F}, true},
		{"max attempts exceeded before running", []Kind{P, F, X}, true},
		{"exception, released", []Kind{P, X, R}, true},
		{"exception on the last try", []Kind{P, F, X}, true},
		{"panic, released", []Kind{P, X, R}, true},
		{"chain dispatch failed after a Release", []Kind{P, R, X}, true},
		{"timeout, left reserved", []Kind{P, TO}, true},
		{"timeout, failed", []Kind{P, TO, F}, true},
		{"timeout, released", []Kind{P, TO, R}, true},
		{"interrupted by a hard stop, released", []Kind{P, R}, true},
		{"no handler, released by the policy", []Kind{R}, false},
		{"no handler, handed back", []Kind{H}, false},
		{"payload unreadable before any Processing", []Kind{F}, false},
		{"ends only", []Kind{D, X, TO, F, R}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, err := New(Config{})
			if err != nil {
				t.Fatal(err)
			}
			running := func() float64 {
				return gather(t, m.Registry())[`laraq_jobs_running{queue="q"}`]
			}
			// Another attempt runs throughout: the sequence must not end it.
			other := new(int)
			m.Observe(Event{Kind: Processing, Queue: "q", Class: "C", Attempt: other})
			attempt := new(int)
			for i, k := range c.events {
				m.Observe(Event{Kind: k, Queue: "q", Class: "C", Attempt: attempt})
				want := 1.0
				if i == 0 && c.tracked {
					want = 2
				}
				if got := running(); got != want {
					t.Fatalf("after %v: running %v, want %v", c.events[:i+1], got, want)
				}
			}
			m.Observe(Event{Kind: Processed, Queue: "q", Class: "C", Attempt: other})
			if got := running(); got != 0 {
				t.Errorf("running %v after every attempt ended, want 0", got)
			}
			// Events of the finished attempt that come late change nothing.
			m.Observe(Event{Kind: Processed, Queue: "q", Class: "C", Attempt: attempt})
			if got := running(); got != 0 {
				t.Errorf("running %v after a late event, want 0", got)
			}
		})
	}
}

// TestRunningGaugeConcurrent ends many attempts from many goroutines, each with two
// ending events, as a worker with a high concurrency does.
func TestRunningGaugeConcurrent(t *testing.T) {
	m, _ := New(Config{})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				a := new(int)
				q := fmt.Sprint("q", g%2)
				m.Observe(Event{Kind: Processing, Queue: q, Attempt: a})
				if i%2 == 0 {
					m.Observe(Event{Kind: Released, Queue: q, Attempt: a})
				} else {
					m.Observe(Event{Kind: Failed, Queue: q, Attempt: a})
				}
				m.Observe(Event{Kind: Processed, Queue: q, Attempt: a})
			}
		})
	}
	wg.Wait()
	v := gather(t, m.Registry())
	if v[`laraq_jobs_running{queue="q0"}`] != 0 || v[`laraq_jobs_running{queue="q1"}`] != 0 {
		t.Errorf("running %v / %v, want 0", v[`laraq_jobs_running{queue="q0"}`], v[`laraq_jobs_running{queue="q1"}`])
	}
	if got := v[`laraq_jobs_processed_total{class="",queue="q0"}`]; got != 2000 {
		t.Errorf("processed %v, want 2000", got)
	}
}

func TestHealthz(t *testing.T) {
	clk := &clock{t: time.Unix(1_800_000_000, 0)}
	m, _ := New(Config{Now: clk.Now, HealthMaxAge: 30 * time.Second})
	h := m.Handler()
	check := func(code int, reason string) {
		t.Helper()
		var got Health
		if err := json.Unmarshal([]byte(get(t, h, "/healthz", code)), &got); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got.Reason, reason) || got.Healthy != (code == 200) {
			t.Errorf("health %+v, want reason %q", got, reason)
		}
	}
	check(503, "has not started")
	m.Observe(Event{Kind: Processed, Queue: "q", Class: "C"}) // only the loop's heartbeat counts
	check(503, "has not started")
	m.Observe(Event{Kind: Loop})
	check(200, "")
	clk.Add(20 * time.Second)
	// Unhealthy from the first heartbeat that says Redis failed, not once an age passed.
	m.Observe(Event{Kind: Loop, Err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")})
	check(503, "redis unreachable: dial tcp 127.0.0.1:1: connect: connection refused")
	m.Observe(Event{Kind: Processed, Queue: "q", Class: "C"}) // a job event says nothing of Redis
	check(503, "redis unreachable")
	m.Observe(Event{Kind: Loop})
	check(200, "")
	clk.Add(31 * time.Second)
	check(503, "worker loop stalled")
	m.Observe(Event{Kind: Loop})
	check(200, "")
	long := errors.New(strings.Repeat("x", 500) + "\nsecond line")
	m.Observe(Event{Kind: Loop, Err: long})
	var got Health
	_ = json.Unmarshal([]byte(get(t, h, "/healthz", 503)), &got)
	if len(got.Reason) > 200 || strings.Contains(got.Reason, "second line") {
		t.Errorf("reason not shortened: %q", got.Reason)
	}
}

func TestServe(t *testing.T) {
	m, _ := New(Config{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.ServeListener(ctx, l) }()
	m.Observe(Event{Kind: Loop})
	resp, err := http.Get("http://" + l.Addr().String() + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"healthy":true`) {
		t.Errorf("healthz %d %s", resp.StatusCode, body)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel: %v", err)
		}
	case <-time.After(ShutdownTimeout + time.Second):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := http.Get("http://" + l.Addr().String() + "/metrics"); err == nil {
		t.Error("server still answers after shutdown")
	}
}

func TestNewRejectsBadBuckets(t *testing.T) {
	if _, err := New(Config{Buckets: []float64{1, 1}}); err == nil {
		t.Error("non-increasing buckets accepted")
	}
}

func get(t *testing.T, h http.Handler, path string, code int) string {
	t.Helper()
	rec := &recorder{header: http.Header{}, code: 200}
	req, _ := http.NewRequest("GET", path, nil)
	h.ServeHTTP(rec, req)
	if rec.code != code {
		t.Fatalf("GET %s: %d, want %d\n%s", path, rec.code, code, rec.body.String())
	}
	return rec.body.String()
}

type recorder struct {
	header http.Header
	code   int
	body   strings.Builder
}

func (r *recorder) Header() http.Header         { return r.header }
func (r *recorder) Write(b []byte) (int, error) { return r.body.Write(b) }
func (r *recorder) WriteHeader(c int)           { r.code = c }

// TestMiddlewareDecisions: each attempt a middleware decided counts once under its name
// and decision, though every event of the outcome names it (a release's Released and
// Processed; FailOnException's Failed and Exception).
func TestMiddlewareDecisions(t *testing.T) {
	m, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	const cls = `App\Jobs\SyncOrder`
	attempt := func(by string, d laraq.Decision, kinds ...laraq.EventKind) {
		j := &laraq.JobInfo{Name: cls}
		m.OnEvent(laraq.Event{Kind: laraq.EventProcessing, Queue: "default", Job: j})
		for _, k := range kinds {
			m.OnEvent(laraq.Event{Kind: k, Queue: "default", Job: j, Middleware: by, Decision: d})
		}
	}
	attempt("WithoutOverlapping", laraq.DecisionReleased, laraq.EventReleased, laraq.EventProcessed)
	attempt("WithoutOverlapping", laraq.DecisionReleased, laraq.EventReleased, laraq.EventProcessed)
	attempt("Skip", laraq.DecisionSkipped, laraq.EventProcessed)
	attempt("ThrottlesExceptions", laraq.DecisionDeleted, laraq.EventProcessed)
	attempt("FailOnException", laraq.DecisionFailed, laraq.EventFailed, laraq.EventException)
	attempt("", "", laraq.EventProcessed)

	v := gather(t, m.Registry())
	key := func(by, d string) string {
		return `laraq_jobs_middleware_total{class="App\\Jobs\\SyncOrder",decision="` + d + `",middleware="` + by + `",queue="default"}`
	}
	want := map[string]float64{
		key("WithoutOverlapping", "released"):                                      2,
		key("Skip", "skipped"):                                                     1,
		key("ThrottlesExceptions", "deleted"):                                      1,
		key("FailOnException", "failed"):                                           1,
		`laraq_jobs_processed_total{class="App\\Jobs\\SyncOrder",queue="default"}`: 5,
	}
	n := 0
	for k, got := range v {
		if strings.HasPrefix(k, "laraq_jobs_middleware_total") {
			n++
			if got != want[k] {
				t.Errorf("%s = %v, want %v", k, got, want[k])
			}
		}
	}
	if n != 4 || v[`laraq_jobs_processed_total{class="App\\Jobs\\SyncOrder",queue="default"}`] != 5 {
		t.Errorf("%d middleware series, processed %v", n, v)
	}
}
