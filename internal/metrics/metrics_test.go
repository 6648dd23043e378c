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
	m.Observe(Event{Kind: Processing, Queue: "default", Class: cls})
	m.Observe(Event{Kind: Processed, Queue: "default", Class: cls, Duration: 120 * time.Millisecond})
	m.Observe(Event{Kind: Processing, Queue: "default", Class: cls})
	m.Observe(Event{Kind: Exception, Queue: "default", Class: cls, Duration: 2 * time.Second})
	m.Observe(Event{Kind: Released, Queue: "default", Class: cls})
	m.Observe(Event{Kind: Processing, Queue: "default", Class: cls})
	m.Observe(Event{Kind: TimedOut, Queue: "default", Class: cls, Duration: time.Minute})
	m.Observe(Event{Kind: Failed, Queue: "default", Class: cls})
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
	m.Observe(Event{Kind: Loop})
	check(200, "")
	clk.Add(20 * time.Second)
	m.Observe(Event{Kind: Loop, Err: errors.New("dial tcp: connection refused")})
	check(200, "") // Redis answered 20s ago: still within 30s
	clk.Add(15 * time.Second)
	m.Observe(Event{Kind: Loop, Err: errors.New("dial tcp: connection refused")})
	check(503, "redis has not answered recently: dial tcp: connection refused")
	m.Observe(Event{Kind: Processed, Queue: "q", Class: "C"}) // a finished job means Redis answered
	check(200, "")
	clk.Add(31 * time.Second)
	check(503, "worker loop stalled")
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
