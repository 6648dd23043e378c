package laraq_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/cli"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
	laravelpayloads "github.com/laraq/laraq/testdata/laravel-payloads"
)

var (
	update  = flag.Bool("update", false, "rewrite the golden files in testdata/laravel-payloads/decoded")
	capture = flag.Bool("capture", false, "capture the Laravel 8 payloads from the PHP peer again and rebuild the newer-version ones (needs php and redis-server)")
)

// expect is one row of the compatibility matrix: what laraq must do with a payload.
type expect struct {
	// parseErr is a part of payload.Parse's error for payloads it refuses ("" = parses).
	parseErr string
	// database: a database-queue payload (no id, attempts); the Redis run adds them as
	// RedisQueue::createPayloadArray would.
	database bool
	// runs is how many times the Go handler runs (a chain runs each step), failed a part
	// of the failed record's exception when the worker fails the job by Laravel's rules
	// instead, invalid that the pop script cannot reserve it (it is set aside, not lost).
	runs    int
	failed  string
	invalid bool
	// php: the Laravel 8 peer has the job's classes, so a PHP worker must run the copy a
	// Go worker released.
	php bool
	// models counts the command's ModelIdentifier properties.
	models int
}

// matrix has a row for every file in testdata/laravel-payloads (and the test fails when a
// file has none, or a row has no file).
var matrix = map[string]expect{
	"S1":         {runs: 1},
	"S1r":        {runs: 1},
	"S2":         {failed: "unreadable job payload"},
	"S3-partial": {parseErr: "unterminated string", invalid: true},
	"S4":         {database: true, runs: 1},
	"S5":         {database: true, runs: 1},
	"S6":         {database: true, runs: 1},
	"S7":         {runs: 1},
	"S8":         {runs: 1},
	"S8r":        {runs: 1},
	"S9":         {database: true, runs: 1, models: 1},
	"S10":        {database: true, runs: 1, models: 1},
	// Its retryUntil (2022) has passed: failed before running, as PHP's worker does.
	"S11":  {failed: "has been attempted too many times or run too long"},
	"S12":  {runs: 1},
	"S12r": {runs: 1},

	"L8-plain":      {runs: 1, php: true},
	"L8-plain-r":    {runs: 1, php: true},
	"L8-visibility": {runs: 1, php: true},
	"L8-nested":     {runs: 1, php: true},
	"L8-numbers":    {runs: 1, php: true},
	"L8-numbers-r":  {runs: 1, php: true},
	"L8-model":      {runs: 1, php: true, models: 1},
	"L8-model-r":    {runs: 1, php: true, models: 1},
	"L8-carbon":     {runs: 1, php: true},
	"L8-enum":       {runs: 1, php: true},
	"L8-named":      {runs: 1, php: true},
	"L8-meta":       {runs: 1, php: true},
	"L8-reverse":    {runs: 1, php: true},
	"L8-chain":      {runs: 3, php: true},
	"L8-delayed":    {runs: 1, php: true},
	"L8-onqueue":    {runs: 1, php: true},
	"L8-string":     {runs: 1, php: true},
	"L8-string-r":   {runs: 1, php: true},

	"L9.4-models":        {runs: 1, models: 1},
	"L9.26-collection":   {runs: 1, models: 1},
	"L11-context":        {runs: 1},
	"L11.2-queueable":    {runs: 1},
	"L12.11-delayed":     {runs: 1},
	"L12.11-string":      {runs: 1},
	"L12.51-batch":       {runs: 1},
	"L12.51-batch-r":     {runs: 1},
	"L13-missing-models": {runs: 1, models: 1},
}

func payloadDir() string { return testenv.Testdata("laravel-payloads") }

// TestCompatibility is the compatibility matrix: every real payload is read, decoded,
// printed like `laraq decode` (checked against golden files), run by the Go worker on a
// real redis-server and, where the Laravel 8 peer has the classes, run by PHP's worker
// after a Go worker released it.
func TestCompatibility(t *testing.T) {
	if *capture {
		capturePayloads(t)
	}
	ids := laravelpayloads.IDs()
	readme, err := laravelpayloads.FS.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if _, ok := matrix[id]; !ok {
			t.Errorf("%s: no row in the matrix", id)
		}
		if !bytes.Contains(readme, []byte("| "+id+" |")) {
			t.Errorf("%s: not in the README table", id)
		}
	}
	for id := range matrix {
		if !slices.Contains(ids, id) {
			t.Errorf("%s: in the matrix but no file", id)
		}
	}
	srv := testenv.RedisServer(t)
	for _, id := range ids {
		want, ok := matrix[id]
		if !ok {
			continue
		}
		t.Run(id, func(t *testing.T) {
			t.Parallel()
			raw, err := laravelpayloads.Read(id)
			if err != nil {
				t.Fatal(err)
			}
			env := checkParse(t, raw, want)
			checkDecodeGolden(t, id)
			runOnRedis(t, srv, raw, env, want)
			if want.php {
				runReleasedOnPHP(t, srv, raw, env)
			}
		})
	}
}

// checkParse: Parse accepts the payload (or refuses it as documented) and the command
// unserializes.
func checkParse(t *testing.T, raw []byte, want expect) *payload.Envelope {
	env, err := payload.Parse(raw)
	if want.parseErr != "" {
		if err == nil || !strings.Contains(err.Error(), want.parseErr) {
			t.Fatalf("Parse: %v, want an error about %q", err, want.parseErr)
		}
		return nil
	}
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if env.IsObjectJob() {
		v, err := phpser.Decode([]byte(env.Command))
		if err != nil {
			t.Fatalf("data.command: %v", err)
		}
		if v.Kind() != phpser.KindObject || v.Class() != env.CommandName {
			t.Errorf("data.command is a %v of class %q, commandName %q", v.Kind(), v.Class(), env.CommandName)
		}
		// SerializesModels' identifiers map onto phpser.ModelIdentifier, whatever the
		// version's property set.
		models := 0
		for _, e := range v.Entries() {
			if x := e.Value.Deref(); x.Kind() == phpser.KindObject && x.Class() == phpser.ModelIdentifierClass {
				var id phpser.ModelIdentifier
				if err := x.Decode(&id); err != nil || id.Class == "" || id.ID == nil {
					t.Errorf("ModelIdentifier %s: %+v %v", e.Key, id, err)
				}
				models++
			}
		}
		if models != want.models {
			t.Errorf("%d ModelIdentifier properties, want %d", models, want.models)
		}
	}
	return env
}

// checkDecodeGolden compares `laraq decode FILE` with decoded/ID.json (or, for a payload
// it refuses, its error with decoded/ID.err). -update rewrites them.
func checkDecodeGolden(t *testing.T, id string) {
	file := filepath.Join(payloadDir(), id+".json")
	if _, err := os.Stat(file); err != nil {
		file = filepath.Join(payloadDir(), id+".txt")
	}
	var out, errOut bytes.Buffer
	rc := cli.Main(context.Background(), []string{"decode", file}, cli.WithIO(nil, &out, &errOut))
	golden, got := filepath.Join(payloadDir(), "decoded", id+".json"), out.Bytes()
	if rc != 0 {
		golden, got = filepath.Join(payloadDir(), "decoded", id+".err"), errOut.Bytes()
	}
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("laraq decode exit %d: %v (run with -update to write it)", rc, err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("laraq decode differs from %s:\n%s", golden, got)
	}
}

// recorder is a failed-job store that keeps records in memory.
type recorder struct {
	mu   sync.Mutex
	recs []string
}

func (r *recorder) Log(_ context.Context, connection, queue string, payload []byte, exception string) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.recs = append(r.recs, exception)
	return strconv.Itoa(len(r.recs)), nil
}

// asRedisPayload returns what RedisQueue would have stored for a database-queue payload:
// the same JSON with its id and attempts appended.
func asRedisPayload(raw []byte, want expect) []byte {
	if !want.database {
		return raw
	}
	body := bytes.TrimSuffix(bytes.TrimSpace(raw), []byte("}"))
	return append(body, []byte(`,"id":"`+payload.NewID()+`","attempts":0}`)...)
}

// runOnRedis pushes the payload and runs a Go worker until the queue is empty: the
// handler runs (or the job fails by Laravel's rules, or is set aside), and no key is
// left behind.
func runOnRedis(t *testing.T, srv *testenv.Redis, raw []byte, env *payload.Envelope, want expect) {
	ctx := context.Background()
	client := srv.Client(t, 0)
	prefix := testenv.Prefix(t)
	queue := "default"
	if want.invalid {
		// Refused by producers; a broken producer may still write it.
		client.RPush(ctx, prefix+"queues:"+queue, raw)
		client.RPush(ctx, prefix+"queues:"+queue+":notify", "1")
	} else {
		p, err := newDispatcher(client, dispatchSetup{Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.PushRaw(ctx, queue, asRedisPayload(raw, want)); err != nil {
			t.Fatalf("PushRaw: %v", err)
		}
	}
	var runs atomic.Int32
	reg := laraq.NewJobs()
	if env != nil && laraq.ClassOf(env) != "" {
		reg.HandleFunc(laraq.ClassOf(env), func(ctx context.Context, job *laraq.JobInfo) error {
			runs.Add(1)
			if job.IsObjectJob() {
				_, err := job.Value()
				return err
			}
			var data any
			return job.Bind(&data)
		})
	}
	store := &recorder{}
	w, err := newWorker(client, setup{Prefix: prefix, Registry: reg, Tries: new(3), StopWhenEmpty: true,
		Sleep: -1, Cache: laraq.CacheStore{Disabled: true}, Failed: store, Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != laraq.ErrQueueEmpty {
		t.Fatalf("Run: %v", err)
	}
	if got := int(runs.Load()); got != want.runs {
		t.Errorf("handler ran %d times, want %d (failed: %v)", got, want.runs, store.recs)
	}
	switch {
	case want.failed != "":
		if len(store.recs) != 1 || !strings.Contains(store.recs[0], want.failed) {
			t.Errorf("failed records %q, want one about %q", store.recs, want.failed)
		}
	case len(store.recs) != 0:
		t.Errorf("unexpected failed records %q", store.recs)
	}
	keys, err := testenv.Keys(ctx, client, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if want.invalid {
		aside := client.LRange(ctx, prefix+"queues:"+queue+":invalid", 0, -1).Val()
		if len(aside) != 1 || aside[0] != string(raw) {
			t.Errorf("invalid list %q", aside)
		}
		client.Del(ctx, prefix+"queues:"+queue+":invalid")
		keys = slices.DeleteFunc(keys, func(k string) bool { return strings.HasSuffix(k, ":invalid") })
	}
	if len(keys) != 0 {
		t.Errorf("keys left behind: %v", keys)
	}
}

// compatRecord is what testdata/php's jobs record when PHP runs them.
type compatRecord struct {
	Class    string `json:"class"`
	Attempts int64  `json:"attempts"`
	Raw      string `json:"raw"`
	Kind     string `json:"kind"`
}

// runReleasedOnPHP: a Go worker takes the job and releases it, so that what sits in
// :delayed are bytes Go handed back; Laravel 8's worker then runs them, counting the
// attempt, and leaves Redis empty.
func runReleasedOnPHP(t *testing.T, srv *testenv.Redis, raw []byte, env *payload.Envelope) {
	testenv.NeedPHP(t)
	ctx := context.Background()
	client := srv.Client(t, 0)
	prefix := testenv.Prefix(t)
	p, _ := newDispatcher(client, dispatchSetup{Prefix: prefix})
	if _, err := p.PushRaw(ctx, "default", raw); err != nil {
		t.Fatal(err)
	}
	reg := laraq.NewJobs()
	reg.HandleFunc(laraq.ClassOf(env), func(context.Context, *laraq.JobInfo) error { return laraq.ReleaseAfter(0) })
	w, err := newWorker(client, setup{Prefix: prefix, Registry: reg, MaxJobs: 1, Sleep: -1, Tries: new(5),
		Cache: laraq.CacheStore{Disabled: true}, Logger: quietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); err != laraq.ErrMaxJobs {
		t.Fatalf("Run: %v", err)
	}
	released := client.ZRange(ctx, prefix+"queues:default:delayed", 0, -1).Val()
	if len(released) != 1 {
		t.Fatalf("delayed set %q after the Go release", released)
	}
	record := filepath.Join(t.TempDir(), "record.jsonl")
	php := testenv.PHPEnv{Redis: srv, Prefix: prefix, Record: record}
	php.Run(t, nil, "work.php", "--stop-when-empty", "--tries=5", "--sleep=0")
	b, _ := os.ReadFile(record)
	var first compatRecord
	if err := json.Unmarshal(bytes.SplitN(b, []byte("\n"), 2)[0], &first); err != nil {
		t.Fatalf("PHP did not run the job: %v\nrecords: %s", err, b)
	}
	wantClass := env.CommandName
	if !env.IsObjectJob() {
		wantClass, _, _ = strings.Cut(env.Job, "@")
	}
	if first.Raw != released[0] || first.Attempts != env.Attempts+2 || (first.Kind == "object" && first.Class != wantClass) {
		t.Errorf("PHP ran %s attempt %d from %.80s; want %s attempt %d from the released bytes %.80s",
			first.Class, first.Attempts, first.Raw, wantClass, env.Attempts+2, released[0])
	}
	if keys, _ := testenv.Keys(ctx, client, prefix); len(keys) != 0 {
		t.Errorf("keys left after PHP ran it: %v", keys)
	}
}

// capturedRequests are the dispatch.php requests whose payloads the Laravel 8 peer
// writes for testdata/laravel-payloads (id → request); reserved lists those whose
// reserved copy, made by Laravel's pop script, is kept too.
var capturedRequests = map[string]string{
	"L8-plain":      `{"class":"App\\Jobs\\PlainJob","props":{"name":"Grüße, 世界 😀 \u2028 \"q\" / \\ end","count":42,"ratio":0.1,"flag":true,"nothing":null,"tags":["a","b"],"meta":{"k":"v","n":1,"10":"ten","list":[1.5,"x"],"empty":[]}}}`,
	"L8-visibility": `{"class":"App\\Jobs\\VisibilityJob","props":{"pub":"p","\u0000*\u0000prot":7,"\u0000App\\Jobs\\VisibilityJob\u0000priv":[1,{"a":null}]}}`,
	"L8-nested":     `{"class":"App\\Jobs\\NestedJob","props":{"list":[1,[2,[3,[]]]],"map":{"10":"ten","x":{"y":"z"},"-1":false},"object":{"@class":"App\\Support\\Address","street":"Hauptstraße 1","\u0000*\u0000zip":"10115","\u0000App\\Support\\Address\u0000geo":[52.52,13.405]},"deep":{"a":{"b":{"c":{"d":[true]}}}},"text":"line1\nline2\ttab"}}`,
	"L8-numbers":    `{"class":"App\\Jobs\\NumbersJob","props":{"negZero":-0.0,"big":1e100,"tenth":0.1,"maxInt":9223372036854775807,"minInt":-9223372036854775808,"floats":[1.0,2.5,-3.25e-10,1.7976931348623157e308,5e-324]}}`,
	"L8-model":      `{"class":"App\\Jobs\\ModelJob","props":{"user":{"@class":"App\\Models\\User","exists":true,"\u0000*\u0000attributes":{"id":3,"name":"user3","email":"user3@example.com"},"\u0000*\u0000original":{"id":3,"name":"user3","email":"user3@example.com"}},"note":"welcome"}}`,
	"L8-carbon":     `{"class":"App\\Jobs\\CarbonJob","props":{"when":{"@class":"Illuminate\\Support\\Carbon","date":"2024-05-06 07:08:09.123456","timezone_type":3,"timezone":"Europe/Berlin"},"date":{"@class":"DateTimeImmutable","date":"1999-12-31 23:59:59.000000","timezone_type":3,"timezone":"UTC"}}}`,
	"L8-enum":       `{"class":"App\\Jobs\\EnumJob","props":{"status":{"@enum":"App\\Enums\\Status:Active"},"suit":{"@enum":"App\\Enums\\Suit:Spades"},"typed":{"@enum":"App\\Enums\\Status:Suspended"}}}`,
	"L8-named":      `{"class":"App\\Jobs\\NamedJob","props":{"name":"nightly export"}}`,
	"L8-meta":       `{"class":"App\\Jobs\\MetaJob","props":{"tries":4,"maxExceptions":2,"backoff":[1,5,10],"timeout":30,"failOnTimeout":true,"retryUntil":{"@class":"Illuminate\\Support\\Carbon","date":"2100-01-01 00:00:00.000000","timezone_type":3,"timezone":"UTC"},"label":"meta"}}`,
	"L8-reverse":    `{"class":"App\\Jobs\\ReverseTraitsJob","props":{"userId":5}}`,
	"L8-chain":      `{"class":"App\\Jobs\\ChainStep","props":{"step":1},"chain":[{"class":"App\\Jobs\\ChainStep","props":{"step":2}},{"class":"App\\Jobs\\ChainStep","props":{"step":3}}]}`,
	"L8-delayed":    `{"class":"App\\Jobs\\PlainJob","props":{"name":"later","count":0,"ratio":-2.5,"flag":true,"nothing":null,"tags":["d"],"meta":{"0":"zero"}},"delay":10}`,
	"L8-onqueue":    `{"class":"App\\Jobs\\PlainJob","props":{"name":"on its own queue","count":-1,"ratio":1e-7,"flag":false,"nothing":null,"tags":[],"meta":{}},"queue":"emails"}`,
	"L8-string":     `{"string_job":"App\\Jobs\\StringJobs@deletes","data":{"a":[1,2],"u":"ü","empty":[]}}`,
}

var capturedReserved = []string{"L8-plain", "L8-numbers", "L8-model", "L8-string"}

// capturePayloads rewrites the L8-* files from the Laravel 8 peer (dispatch.php, then
// Laravel's pop script for the reserved copies) and the newer-version files from
// build_newer.php (with a reserved copy of L12.51-batch).
func capturePayloads(t *testing.T) {
	testenv.NeedPHP(t)
	srv := testenv.RedisServer(t)
	write := func(id string, b []byte) {
		if err := os.WriteFile(filepath.Join(payloadDir(), id+".json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reserve := func(php testenv.PHPEnv, queue string) []byte {
		var popped struct{ Reserved string }
		if err := json.Unmarshal(php.Run(t, nil, "queue_op.php", "--queue="+queue, "pop-script"), &popped); err != nil {
			t.Fatal(err)
		}
		b, err := base64.StdEncoding.DecodeString(popped.Reserved)
		if err != nil || len(b) == 0 {
			t.Fatalf("pop-script: %q %v", popped.Reserved, err)
		}
		return b
	}
	now := strconv.FormatInt(time.Now().Unix(), 10)
	for id, req := range capturedRequests {
		php := testenv.PHPEnv{Redis: srv, Prefix: testenv.Prefix(t)}
		var line struct {
			Payload, Queue, Error string
		}
		if err := json.Unmarshal(php.Run(t, []byte(req+"\n"), "dispatch.php", "--now="+now), &line); err != nil || line.Error != "" {
			t.Fatalf("%s: dispatch.php: %v %s", id, err, line.Error)
		}
		write(id, []byte(line.Payload))
		if slices.Contains(capturedReserved, id) {
			write(id+"-r", reserve(php, line.Queue))
		}
	}
	out, err := exec.Command("php", filepath.Join(payloadDir(), "build_newer.php"), payloadDir()).CombinedOutput()
	if err != nil {
		t.Fatalf("build_newer.php: %v\n%s", err, out)
	}
	php := testenv.PHPEnv{Redis: srv, Prefix: testenv.Prefix(t)}
	batch, err := os.ReadFile(filepath.Join(payloadDir(), "L12.51-batch.json"))
	if err != nil {
		t.Fatal(err)
	}
	php.Run(t, batch, "queue_op.php", "push")
	write("L12.51-batch-r", reserve(php, "default"))
	fmt.Println("captured; run the tests again (the payloads are embedded at build time)")
}
