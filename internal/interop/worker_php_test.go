package interop

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
)

// collector keeps what Go handlers received, by uuid.
type collector struct {
	mu  sync.Mutex
	got map[string]collected
	dup []string
}

type collected struct {
	job *laraq.JobInfo
	cmd any
}

func (c *collector) add(job *laraq.JobInfo, cmd any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.got == nil {
		c.got = map[string]collected{}
	}
	if _, dup := c.got[job.UUID]; dup {
		c.dup = append(c.dup, job.UUID)
	}
	c.got[job.UUID] = collected{job, cmd}
}

// collect registers a typed handler for class that records what it decoded.
func collect[T any](reg *laraq.Jobs, class string, c *collector) {
	testkit.Register(reg, class, func(ctx context.Context, cmd *T, job *laraq.JobInfo) error {
		c.add(job, cmd)
		return nil
	})
}

type stringData struct {
	A []int64 `json:"a"`
	U string  `json:"u"`
}

// interopRegistry handles every class the interop test dispatches.
func interopRegistry(c *collector) *laraq.Jobs {
	reg := laraq.NewJobs()
	collect[wPlainJob](reg, `App\Jobs\PlainJob`, c)
	collect[wVisibilityJob](reg, `App\Jobs\VisibilityJob`, c)
	collect[wNestedJob](reg, `App\Jobs\NestedJob`, c)
	collect[wNumbersJob](reg, `App\Jobs\NumbersJob`, c)
	collect[wModelJob](reg, `App\Jobs\ModelJob`, c)
	collect[wCarbonJob](reg, `App\Jobs\CarbonJob`, c)
	collect[wEnumJob](reg, `App\Jobs\EnumJob`, c)
	collect[wNamedJob](reg, `App\Jobs\NamedJob`, c)
	collect[testkit.ScriptedJob](reg, `App\Jobs\Scripted`, c)
	collect[uploadPlatform](reg, `App\Jobs\UploadPlatform`, c)
	collect[testJob](reg, `App\Jobs\TestJob`, c)
	collect[articlesTotalLoader](reg, `App\Jobs\API\ABCP\ArticlesTotalLoader`, c)
	collect[stringData](reg, `App\Jobs\StringJobs@deletes`, c)
	return reg
}

// interopRequests are dispatch.php requests for every shape of job; @Q@ and @E@ are
// replaced by queue names.
var interopRequests = []string{
	`{"class":"App\\Jobs\\PlainJob","props":{"name":"Grüße, 世界 😀 \u2028 \"q\" / \\ \u0000 end","count":42,"ratio":0.1,"flag":true,"nothing":null,"tags":["a","b"],"meta":{"k":"v","n":1,"10":"ten","list":[1.5,"x"]}},"queue":"@Q@"}`,
	`{"class":"App\\Jobs\\VisibilityJob","props":{"pub":"p","\u0000*\u0000prot":7,"\u0000App\\Jobs\\VisibilityJob\u0000priv":[1,{"a":null}]},"queue":"@Q@"}`,
	`{"class":"App\\Jobs\\NestedJob","props":{"list":[1,[2,[3,[]]]],"map":{"10":"ten","x":{"y":"z"},"-1":false},"object":{"@class":"App\\Support\\Address","street":"Hauptstraße 1","\u0000*\u0000zip":"10115","\u0000App\\Support\\Address\u0000geo":[52.52,13.405]},"deep":{"a":{"b":{"c":{"d":[true]}}}},"text":"line1\nline2\ttab"},"queue":"@Q@"}`,
	`{"class":"App\\Jobs\\NumbersJob","props":{"negZero":-0.0,"big":1e100,"tenth":0.1,"maxInt":9223372036854775807,"minInt":-9223372036854775808,"floats":[1.0,2.5,-3.25e-10,1.7976931348623157e308,5e-324]},"queue":"@Q@"}`,
	`{"class":"App\\Jobs\\ModelJob","props":{"user":{"@class":"App\\Models\\User","exists":true,"\u0000*\u0000attributes":{"id":3,"name":"user3","email":"user3@example.com"},"\u0000*\u0000original":{"id":3,"name":"user3","email":"user3@example.com"}},"note":"model"},"queue":"@Q@"}`,
	`{"class":"App\\Jobs\\CarbonJob","props":{"when":{"@class":"Illuminate\\Support\\Carbon","date":"2024-05-06 07:08:09.123456","timezone_type":3,"timezone":"Europe/Berlin"},"date":{"@class":"DateTimeImmutable","date":"1999-12-31 23:59:59.000000","timezone_type":3,"timezone":"UTC"}},"queue":"@Q@"}`,
	`{"class":"App\\Jobs\\EnumJob","props":{"status":{"@enum":"App\\Enums\\Status:Active"},"suit":{"@enum":"App\\Enums\\Suit:Spades"},"typed":{"@enum":"App\\Enums\\Status:Suspended"}},"queue":"@Q@"}`,
	`{"class":"App\\Jobs\\NamedJob","props":{"name":"x"},"queue":"@Q@"}`,
	`{"class":"App\\Jobs\\PlainJob","props":{"name":"to the custom queue","count":-1,"ratio":1e-7,"flag":false,"nothing":null,"tags":[],"meta":{}},"queue":"@E@"}`,
	`{"class":"App\\Jobs\\PlainJob","props":{"name":"delayed","count":0,"ratio":-2.5,"flag":true,"nothing":null,"tags":["d"],"meta":{"0":"zero"}},"queue":"@Q@","delay":10}`,
	`{"string_job":"App\\Jobs\\StringJobs@deletes","data":{"a":[1,2],"u":"ü"},"queue":"@Q@"}`,
}

// s11Now is when the s11 sample was pushed (its pushedAt); its retryUntil is a minute
// later.
const s11Now = 1642836474

func TestInteropLaravelDispatchedJobs(t *testing.T) {
	testenv.NeedPHP(t)
	for _, v := range []struct {
		name, client string
		prefix       bool
		db           int
	}{
		{"phpredis with prefix", "phpredis", true, 0},
		{"predis with prefix", "predis", true, 0},
		{"phpredis without prefix", "phpredis", false, 3},
		{"predis without prefix", "predis", false, 5},
	} {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			prefix := ""
			if v.prefix {
				prefix = testenv.Prefix(t)
			}
			interopRun(t, v.client, prefix, v.db)
		})
	}
}

func interopRun(t *testing.T, phpClient, prefix string, db int) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	client := srv.Client(t, db)
	rnd := testenv.RandomName(4)
	qQ, qE, qR, qS, qP := "q"+rnd, "emails"+rnd, "rel"+rnd, "s11"+rnd, "php"+rnd
	recFile := testkit.RecordFile(t)
	penv := testenv.PHPEnv{Redis: srv, DB: db, CacheDB: db + 1, Prefix: prefix, Client: phpClient, Record: recFile}
	r, err := rdb.New(client, rdb.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}

	// A job a PHP worker already ran once and released: the payload Go pops is the
	// cjson re-encoding of the pop script, with attempts 1.
	testkit.PHPDispatch(t, penv, nil, `{"class":"App\\Jobs\\Scripted","props":{"actions":["release:0","ok"],"tag":"released-once"},"queue":"`+qR+`"}`)
	testkit.RunWorker(t, penv, 30*time.Second, "--once", "--queue="+qR)
	rel, err := client.ZRange(ctx, prefix+"queues:"+qR+":delayed", 0, -1).Result()
	if err != nil || len(rel) != 1 {
		t.Fatalf("released job: %v %v", rel, err)
	}

	// Every shape, through Laravel's Bus and RedisQueue, plus Horizon payloads pushed raw.
	now := time.Now().Unix()
	var reqs []string
	for _, q := range interopRequests {
		reqs = append(reqs, strings.NewReplacer("@Q@", qQ, "@E@", qE).Replace(q))
	}
	reqs = append(reqs,
		`{"raw":`+testkit.JSONString(string(readSample(t, "s7.json")))+`,"queue":"`+qQ+`"}`,
		`{"raw":`+testkit.JSONString(string(readSample(t, "s8.json")))+`,"queue":"`+qQ+`"}`,
		`{"raw":`+testkit.JSONString(string(readSample(t, "s11.json")))+`,"queue":"`+qS+`"}`)
	out := testkit.PHPDispatch(t, penv, []string{fmt.Sprintf("--now=%d", now-60)}, reqs...)
	delayed := out[9]
	if !delayed.Delayed || delayed.Score == nil || int64(*delayed.Score) != now-60+10 {
		t.Fatalf("delayed dispatch: %+v", delayed)
	}

	// The Go worker takes them all.
	col := &collector{}
	cfg := testkit.Setup{
		Queues: []string{qQ, qE, qR}, Prefix: prefix, Registry: interopRegistry(col),
		Tries: new(0), StopWhenEmpty: true, Sleep: 10 * time.Millisecond, Logger: testkit.QuietLogger(t),
	}
	store := &testkit.MemStore{}
	cfg.Failed = store
	c, err := testkit.NewWorker(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
		t.Fatalf("Run = %v", err)
	}
	// s11's retryUntil lies in 2022: on today's clock PHP and Go fail it before running
	// it; on the clock of its day it runs.
	cfg.Queues = []string{qS}
	cfg.Now = func() time.Time { return time.Unix(s11Now, 0) }
	if c, err = testkit.NewWorker(client, cfg); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
		t.Fatalf("Run = %v", err)
	}
	if recs := store.All(); len(recs) != 0 {
		t.Fatalf("failed: %+v", recs)
	}
	if len(col.dup) != 0 {
		t.Fatalf("jobs run twice: %v", col.dup)
	}
	if len(col.got) != len(reqs)+1 {
		t.Fatalf("Go handled %d jobs, want %d", len(col.got), len(reqs)+1)
	}
	if keys, _ := testenv.Keys(ctx, client, prefix); len(keys) != 0 && prefix != "" {
		t.Fatalf("keys left: %v", keys)
	} else if prefix == "" && len(keys) != 0 {
		t.Fatalf("keys left in db %d: %v", db, keys)
	}

	// Go's view of the envelope.
	for i, d := range out {
		env, err := payload.Parse([]byte(d.Payload))
		if err != nil {
			t.Fatal(err)
		}
		g, ok := col.got[env.UUID]
		if !ok {
			t.Errorf("request %d (%s) not handled", i, reqs[i][:40])
			continue
		}
		wantQueue := d.Queue
		if g.job.Queue != wantQueue || string(g.job.Raw) != d.Payload || g.job.Attempt != 1 || g.job.Connection != "redis" {
			t.Errorf("request %d: job %s attempt %d queue %s, want %s", i, g.job.ID, g.job.Attempt, g.job.Queue, wantQueue)
		}
	}
	relEnv, _ := payload.Parse([]byte(rel[0]))
	if g := col.got[relEnv.UUID]; g.job == nil || g.job.Attempt != 2 || string(g.job.Raw) != rel[0] {
		t.Fatalf("released job: %+v", g.job)
	}

	// The same bytes, run by Laravel's own worker, say what PHP makes of them.
	for _, g := range col.got {
		if err := r.Push(ctx, qP, g.job.Raw); err != nil {
			t.Fatal(err)
		}
	}
	testkit.RunWorker(t, penv, 60*time.Second, "--queue="+qP, "--stop-when-empty", "--sleep=0", "--tries=0", fmt.Sprintf("--now=%d", s11Now))
	byUUID := map[string]testkit.PHPRecord{}
	for _, rec := range testkit.ReadRecords(t, recFile) {
		if rec.Event == "handle" && rec.UUID != nil && rec.Queue == qP {
			byUUID[*rec.UUID] = rec
		}
	}
	for uuid, g := range col.got {
		rec, ok := byUUID[uuid]
		if !ok {
			t.Errorf("%s %s: no PHP record", g.job.Class, uuid)
			continue
		}
		if rec.ID == nil || *rec.ID != g.job.ID || rec.Attempts != g.job.Attempt || rec.Name != g.job.Name ||
			rec.Raw != string(g.job.Raw) || rec.Conn != g.job.Connection {
			t.Errorf("%s: PHP saw id %v attempt %d name %q conn %q; Go %s %d %q %q", g.job.Class,
				rec.ID, rec.Attempts, rec.Name, rec.Conn, g.job.ID, g.job.Attempt, g.job.Name, g.job.Connection)
		}
		if sd, ok := g.cmd.(*stringData); ok {
			want := rec.Data.ToAny()
			got := map[string]any{"a": []any{sd.A[0], sd.A[1]}, "u": sd.U}
			if !reflect.DeepEqual(want, got) {
				t.Errorf("string job data %#v, PHP %#v", got, want)
			}
			continue
		}
		if rec.Class != g.job.Class {
			t.Errorf("class %s, PHP %s", g.job.Class, rec.Class)
		}
		for _, d := range testkit.CompareRecord(g.job.Class, rec.Props, g.cmd) {
			t.Error(d)
		}
	}
	// Spot checks that the comparison itself sees the values.
	for _, g := range col.got {
		switch cmd := g.cmd.(type) {
		case *wNumbersJob:
			if cmd.MaxInt != math.MaxInt64 || cmd.MinInt != math.MinInt64 || !math.Signbit(cmd.NegZero) || cmd.Big != 1e100 {
				t.Errorf("numbers %+v", cmd)
			}
		case *wModelJob:
			if cmd.User.Class != `App\Models\User` || cmd.User.ID != int64(3) || cmd.User.Connection == nil || *cmd.User.Connection != "laraq_models" {
				t.Errorf("model %+v", cmd.User)
			}
		case *uploadPlatform:
			if cmd.Platform != "Vimeo" || cmd.UploadDTO.Audience != "ALL" || cmd.UploadDTO.Category.Attributes["slug"] != "entertainment" {
				t.Errorf("s7 %+v", cmd)
			}
		}
	}
}

func TestInteropS11FailsLikeLaravel(t *testing.T) {
	testenv.NeedPHP(t)
	e := testkit.NewEnv(t)
	reg := laraq.NewJobs()
	ran := false
	reg.HandleFunc(`App\Jobs\API\ABCP\ArticlesTotalLoader`, func(ctx context.Context, j *laraq.JobInfo) error { ran = true; return nil })
	cfg := e.Config(reg)
	cfg.Now = time.Now
	cfg.StopWhenEmpty = true
	s11 := readSample(t, "s11.json")
	e.Push("default", s11)
	e.RunToEnd(e.Consumer(cfg))
	recs := e.Store.All()
	if ran || len(recs) != 1 || string(recs[0].Payload) != string(s11) ||
		!strings.HasPrefix(recs[0].Exception, `Illuminate\Queue\MaxAttemptsExceededException: App\Jobs\API\ABCP\ArticlesTotalLoader has been attempted too many times or run too long.`) {
		t.Fatalf("ran %v, records %+v", ran, recs)
	}

	// Laravel's own worker, same payload, same outcome.
	srv := testenv.RedisServer(t)
	prefix := testenv.Prefix(t)
	client := srv.Client(t, 0)
	r, _ := rdb.New(client, rdb.Options{Prefix: prefix})
	if err := r.Push(e.Ctx, "default", s11); err != nil {
		t.Fatal(err)
	}
	out := testkit.RunWorker(t, testenv.PHPEnv{Redis: srv, Prefix: prefix}, 30*time.Second, "--once")
	if !strings.Contains(out, `Failed:     App\Jobs\API\ABCP\ArticlesTotalLoader`) {
		t.Fatalf("PHP worker: %s", out)
	}
}

// TestInteropCacheSignalsWithPHP checks that Go and Laravel's own Worker share the cache
// keys: the maxExceptions counter (in both orders), queue:restart and queue:pause.
func TestInteropCacheSignalsWithPHP(t *testing.T) {
	testenv.NeedPHP(t)
	srv := testenv.RedisServer(t)
	prefix := testenv.Prefix(t)
	client := srv.Client(t, 0)
	penv := testenv.PHPEnv{Redis: srv, Prefix: prefix} // cache: database 1, prefix laravel_cache (8.x skeleton)
	ctx := context.Background()
	store := &testkit.MemStore{}
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { return errors.New("flaky") })
	cfg := testkit.Setup{
		Prefix: prefix, Registry: reg, Failed: store, Tries: new(0), StopWhenEmpty: true, Sleep: 10 * time.Millisecond,
		Cache:  laraq.CacheStore{Client: srv.Client(t, 1), Prefix: "laravel_cache"}, // 8.83: "laravel_cache:" keys
		Logger: testkit.QuietLogger(t), SignalInterval: 10 * time.Millisecond,
	}
	r, _ := rdb.New(client, rdb.Options{Prefix: prefix})
	push := func(uuid string) {
		p := testkit.Job(t, testkit.SendInvoice{}, func(j *payload.ObjectJob) { j.UUID = uuid; j.MaxExceptions = new(int64(2)) })
		if err := r.Push(ctx, "default", p); err != nil {
			t.Fatal(err)
		}
	}
	run := func() {
		c, err := testkit.NewWorker(client, cfg)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
			t.Fatalf("Run = %v", err)
		}
	}

	// PHP counts the first exception, Go the second: failed.
	u1 := payload.NewUUID()
	if out := string(penv.Run(t, nil, "queue_op.php", "exception", u1, "2")); out != "counted\n" {
		t.Fatalf("PHP: %q", out)
	}
	push(u1)
	run()
	if n := len(store.All()); n != 1 {
		t.Fatalf("after PHP's and Go's exceptions: %d failed records", n)
	}
	// Go counts the first, PHP the second: PHP fails it.
	u2 := payload.NewUUID()
	push(u2)
	run()
	if n := len(store.All()); n != 1 {
		t.Fatalf("after one Go exception: %d failed records", n)
	}
	if out := string(penv.Run(t, nil, "queue_op.php", "exception", u2, "2")); out != "failed\n" {
		t.Fatalf("PHP after Go's exception: %q", out)
	}
	client.Del(ctx, prefix+"queues:default:delayed")

	// php artisan queue:pause redis:default (12.40+), then queue:resume.
	cfg.StopWhenEmpty = false
	reg2 := laraq.NewJobs()
	ran := make(chan struct{}, 1)
	reg2.HandleFunc(`App\Jobs\SendInvoice`, func(ctx context.Context, j *laraq.JobInfo) error { ran <- struct{}{}; return nil })
	cfg.Registry = reg2
	penv.Run(t, nil, "queue_op.php", "pause", "redis")
	c, err := testkit.NewWorker(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	push(payload.NewUUID())
	select {
	case <-ran:
		t.Fatal("ran a job on a paused queue")
	case <-time.After(300 * time.Millisecond):
	}
	penv.Run(t, nil, "queue_op.php", "resume", "redis")
	select {
	case <-ran:
	case <-time.After(5 * time.Second):
		t.Fatal("job did not run after queue:resume")
	}
	// php artisan queue:restart
	penv.Run(t, nil, "queue_op.php", "restart")
	select {
	case err := <-done:
		if !errors.Is(err, laraq.ErrRestart) {
			t.Fatalf("Run = %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("queue:restart not noticed")
	}
}
