package cli

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/laravel"
)

// TestWorkLaravel12App runs `work` from nothing but a Laravel 12.40 application's .env:
// the derived hyphenated prefixes, REDIS_QUEUE, the failed-job table from DB_* with
// failed_at in UTC (12.x's config/app.php writes 'UTC' and does not read APP_TIMEZONE), the queue:pause and queue:restart keys `laraq pause` and
// `laraq restart` write for that version, JSON job records and the metrics endpoint.
func TestWorkLaravel12App(t *testing.T) {
	srv := testenv.RedisServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	app := "Shop " + testenv.RandomName(3)
	slug := strings.ToLower(strings.ReplaceAll(app, " ", "-"))
	prefix := slug + "-database-"
	dbPath := filepath.Join(t.TempDir(), "app.sqlite")
	env := envFile(t,
		`APP_NAME="`+app+`"`, "APP_TIMEZONE=Asia/Tokyo", "QUEUE_CONNECTION=redis", "CACHE_STORE=redis",
		"REDIS_HOST=127.0.0.1", "REDIS_PORT="+itoa(int64(srv.Port)), "REDIS_QUEUE=emails",
		"DB_CONNECTION=sqlite", "DB_DATABASE="+dbPath)
	getenv := func(k string) string {
		if k == "LARAQ_LARAVEL_VERSION" {
			return "12.40"
		}
		return ""
	}
	appArgs := []string{"--env-file", env}

	client := srv.Client(t, 0)
	p, err := testDispatcher(client, prefix, "emails")
	if err != nil {
		t.Fatal(err)
	}
	ran := make(chan int, 10)
	reg := laraq.NewJobs()
	handle(reg, `App\Jobs\Fwd`, func(ctx context.Context, cmd *fwdJob, job *laraq.JobInfo) error {
		ran <- cmd.N
		if cmd.N < 0 {
			return laraq.Fail(errors.New("negative"))
		}
		return nil
	})
	stdout, stderr, done := mainAsync(ctx, append([]string{"work", "--queue", "emails,bulk", "--sleep", "0.05",
		"--log-format", "json", "--metrics-addr", "127.0.0.1:0", "--create-failed-table"}, appArgs...), WithJobs(reg), WithGetenv(getenv))
	waitFor(t, "worker start", func() bool { return strings.Contains(stderr.String(), "worker started") })
	expect := func(want int) {
		t.Helper()
		select {
		case n := <-ran:
			if n != want {
				t.Fatalf("ran job %d, want %d", n, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("job %d did not run:\n%s", want, stderr.String())
		}
	}

	// Failed jobs land in the application's table, in its timezone.
	if _, err := p.Dispatch(ctx, fwdJob{N: -1}); err != nil {
		t.Fatal(err)
	}
	expect(-1)
	waitFor(t, "the failed record", func() bool { return strings.Contains(stdout.String(), `"job_status":"failed"`) })
	store, err := database.Open(ctx, "sqlite:"+dbPath, database.Options{Location: time.UTC, CreateTable: database.CreateIfMissing})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	recs, err := store.All(ctx)
	if err != nil || len(recs) != 1 || recs[0].Queue != "emails" || recs[0].Connection != "redis" ||
		time.Until(recs[0].FailedAt).Abs() > time.Minute {
		t.Fatalf("failed records %+v %v", recs, err)
	}

	// `laraq pause bulk` writes the 12.40 key the worker honours for that queue only.
	if out, errOut, rc := opsCLI(t, "", map[string]string{"LARAQ_LARAVEL_VERSION": "12.40"}, append([]string{"pause", "bulk"}, appArgs...)...); rc != 0 {
		t.Fatalf("pause: %d %s %s", rc, out, errOut)
	}
	waitFor(t, "the pause flag", func() bool {
		return strings.Contains(stderr.String(), `"queue pause flag changed","queue":"bulk","paused":true`)
	})
	if _, err := p.Dispatch(ctx, fwdJob{N: 2}, laraq.OnQueue("bulk")); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Dispatch(ctx, fwdJob{N: 1}); err != nil {
		t.Fatal(err)
	}
	expect(1)
	select {
	case n := <-ran:
		t.Fatalf("job %d of the paused queue ran", n)
	case <-time.After(300 * time.Millisecond):
	}
	if _, _, rc := opsCLI(t, "", map[string]string{"LARAQ_LARAVEL_VERSION": "12.40"}, append([]string{"resume", "bulk"}, appArgs...)...); rc != 0 {
		t.Fatal("resume failed")
	}
	expect(2)

	// Metrics: counters by queue and class, depths, health.
	addr := regexp.MustCompile(`"serving metrics","addr":"([^"]+)"`).FindStringSubmatch(stderr.String())
	if addr == nil {
		t.Fatalf("no metrics address in the log:\n%s", stderr.String())
	}
	wants := []string{
		// $this->fail() inside handle() returns normally: PHP fires JobFailed, then
		// JobProcessed, and so does the consumer.
		`laraq_jobs_processed_total{class="App\\Jobs\\Fwd",queue="emails"} 2`,
		`laraq_jobs_processed_total{class="App\\Jobs\\Fwd",queue="bulk"} 1`,
		`laraq_jobs_failed_total{class="App\\Jobs\\Fwd",queue="emails"} 1`,
		`laraq_queue_jobs{queue="emails",state="ready"} 0`,
		`laraq_job_duration_seconds_count{class="App\\Jobs\\Fwd",outcome="processed",queue="bulk"} 1`,
	}
	// The handler has run; its acknowledgement and events may still be on their way.
	var body string
	deadline := time.Now().Add(5 * time.Second)
	for missing := wants; len(missing) > 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		body = httpGet(t, "http://"+addr[1]+"/metrics")
		missing = missing[:0:0]
		for _, want := range wants {
			if !strings.Contains(body, want) {
				missing = append(missing, want)
			}
		}
	}
	for _, want := range wants {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}
	if h := httpGet(t, "http://"+addr[1]+"/healthz"); !strings.Contains(h, `"healthy":true`) {
		t.Errorf("healthz: %s", h)
	}

	// `laraq restart` writes 12.x's key; the worker stops with status 0.
	if _, _, rc := opsCLI(t, "", map[string]string{"LARAQ_LARAVEL_VERSION": "12.40"}, append([]string{"restart"}, appArgs...)...); rc != 0 {
		t.Fatal("restart failed")
	}
	select {
	case rc := <-done:
		if rc != 0 {
			t.Fatalf("exit %d:\n%s", rc, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("worker did not stop on restart:\n%s", stderr.String())
	}
	cache := srv.Client(t, 1)
	if v := cache.Get(ctx, prefix+slug+"-cache-illuminate:queue:restart").Val(); v == "" {
		t.Errorf("restart key not at the 12.x name")
	}

	// Every job line is a JSON record with the job attributes.
	statuses := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(stdout.String()), "\n") {
		var rec struct {
			Status string `json:"job_status"`
			Job    string `json:"job"`
			Queue  string `json:"queue"`
			ID     string `json:"job_id"`
		}
		if err := json.Unmarshal([]byte(l), &rec); err != nil || rec.Job != `App\Jobs\Fwd` || rec.ID == "" {
			t.Errorf("job line %q: %v", l, err)
		}
		statuses[rec.Status]++
	}
	if statuses["starting"] != 3 || statuses["success"] != 3 || statuses["failed"] != 1 {
		t.Errorf("job statuses %v", statuses)
	}
	if keys, _ := testenv.Keys(ctx, client, prefix); len(keys) != 0 {
		t.Errorf("keys left: %v", keys)
	}
}

func httpGet(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// TestWorkFailedStoreDefault: without --database or an application, failures go to the
// local SQLite file under XDG_DATA_HOME that `laraq failed` reads too.
func TestWorkFailedStoreDefault(t *testing.T) {
	srv := testenv.RedisServer(t)
	prefix := testenv.Prefix(t)
	data := t.TempDir()
	env := map[string]string{"XDG_DATA_HOME": data, "LARAQ_REDIS_URL": "redis://" + srv.Addr + "/0", "LARAQ_REDIS_PREFIX": prefix}
	p, err := testDispatcher(srv.Client(t, 0), prefix, "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Dispatch(context.Background(), fwdJob{N: 1}); err != nil {
		t.Fatal(err)
	}
	// No handler for App\Jobs\Fwd: --unhandled fail records it.
	_, errOut, rc := opsCLI(t, "", env, "work", "--stop-when-empty", "--no-cache")
	if rc != 0 || !strings.Contains(errOut, filepath.Join(data, "laraq", "failed.sqlite")) {
		t.Fatalf("work: %d\n%s", rc, errOut)
	}
	out, errOut, rc := opsCLI(t, "", env, "failed", "list", "--json")
	var rows []failedRow
	if rc != 0 || json.Unmarshal([]byte(out), &rows) != nil || len(rows) != 1 || rows[0].Class != `App\Jobs\Fwd` {
		t.Fatalf("failed list: %d %s %s", rc, out, errOut)
	}
	// --help says where that file is.
	help, _, _ := opsCLI(t, "", nil, "work", "--help")
	for _, want := range []string{"$XDG_DATA_HOME/laraq/failed.sqlite", "LARAQ_REDIS_URL", "REDIS_QUEUE", "--log-format", "--metrics-addr"} {
		if !strings.Contains(help, want) {
			t.Errorf("work --help lacks %q", want)
		}
	}
	// A Laravel 8 application whose .env names MySQL keeps its failures there, not locally.
	cfg, err := laravel.Load(laravel.App{EnvFile: envFile(t, "DB_CONNECTION=mysql", "DB_HOST=db.internal", "DB_DATABASE=shop", "DB_USERNAME=app", "DB_PASSWORD=s3cret"),
		Flags: map[string]string{"LARAQ_LARAVEL_VERSION": "8"}, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	dsn, local, err := cfg.FailedStore()
	if err != nil || local || dsn != "mysql://app:s3cret@db.internal:3306/shop" {
		t.Errorf("failedDSN = %q, %v, %v", dsn, local, err)
	}
}

// noHandlerJob is a job class this binary has no handler for.
type noHandlerJob struct {
	N int `php:"n"`
}

func (noHandlerJob) PHPClass() string { return `App\Jobs\NoGoHandler` }

// TestWorkHealthFollowsRedis cuts the worker off Redis and lets it back: /healthz answers
// 503 with the reason while Redis is unreachable and 200 again after. Before that, the
// attempts that end in each way leave laraq_jobs_running at 0.
func TestWorkHealthFollowsRedis(t *testing.T) {
	srv := testenv.RedisServer(t)
	client := srv.Client(t, 0)
	prefix := testenv.Prefix(t)
	proxy := newTCPProxy(t, srv.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	p, err := testDispatcher(client, prefix, "")
	if err != nil {
		t.Fatal(err)
	}
	reg := laraq.NewJobs()
	handle(reg, `App\Jobs\Fwd`, func(ctx context.Context, cmd *fwdJob, job *laraq.JobInfo) error {
		switch cmd.N {
		case 1:
			return laraq.Fail(errors.New("given up")) // failed, then processed
		case 2:
			return errors.New("thrown") // exception, then failed (one try)
		case 3:
			return laraq.ReleaseAfter(time.Hour) // released, then processed
		}
		return nil
	})
	for _, cmd := range []any{fwdJob{N: 0}, fwdJob{N: 1}, fwdJob{N: 2}, fwdJob{N: 3}, noHandlerJob{N: 4}} {
		if _, err := p.Dispatch(ctx, cmd.(interface{ PHPClass() string })); err != nil {
			t.Fatal(err)
		}
	}
	stdout, stderr, done := mainAsync(ctx, []string{"work", "--redis", "redis://" + proxy.addr + "/0", "--prefix", prefix,
		"--no-cache", "--database", "sqlite:" + filepath.Join(t.TempDir(), "failed.sqlite"), "--create-failed-table", "--sleep", "0.05",
		"--log-format", "json", "--metrics-addr", "127.0.0.1:0"}, WithJobs(reg))
	waitFor(t, "worker start", func() bool { return strings.Contains(stderr.String(), "worker started") })
	addr := regexp.MustCompile(`"serving metrics","addr":"([^"]+)"`).FindStringSubmatch(stderr.String())
	if addr == nil {
		t.Fatalf("no metrics address in the log:\n%s", stderr.String())
	}
	base := "http://" + addr[1]
	waitFor(t, "the five jobs", func() bool { return strings.Count(stdout.String(), `"job_status":"starting"`) == 5 })
	waitFor(t, "their ends", func() bool {
		return strings.Contains(httpGet(t, base+"/metrics"), `laraq_jobs_failed_total{class="App\\Jobs\\NoGoHandler",queue="default"} 1`)
	})
	body := httpGet(t, base+"/metrics")
	for _, want := range []string{
		`laraq_jobs_running{queue="default"} 0`,
		`laraq_jobs_failed_total{class="App\\Jobs\\Fwd",queue="default"} 2`,
		`laraq_jobs_released_total{class="App\\Jobs\\Fwd",queue="default"} 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("metrics lack %s:\n%s", want, body)
		}
	}

	health := func() (int, healthBody) {
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var h healthBody
		if err := json.NewDecoder(resp.Body).Decode(&h); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, h
	}
	waitHealth := func(code int, reason string) {
		t.Helper()
		var got int
		var h healthBody
		deadline := time.Now().Add(20 * time.Second)
		for got, h = health(); got != code || !strings.Contains(h.Reason, reason); got, h = health() {
			if time.Now().After(deadline) {
				t.Fatalf("/healthz %d %+v, want %d with %q\n%s", got, h, code, reason, stderr.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitHealth(http.StatusOK, "")
	proxy.down()
	waitHealth(http.StatusServiceUnavailable, "redis unreachable: ")
	proxy.up()
	waitHealth(http.StatusOK, "")

	cancel()
	if rc := <-done; rc != 0 {
		t.Fatalf("exit %d\n%s", rc, stderr.String())
	}
}

// healthBody is /healthz's body.
type healthBody struct {
	Healthy bool   `json:"healthy"`
	Reason  string `json:"reason"`
}

// tcpProxy forwards connections to a server and can cut them all and refuse new ones,
// to play an outage of the Redis server other tests share.
type tcpProxy struct {
	t       *testing.T
	addr    string
	backend string

	mu    sync.Mutex
	l     net.Listener
	conns map[net.Conn]bool
}

func newTCPProxy(t *testing.T, backend string) *tcpProxy {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &tcpProxy{t: t, addr: l.Addr().String(), backend: backend, l: l, conns: map[net.Conn]bool{}}
	go p.serve(l)
	t.Cleanup(p.down)
	return p
}

func (p *tcpProxy) serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		b, err := net.Dial("tcp", p.backend)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.l != l {
			p.mu.Unlock()
			c.Close()
			b.Close()
			return
		}
		p.conns[c], p.conns[b] = true, true
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		go pipe(b, c)
		go pipe(c, b)
	}
}

// down closes the listener and every connection.
func (p *tcpProxy) down() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		p.l.Close()
		p.l = nil
	}
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// up listens again on the same address.
func (p *tcpProxy) up() {
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	go p.serve(l)
}
