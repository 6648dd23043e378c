package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
)

// byteCase is one job dispatched by Go and, for the same object, by Laravel.
type byteCase struct {
	name string
	job  any
	opts []laraq.DispatchOption
	// php, when set, is an independent request for dispatch.php (own props only, routing
	// through onQueue()/delay()/chain()); otherwise the request carries every property of
	// the Go command.
	php map[string]any
}

func byteCases() []byteCase {
	var cs []byteCase
	for _, s := range shapes() {
		cs = append(cs, byteCase{name: s.name, job: s.job})
	}
	plainProps := map[string]any{"name": "x", "count": 1, "ratio": 0.5, "flag": false, "tags": []string{}, "meta": map[string]any{}}
	plain := testkit.PlainJob{Name: "x", Count: 1, Ratio: 0.5}
	cs = append(cs,
		byteCase{name: "onQueue", job: plain, opts: []laraq.DispatchOption{laraq.OnQueue("emails")},
			php: map[string]any{"class": `App\Jobs\PlainJob`, "props": plainProps, "queue": "emails"}},
		byteCase{name: "delay", job: plain, opts: []laraq.DispatchOption{laraq.Delay(2 * time.Second)},
			php: map[string]any{"class": `App\Jobs\PlainJob`, "props": plainProps, "delay": 2}},
		byteCase{name: "onQueue+delay", job: plain, opts: []laraq.DispatchOption{laraq.OnQueue("emails"), laraq.Delay(90 * time.Second)},
			php: map[string]any{"class": `App\Jobs\PlainJob`, "props": plainProps, "queue": "emails", "delay": 90}},
		byteCase{name: "delay-at", job: plain, opts: []laraq.DispatchOption{laraq.At(time.Unix(1700000500, 0).UTC())}},
		byteCase{name: "chain", job: testkit.ChainStep{Step: 1}, opts: []laraq.DispatchOption{laraq.Chain(testkit.ChainStep{Step: 2}, testkit.ChainStep{Step: 3})},
			php: map[string]any{"class": `App\Jobs\ChainStep`, "props": map[string]any{"step": 1},
				"chain": []any{map[string]any{"class": `App\Jobs\ChainStep`, "props": map[string]any{"step": 2}},
					map[string]any{"class": `App\Jobs\ChainStep`, "props": map[string]any{"step": 3}}}}},
		byteCase{name: "reverse-traits", job: reverseTraitsJob{UserID: 7},
			php: map[string]any{"class": `App\Jobs\ReverseTraitsJob`, "props": map[string]any{"userId": 7}}},
		byteCase{name: "named", job: testkit.NamedJob{Name: "nightly"},
			php: map[string]any{"class": `App\Jobs\NamedJob`, "props": map[string]any{"name": "nightly"}}},
		byteCase{name: "meta-ints", job: testkit.MetaJob{Tries: int64(3), MaxExceptions: int64(2), Backoff: int64(10), Timeout: int64(30), FailOnTimeout: true, RetryUntil: int64(1700003600)}},
		byteCase{name: "meta-lists", job: testkit.MetaJob{Backoff: []any{int64(1), 5.5, "10", time.Unix(1700000100, 0).UTC()}, RetryUntil: time.Unix(1700007200, 0).UTC()}},
		byteCase{name: "meta-odd", job: testkit.MetaJob{Tries: "3", Timeout: 1.5, FailOnTimeout: int64(1), MaxExceptions: []any{int64(1)}, Backoff: []any{}, RetryUntil: "soon"}},
		byteCase{name: "meta-float-backoff", job: testkit.MetaJob{Backoff: []any{1e25, 0.1 + 0.2, math.Copysign(0, -1), 100000000000000.0, true, nil}}},
		byteCase{name: "scripted", job: scripted{Actions: []string{"throw", "ok"}, Tag: "t1", Tries: int64(2), Backoff: []any{int64(1)}}},
	)
	return cs
}

// TestPayloadBytesMatchLaravel dispatches each shape from Go and, for the same object,
// through Laravel's own Bus dispatcher and RedisQueue, and compares the payloads byte
// for byte (uuid and id aside), the queue and the :delayed score.
func TestPayloadBytesMatchLaravel(t *testing.T) {
	testenv.NeedPHP(t)
	r := testenv.RedisServer(t)
	client := r.Client(t, 0)
	prefix := testenv.Prefix(t)
	const now = 1700000000
	cfg := testkit.DispatchSetup{Prefix: prefix, Now: func() time.Time { return time.Unix(now, 0) }}
	testkit.FixedIDs(&cfg)
	p, err := testkit.NewDispatcher(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	cases := byteCases()
	var msgs []*laraq.Message
	var reqs []any
	for _, c := range cases {
		m, err := p.Prepare(c.job, c.opts...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		msgs = append(msgs, m)
		class, props := propsOf(t, m)
		reqs = append(reqs, map[string]any{"class": class, "props": props})
	}
	env := testenv.PHPEnv{Redis: r, Prefix: prefix}
	got := dispatchThroughPHP(t, env, now, reqs...)
	var indep []any
	var indepIdx []int
	for i, c := range cases {
		if c.php != nil {
			indep = append(indep, c.php)
			indepIdx = append(indepIdx, i)
		}
	}
	got2 := dispatchThroughPHP(t, env, now, indep...)
	check := func(what string, m *laraq.Message, d phpDispatched) {
		t.Helper()
		testkit.SameExceptIDs(t, what, m.Payload, []byte(d.Payload))
		if d.Queue != m.Queue || d.Delayed != m.Delayed {
			t.Errorf("%s: Laravel queued on %q (delayed %v), Go on %q (delayed %v)", what, d.Queue, d.Delayed, m.Queue, m.Delayed)
		}
		if m.Delayed && (d.Score == nil || *d.Score != m.AvailableAt) {
			t.Errorf("%s: Laravel's :delayed score %v, Go's %d", what, d.Score, m.AvailableAt)
		}
	}
	for i, c := range cases {
		check(c.name, msgs[i], got[i])
	}
	for k, i := range indepIdx {
		check(cases[i].name+" (PHP-built object)", msgs[i], got2[k])
	}
	if t.Failed() {
		return
	}
	// The PHP side decoded those payloads too: spot-check a few derived fields, so a
	// shared mistake cannot pass unnoticed.
	for i, c := range cases {
		if c.name == "meta-odd" {
			continue // PHP writes it, but payload.Parse refuses an array maxExceptions
		}
		env, err := payload.Parse(msgs[i].Payload)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		switch c.name {
		case "meta-ints":
			if *env.MaxTries != 3 || *env.Backoff != "10" || *env.RetryUntil != 1700003600 || !env.FailOnTimeout {
				t.Errorf("meta-ints: %s", msgs[i].Payload)
			}
		case "meta-lists":
			if *env.Backoff != "1,5.5,10,100" || *env.RetryUntil != 1700007200 {
				t.Errorf("meta-lists: %s", msgs[i].Payload)
			}
		case "named":
			if env.DisplayName != "Named: nightly" {
				t.Errorf("named: displayName %q", env.DisplayName)
			}
		}
	}
}

// TestPHPWorkerRunsGoJobs dispatches every shape from Go, through phpredis and predis,
// with and without a connection prefix, and lets Laravel's own Worker run them: each
// job reports what PHP unserialized, which must be what Go meant, and nothing may be
// left in Redis afterwards.
func TestPHPWorkerRunsGoJobs(t *testing.T) {
	testenv.NeedPHP(t)
	r := testenv.RedisServer(t)
	for i, tc := range []struct {
		client string
		prefix bool
	}{{"phpredis", true}, {"predis", true}, {"phpredis", false}, {"predis", false}} {
		name := fmt.Sprintf("%s/prefix=%v", tc.client, tc.prefix)
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			db := 0
			prefix := testenv.Prefix(t)
			if !tc.prefix {
				// No prefix: a database of its own, so the key check sees only this test.
				db, prefix = 10+i, ""
			}
			runGoJobsInPHP(t, r, tc.client, db, prefix)
		})
	}
}

func runGoJobsInPHP(t *testing.T, r *testenv.Redis, phpClient string, db int, prefix string) {
	ctx := context.Background()
	client := r.Client(t, db)
	var mu sync.Mutex
	var lastNow time.Time
	p, err := testkit.NewDispatcher(client, testkit.DispatchSetup{Prefix: prefix, Now: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		lastNow = time.Now()
		return lastNow
	}})
	if err != nil {
		t.Fatal(err)
	}
	type sent struct {
		id    string
		class string
		queue string
		want  []canonProp
		at    int64 // delayed: available-at
	}
	var jobs []sent
	for _, s := range shapes() {
		id, err := p.Dispatch(ctx, s.job)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		jobs = append(jobs, sent{id: id, class: s.job.(interface{ PHPClass() string }).PHPClass(), queue: "default",
			want: append(s.want, queueableCanon(nil, nil)...)})
	}
	sh := shapes()
	id, err := p.Dispatch(ctx, sh[0].job, laraq.OnQueue("high"))
	if err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, sent{id: id, class: `App\Jobs\PlainJob`, queue: "high", want: append(append([]canonProp{}, sh[0].want...), queueableCanon(cStr("high"), nil)...)})

	// Delayed: it must wait in :delayed with score now + 1 and run after that.
	id, err = p.Dispatch(ctx, sh[3].job, laraq.Delay(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	availableAt := lastNow.Unix() + 1
	mu.Unlock()
	delayedKey := prefix + "queues:default:delayed"
	members, err := client.ZRangeWithScores(ctx, delayedKey, 0, -1).Result()
	if err != nil || len(members) != 1 || int64(members[0].Score) != availableAt || !strings.Contains(members[0].Member.(string), id) {
		t.Fatalf("%s after a 1s delay: %v %v, want one member with score %d", delayedKey, members, err, availableAt)
	}
	jobs = append(jobs, sent{id: id, class: `App\Jobs\NumbersJob`, queue: "default", at: availableAt,
		want: append(append([]canonProp{}, sh[3].want...), queueableCanon(nil, cInt(1))...)})

	// A chain: PHP runs step 1, then dispatches step 2 itself.
	id, err = p.Dispatch(ctx, testkit.ChainStep{Step: 1}, laraq.Chain(testkit.ChainStep{Step: 2}))
	if err != nil {
		t.Fatal(err)
	}
	jobs = append(jobs, sent{id: id, class: `App\Jobs\ChainStep`, queue: "default"})

	// Bulk, one per queue.
	ids, err := p.DispatchBulk(ctx, []any{testkit.ChainStep{Step: 10}, testkit.ChainStep{Step: 11}}, laraq.OnQueue("high"))
	if err != nil {
		t.Fatal(err)
	}
	for k, id := range ids {
		jobs = append(jobs, sent{id: id, class: `App\Jobs\ChainStep`, queue: "high",
			want: append([]canonProp{{"step", cInt(int64(10 + k))}}, queueableCanon(cStr("high"), nil)...)})
	}

	// String jobs (Class@method): the handler deletes them itself.
	strIDs := map[string]string{}
	for _, q := range []string{"default", "high"} {
		id, err := p.DispatchString(ctx, `App\Jobs\StringJobs@deletes`, map[string]any{"queue": q, "n": []int{1, 2}, "u": "ü"}, laraq.OnQueue(q))
		if err != nil {
			t.Fatal(err)
		}
		strIDs[id] = q
	}

	recFile := dispatchRecordFile(t)
	env := testenv.PHPEnv{Redis: r, DB: db, CacheDB: db + 1, Prefix: prefix, Client: phpClient, Record: recFile}
	total := len(jobs) + 1 /* chain step 2 */ + len(strIDs)
	out := runPHPWorkerOn(t, env, 60*time.Second, "--queue=default,high", fmt.Sprintf("--max-jobs=%d", total), "--sleep=0.1", "--tries=1")
	if n := strings.Count(out, "Processed:"); n != total || strings.Contains(out, "Failed:") {
		t.Fatalf("worker processed %d jobs, want %d:\n%s", n, total, out)
	}

	recs := readDispatchRecords(t, recFile)
	byID := map[string]record{}
	var step2 *record
	for i, rc := range recs {
		if rc.Kind == "object" && rc.Class == `App\Jobs\ChainStep` && len(rc.Props) > 0 && string(rc.Props[0].V) == `{"t":"int","v":"2"}` {
			step2 = &recs[i]
			continue
		}
		if rc.ID != nil {
			byID[*rc.ID] = rc
		}
	}
	for _, j := range jobs {
		rc, ok := byID[j.id]
		if !ok {
			t.Errorf("job %s (%s) did not run", j.id, j.class)
			continue
		}
		if rc.Class != j.class || rc.Queue != j.queue || rc.Attempts != 1 || rc.Conn != "redis" {
			t.Errorf("job %s: PHP ran %s on queue %s (attempt %d, connection %s), want %s on %s", j.id, rc.Class, rc.Queue, rc.Attempts, rc.Conn, j.class, j.queue)
		}
		if j.want != nil {
			checkProps(t, rc, j.want)
		}
		if j.at != 0 && rc.At < float64(j.at) {
			t.Errorf("delayed job ran at %.3f, before its available-at %d", rc.At, j.at)
		}
	}
	if step2 == nil {
		t.Error("PHP did not run the chained step 2")
	} else if step2.Queue != "default" {
		t.Errorf("chained step ran on %s", step2.Queue)
	}
	for id, q := range strIDs {
		rc, ok := byID[id]
		if !ok || rc.Kind != "string" || rc.Method != "deletes" || rc.Queue != q || rc.Attempts != 1 {
			t.Errorf("string job %s: %+v", id, rc)
			continue
		}
		want := map[string]any{"t": "array", "items": []any{
			map[string]any{"k": cStr("n"), "v": cList(cInt(1), cInt(2))},
			map[string]any{"k": cStr("queue"), "v": cStr(q)},
			map[string]any{"k": cStr("u"), "v": cStr("ü")},
		}}
		wb, _ := json.Marshal(want)
		var g, w any
		_ = json.Unmarshal(rc.Data, &g)
		_ = json.Unmarshal(wb, &w)
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Errorf("string job data: got %s, want %s", rc.Data, wb)
		}
	}
	assertNoKeys(t, client, prefix)
}

func assertNoKeys(t *testing.T, c redis.UniversalClient, prefix string) {
	t.Helper()
	keys, err := testenv.Keys(context.Background(), c, prefix)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 0 {
		t.Errorf("keys left under %q: %v", prefix, keys)
	}
}

// TestStringJobLeftReservedUnlessDeleted checks the PHP rule behind DispatchString's
// warning: Laravel's worker deletes a Class@method job only when the handler does.
func TestStringJobLeftReservedUnlessDeleted(t *testing.T) {
	testenv.NeedPHP(t)
	ctx := context.Background()
	r := testenv.RedisServer(t)
	client := r.Client(t, 0)
	prefix := testenv.Prefix(t)
	p, err := testkit.NewDispatcher(client, testkit.DispatchSetup{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	recFile := dispatchRecordFile(t)
	env := testenv.PHPEnv{Redis: r, Prefix: prefix, Record: recFile}

	keepID, err := p.DispatchString(ctx, `App\Jobs\StringJobs@keeps`, []string{"x"})
	if err != nil {
		t.Fatal(err)
	}
	runPHPWorkerOn(t, env, 30*time.Second, "--once")
	reserved, err := client.ZRange(ctx, prefix+"queues:default:reserved", 0, -1).Result()
	if err != nil || len(reserved) != 1 || !strings.Contains(reserved[0], keepID) {
		t.Fatalf("after a handler that does not delete: reserved = %v, %v; want the job", reserved, err)
	}
	if n, _ := client.LLen(ctx, prefix+"queues:default").Result(); n != 0 {
		t.Fatalf("ready list has %d jobs", n)
	}
	if _, err := client.Del(ctx, prefix+"queues:default:reserved").Result(); err != nil {
		t.Fatal(err)
	}

	if _, err := p.DispatchString(ctx, `App\Jobs\StringJobs`, nil); err != nil { // default method fire() deletes
		t.Fatal(err)
	}
	runPHPWorkerOn(t, env, 30*time.Second, "--once")
	recs := readDispatchRecords(t, recFile)
	if len(recs) != 2 || recs[0].Method != "keeps" || recs[1].Method != "fire" || string(recs[1].Data) != `{"t":"string","v":""}` {
		t.Fatalf("records: %+v", recs)
	}
	assertNoKeys(t, client, prefix)
}

// TestPushRaw pushes a hand-written payload that a PHP worker runs, and refuses one
// without attempts, which Laravel's pop script would drop.
func TestPushRaw(t *testing.T) {
	testenv.NeedPHP(t)
	ctx := context.Background()
	r := testenv.RedisServer(t)
	client := r.Client(t, 0)
	prefix := testenv.Prefix(t)
	p, err := testkit.NewDispatcher(client, testkit.DispatchSetup{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{
		`{"job":"App\\Jobs\\StringJobs@deletes","data":1}`,
		`{"job":"App\\Jobs\\StringJobs@deletes","data":1,"attempts":null}`,
		`["attempts",0]`,
		`not json`,
	} {
		if _, err := p.PushRaw(ctx, "default", []byte(bad)); err == nil {
			t.Errorf("PushRaw accepted %s", bad)
		}
	}
	assertNoKeys(t, client, prefix)

	raw := `{"uuid":"11111111-2222-4333-8444-555555555555","job":"App\\Jobs\\StringJobs@deletes","data":{"k":"v"},"id":"rawid","attempts":0}`
	id, err := p.PushRaw(ctx, "", []byte(raw))
	if err != nil || id != "rawid" {
		t.Fatalf("PushRaw = %q, %v", id, err)
	}
	got, err := client.LIndex(ctx, prefix+"queues:default", 0).Result()
	if err != nil || got != raw {
		t.Fatalf("stored %q, %v; want the bytes given", got, err)
	}
	recFile := dispatchRecordFile(t)
	runPHPWorkerOn(t, testenv.PHPEnv{Redis: r, Prefix: prefix, Record: recFile}, 30*time.Second, "--once")
	recs := readDispatchRecords(t, recFile)
	if len(recs) != 1 || recs[0].ID == nil || *recs[0].ID != "rawid" || !bytes.Equal([]byte(recs[0].Raw), []byte(raw)) {
		t.Fatalf("records: %+v", recs)
	}
	assertNoKeys(t, client, prefix)
}
