package laraq_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

const testNow = 1700000000

func newTestProducer(t testing.TB, cfg testkit.DispatchSetup) (*laraq.Dispatcher, *redis.Client) {
	t.Helper()
	mr := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	t.Cleanup(func() { client.Close() })
	if cfg.Now == nil {
		cfg.Now = func() time.Time { return time.Unix(testNow, 250_000_000) }
	}
	testkit.FixedIDs(&cfg)
	p, err := testkit.NewDispatcher(client, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p, client
}

func commandOf(t *testing.T, m *laraq.Message) string {
	t.Helper()
	env, err := payload.Parse(m.Payload)
	if err != nil {
		t.Fatalf("%v\n%s", err, m.Payload)
	}
	return strings.ReplaceAll(env.Command, "\x00", `\0`)
}

func TestNewRefusesBadConfig(t *testing.T) {
	if _, err := testkit.NewDispatcher(nil, testkit.DispatchSetup{}); err == nil {
		t.Error("nil client accepted")
	}
	if _, err := laraq.NewDispatcher(nil); err == nil {
		t.Error("nil connection accepted")
	}
}

// bare has no Queueable: no queue or delay property to set.
type bare struct {
	X int `php:"x"`
}

func (bare) PHPClass() string { return `App\Jobs\Bare` }

type connJob struct {
	laraq.Queueable
}

func (connJob) PHPClass() string { return `App\Jobs\Conn` }

func TestPrepareRouting(t *testing.T) {
	p, _ := newTestProducer(t, testkit.DispatchSetup{DefaultQueue: "main"})
	plain := testkit.PlainJob{Name: "n"}
	for _, tc := range []struct {
		name    string
		job     any
		opts    []laraq.DispatchOption
		queue   string
		delayed bool
		at      int64
		command string // substring of the command
	}{
		{"defaults", plain, nil, "main", false, 0, `s:5:"queue";N;`},
		{"onQueue", plain, []laraq.DispatchOption{laraq.OnQueue("q")}, "q", false, 0, `s:5:"queue";s:1:"q";`},
		{"pushOn keeps the property", plain, []laraq.DispatchOption{laraq.PushOn("q")}, "q", false, 0, `s:5:"queue";N;`},
		{"pushOn wins over queue", plain, []laraq.DispatchOption{laraq.OnQueue("a"), laraq.PushOn("b")}, "b", false, 0, `s:5:"queue";s:1:"a";`},
		{"queue property", testkit.PlainJob{Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Queue: testkit.Str("fromprop")}}}, nil, "fromprop", false, 0, ``},
		{"empty queue property", testkit.PlainJob{Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Queue: testkit.Str("")}}}, nil, "main", false, 0, `s:5:"queue";s:0:"";`},
		{"no queue property", bare{X: 1}, []laraq.DispatchOption{laraq.OnQueue("q"), laraq.Delay(5 * time.Second)}, "q", true, testNow + 5, `O:13:"App\Jobs\Bare":1:{s:1:"x";i:1;}`},
		{"delay rounds up", plain, []laraq.DispatchOption{laraq.Delay(1500 * time.Millisecond)}, "main", true, testNow + 2, `s:5:"delay";i:2;`},
		{"delay 0 still goes through later", plain, []laraq.DispatchOption{laraq.Delay(0)}, "main", true, testNow, `s:5:"delay";i:0;`},
		{"at", plain, []laraq.DispatchOption{laraq.At(time.Unix(testNow+3600, 0).UTC())}, "main", true, testNow + 3600,
			`s:5:"delay";O:25:"Illuminate\Support\Carbon":3:{s:4:"date";s:26:"2023-11-14 23:13:20.000000";`},
		{"later keeps the property", plain, []laraq.DispatchOption{laraq.Later(10 * time.Second)}, "main", true, testNow + 10, `s:5:"delay";N;`},
		{"delay property int", testkit.PlainJob{Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Delay: 30}}}, nil, "main", true, testNow + 30, `s:5:"delay";i:30;`},
		{"delay property float truncates like Carbon", testkit.PlainJob{Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Delay: 2.9}}}, nil, "main", true, testNow + 2, ``},
		{"delay property date", testkit.PlainJob{Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Delay: time.Unix(testNow+60, 0)}}}, nil, "main", true, testNow + 60, ``},
		{"delay property numeric string", testkit.PlainJob{Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Delay: "7"}}}, nil, "main", true, testNow + 7, ``},
		{"connection", connJob{}, []laraq.DispatchOption{laraq.OnConnection("redis")}, "main", false, 0, `s:10:"connection";s:5:"redis";`},
		{"pointer to a job", &testkit.PlainJob{Name: "ptr"}, []laraq.DispatchOption{laraq.OnQueue("q")}, "q", false, 0, `s:4:"name";s:3:"ptr";`},
		{"job as a phpser value", phpser.NewObject(`V`, phpser.PublicProp("queue", phpser.String("vq"))), nil, "vq", false, 0, `O:1:"V":1:{`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := p.Prepare(tc.job, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if m.Queue != tc.queue || m.Delayed != tc.delayed || m.AvailableAt != tc.at {
				t.Errorf("queue %q delayed %v at %d, want %q %v %d", m.Queue, m.Delayed, m.AvailableAt, tc.queue, tc.delayed, tc.at)
			}
			if cmd := commandOf(t, m); !strings.Contains(cmd, tc.command) {
				t.Errorf("command %s\nlacks %s", cmd, tc.command)
			}
		})
	}
}

func TestPrepareRefuses(t *testing.T) {
	p, _ := newTestProducer(t, testkit.DispatchSetup{})
	for _, tc := range []struct {
		name string
		job  any
		opts []laraq.DispatchOption
		want string
	}{
		{"nil job", nil, nil, "nil job"},
		{"nil value", (*phpser.Value)(nil), nil, "nil job"},
		{"not an object", map[string]int{"a": 1}, nil, "not an object"},
		{"struct without class", struct{ A int }{1}, nil, "PHPClass"},
		{"other connection option", connJob{}, []laraq.DispatchOption{laraq.OnConnection("sqs")}, `queue connection "sqs"`},
		{"other connection property", connJob{Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Connection: testkit.Str("sqs")}}}, nil, `"sqs"`},
		{"other connection, no property", bare{}, []laraq.DispatchOption{laraq.OnConnection("sqs")}, `queue connection "sqs"`},
		{"chain without chained", bare{}, []laraq.DispatchOption{laraq.Chain(bare{})}, "no chained property"},
		{"empty chain", testkit.PlainJob{}, []laraq.DispatchOption{laraq.Chain()}, "empty chain"},
		{"bad chain element", testkit.PlainJob{}, []laraq.DispatchOption{laraq.Chain(42)}, "chain[0]"},
		{"negative delay", testkit.PlainJob{}, []laraq.DispatchOption{laraq.Delay(-time.Second)}, "negative"},
		{"negative later", testkit.PlainJob{}, []laraq.DispatchOption{laraq.Later(-time.Second)}, "negative"},
		{"delay not a number", testkit.PlainJob{Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Delay: "soon"}}}, nil, "not a number"},
		{"delay object", testkit.PlainJob{Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Delay: bare{}}}}, nil, "neither a number"},
		{"backoff object", testkit.MetaJob{Backoff: []any{bare{}}}, nil, "backoff[0]"},
		{"tries object", testkit.MetaJob{Tries: bare{}}, nil, "tries"},
		{"invalid UTF-8", testkit.PlainJob{Name: "\xff"}, nil, "UTF-8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := p.Prepare(tc.job, tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one about %q", err, tc.want)
			}
		})
	}
}

// metaVis has protected and null metadata properties, which PHP's createObjectPayload
// cannot see from outside the class.
type metaVis struct {
	Tries   int64  `php:"tries,protected"`
	Timeout *int64 `php:"timeout"`
	Backoff any    `php:"backoff,private"`
	laraq.Queueable
}

func (metaVis) PHPClass() string { return `App\Jobs\MetaVis` }

func TestEnvelopeMetadata(t *testing.T) {
	p, _ := newTestProducer(t, testkit.DispatchSetup{})
	for _, tc := range []struct {
		name string
		job  any
		want string // the envelope from maxTries to retryUntil
	}{
		{"absent", testkit.MetaJob{}, `"maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":null`},
		{"invisible", metaVis{Tries: 5, Backoff: 3}, `"maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":null`},
		{"ints", testkit.MetaJob{Tries: 0, MaxExceptions: int64(-1), Backoff: int64(10), Timeout: int64(0), FailOnTimeout: false, RetryUntil: int64(5)},
			`"maxTries":0,"maxExceptions":-1,"failOnTimeout":false,"backoff":"10","timeout":0,"retryUntil":5`},
		{"dates", testkit.MetaJob{Backoff: []any{time.Unix(testNow+30, 0), time.Unix(testNow-30, 0)}, RetryUntil: time.Unix(testNow+600, 0)},
			`"maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":"30,0","timeout":null,"retryUntil":1700000600`},
		{"php strings", testkit.MetaJob{Backoff: []any{1.5, 1e25, 1e-7, 100000000000000.0, 12345678901234.0, true, false, nil, "x"}},
			`"backoff":"1.5,1.0E+25,1.0E-7,1.0E+14,12345678901234,1,,,x"`},
		{"map backoff keeps values in order", testkit.MetaJob{Backoff: phpser.Map{{Key: phpser.StrKey("b"), Value: int64(2)}, {Key: phpser.StrKey("a"), Value: int64(1)}}},
			`"backoff":"2,1"`},
		{"raw values", testkit.MetaJob{Tries: "3", Timeout: 2.5, FailOnTimeout: "yes", RetryUntil: []any{int64(1), "ü/"}},
			`"maxTries":"3","maxExceptions":null,"failOnTimeout":"yes","backoff":null,"timeout":2.5,"retryUntil":[1,"ü\/"]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := p.Prepare(tc.job)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(m.Payload), tc.want) {
				t.Errorf("payload %s\nlacks %s", m.Payload, tc.want)
			}
		})
	}
}

func TestDisplayName(t *testing.T) {
	p, _ := newTestProducer(t, testkit.DispatchSetup{})
	m, err := p.Prepare(testkit.NamedJob{Name: "x/y"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.Payload), `"displayName":"Named: x\/y","job"`) {
		t.Errorf("%s", m.Payload)
	}
}

func TestLaterVersions(t *testing.T) {
	for _, tc := range []struct {
		v    string
		opts []laraq.DispatchOption
		want []string
	}{
		{"12.11", nil, []string{`"createdAt":1700000000,"id":`, `"attempts":0,"delay":null}`}},
		{"12.11", []laraq.DispatchOption{laraq.Delay(30 * time.Second)}, []string{`"attempts":0,"delay":30}`}},
		{"12.50", []laraq.DispatchOption{laraq.At(time.Unix(testNow+90, 0))}, []string{`"attempts":0,"delay":90}`}},
		{"12.51", nil, []string{`"command":"`, `","batchId":null},"createdAt"`}},
		{"13.0", nil, []string{`"retryUntil":null,"deleteWhenMissingModels":false,"data"`}},
	} {
		p, _ := newTestProducer(t, testkit.DispatchSetup{Release: testkit.MustRelease(t, tc.v)})
		m, err := p.Prepare(testkit.PlainJob{}, tc.opts...)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(m.Payload), w) {
				t.Errorf("%v: payload %s lacks %s", tc.v, m.Payload, w)
			}
		}
	}
	// Batchable's batchId and 13.x's deleteWhenMissingModels come from the command.
	p, _ := newTestProducer(t, testkit.DispatchSetup{Release: testkit.MustRelease(t, "13")})
	m, err := p.Prepare(phpser.NewObject(`B`, phpser.PublicProp("batchId", phpser.String("b-1")), phpser.PublicProp("deleteWhenMissingModels", phpser.Bool(true))))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(m.Payload), `"deleteWhenMissingModels":true`) || !strings.Contains(string(m.Payload), `"batchId":"b-1"}`) {
		t.Errorf("%s", m.Payload)
	}
}

func TestDispatchBulk(t *testing.T) {
	ctx := context.Background()
	p, client := newTestProducer(t, testkit.DispatchSetup{Prefix: "p_"})
	jobs := []any{
		testkit.ChainStep{Step: 1},
		testkit.ChainStep{Step: 2, Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Queue: testkit.Str("other")}}},
		testkit.ChainStep{Step: 3, Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Delay: 60}}},
		testkit.ChainStep{Step: 4},
	}
	ids, err := p.DispatchBulk(ctx, jobs)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids) != 4 || ids[0] == ids[1] {
		t.Fatalf("ids %v", ids)
	}
	check := func(key string, wantIDs ...string) {
		t.Helper()
		got, err := client.LRange(ctx, key, 0, -1).Result()
		if err != nil || len(got) != len(wantIDs) {
			t.Fatalf("%s: %v %v", key, got, err)
		}
		for i, id := range wantIDs {
			if !strings.Contains(got[i], `"id":"`+id+`"`) {
				t.Errorf("%s[%d] is not job %s", key, i, id)
			}
		}
	}
	check("p_queues:default", ids[0], ids[3])
	check("p_queues:other", ids[1])
	if n, _ := client.LLen(ctx, "p_queues:default:notify").Result(); n != 2 {
		t.Errorf("notify tokens %d", n)
	}
	z, err := client.ZRangeWithScores(ctx, "p_queues:default:delayed", 0, -1).Result()
	if err != nil || len(z) != 1 || int64(z[0].Score) != testNow+60 || !strings.Contains(z[0].Member.(string), ids[2]) {
		t.Errorf("delayed %v %v", z, err)
	}

	// One bad job: nothing is pushed.
	if _, err := p.DispatchBulk(ctx, []any{testkit.ChainStep{}, 42}); err == nil || !strings.Contains(err.Error(), "jobs[1]") {
		t.Errorf("error %v", err)
	}
	if n, _ := client.LLen(ctx, "p_queues:default").Result(); n != 2 {
		t.Errorf("a failed bulk pushed jobs: %d", n)
	}
}

func TestDispatchString(t *testing.T) {
	ctx := context.Background()
	p, client := newTestProducer(t, testkit.DispatchSetup{})
	id, err := p.DispatchString(ctx, `App\Jobs\H@run`, json.RawMessage(`{"a":{}}`), laraq.OnQueue("s"), laraq.Delay(3*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	z, err := client.ZRangeWithScores(ctx, "queues:s:delayed", 0, -1).Result()
	if err != nil || len(z) != 1 || int64(z[0].Score) != testNow+3 {
		t.Fatalf("%v %v", z, err)
	}
	want := `{"uuid":"00000000-0000-4000-8000-000000000001","displayName":"App\\Jobs\\H","job":"App\\Jobs\\H@run","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"data":{"a":[]},"id":"` + id + `","attempts":0}`
	if z[0].Member.(string) != want {
		t.Errorf("got  %s\nwant %s", z[0].Member, want)
	}
	for _, bad := range []struct {
		job  string
		data any
		opts []laraq.DispatchOption
		want string
	}{
		{"@run", nil, nil, "names no class"},
		{"A@b", func() {}, nil, "data"},
		{"A@b", nil, []laraq.DispatchOption{laraq.Chain(testkit.PlainJob{})}, "chain"},
		{"A@b", nil, []laraq.DispatchOption{laraq.OnConnection("x")}, "connection"},
	} {
		if _, err := p.DispatchString(ctx, bad.job, bad.data, bad.opts...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: error %v, want %q", bad.job, err, bad.want)
		}
	}
}

func TestCompleteQueueable(t *testing.T) {
	traits := testkit.MustRelease(t, "8.83").QueueableProps()
	names := func(es []phpser.Entry) string {
		var s []string
		for _, e := range es {
			s = append(s, strings.ReplaceAll(e.Key.String(), "\x00", `\0`))
		}
		return strings.Join(s, " ")
	}
	p := func(n ...string) []phpser.Entry {
		var es []phpser.Entry
		for _, x := range n {
			es = append(es, phpser.PublicProp(x, phpser.Int(1)))
		}
		return es
	}
	const all = "job connection queue chainConnection chainQueue chainCatchCallbacks delay afterCommit middleware chained"
	for _, tc := range []struct {
		name  string
		props []phpser.Entry
		want  string
	}{
		{"none given", p("a", "b"), "a b " + all},
		{"nothing at all", nil, all},
		{"queue only", p("a", "queue", "b"), "a job connection queue chainConnection chainQueue chainCatchCallbacks delay afterCommit middleware chained b"},
		{"delay at the end", p("a", "delay"), "a job connection queue chainConnection chainQueue chainCatchCallbacks delay afterCommit middleware chained"},
		{"all, reverse trait order", p("a", "connection", "queue", "chainConnection", "chainQueue", "chainCatchCallbacks", "delay", "afterCommit", "middleware", "chained", "job"),
			"a connection queue chainConnection chainQueue chainCatchCallbacks delay afterCommit middleware chained job"},
		{"job missing", p("a", "connection", "queue", "chainConnection", "chainQueue", "chainCatchCallbacks", "delay", "afterCommit", "middleware", "chained"),
			"a " + all},
		{"protected own property of the same name is matched by plain name", append(p("a"), phpser.ProtectedProp("queue", phpser.Null())),
			`a job connection \0*\0queue chainConnection chainQueue chainCatchCallbacks delay afterCommit middleware chained`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := names(laraq.CompleteQueueable(tc.props, traits)); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	// Given values are kept.
	out := laraq.CompleteQueueable([]phpser.Entry{phpser.PublicProp("queue", phpser.String("q"))}, traits)
	if v := out[2].Value; v.Str() != "q" {
		t.Errorf("queue value lost: %v", names(out))
	}
}

func TestParseRelease(t *testing.T) {
	for in, want := range map[string]string{"8": "8.x", "8.83": "8.83.0", "v12.28.1": "12.28.1", " 13 ": "13.x", "7.30": "7.30.0", "5.8": "5.8.0"} {
		l, err := laraq.ParseRelease(in)
		if err != nil || l.String() != want {
			t.Errorf("ParseRelease(%q) = %v, %v; want %s", in, l, err, want)
		}
	}
	for _, bad := range []string{"", "5.7", "4", "x", "8.a", "1.2.3.4", "-8"} {
		if _, err := laraq.ParseRelease(bad); err == nil {
			t.Errorf("ParseRelease(%q) accepted", bad)
		}
	}
	if l := (laraq.Release{}); l.String() != "unknown" || !l.IsZero() || !l.AtLeast(13, 0, 0) {
		t.Errorf("zero release %v: want unknown, behaving as the latest", l)
	}
	a, b := laraq.Release{Major: 12, Minor: 51}, laraq.Release{Major: 12, Minor: 9, Guessed: true}
	if a.Compare(b) != 1 || b.Compare(a) != -1 || a.Compare(a) != 0 || b.String() != "12.9.0 (guessed)" {
		t.Errorf("compare %d %d %d %q", a.Compare(b), b.Compare(a), a.Compare(a), b)
	}
	group := func(v string) string {
		l, _ := laraq.ParseRelease(v)
		return l.QueueableProps()[3].Key.Str()
	}
	if group("12.27") != "group" || group("12.28.0") != "group" || group("12.28.1") != "messageGroup" || group("12.26") != "delay" {
		t.Errorf("12.27 group property: %s %s %s %s", group("12.27"), group("12.28.0"), group("12.28.1"), group("12.26"))
	}
}

func TestPushRawChecks(t *testing.T) {
	ctx := context.Background()
	p, client := newTestProducer(t, testkit.DispatchSetup{})
	if _, err := p.PushRaw(ctx, "q", []byte(`{"job":"A@b","data":1}`)); err == nil || !strings.Contains(err.Error(), "attempts") {
		t.Errorf("error %v", err)
	}
	id, err := p.PushRaw(ctx, "q", []byte(`{"job":"A@b","id":17,"attempts":"0"}`))
	if err != nil || id != "17" {
		t.Errorf("PushRaw = %q, %v", id, err)
	}
	if n, _ := client.LLen(ctx, "queues:q").Result(); n != 1 {
		t.Errorf("%d jobs", n)
	}
}

// FuzzPrepareReadable feeds arbitrary readable-form documents (what `laraq dispatch`
// reads from users) to Prepare: it must never panic, and what it accepts must be a
// payload a worker can reserve.
func FuzzPrepareReadable(f *testing.F) {
	for _, s := range []string{
		`{"@class":"A","x":1}`,
		`{"@class":"A","queue":"q","delay":5,"tries":"3","backoff":[1,"2",1.5],"retryUntil":{"@class":"Illuminate\\Support\\Carbon","date":"2030-01-01 00:00:00.000000","timezone_type":3,"timezone":"UTC"}}`,
		`{"@class":"A","\u0000*\u0000p":{"@enum":"E:C"},"connection":"redis","chained":["x"]}`,
		`{"@class":"A","delay":{"@class":"DateTime","date":"x","timezone_type":3,"timezone":"UTC"}}`,
		`{"@class":"A","timeout":1e300,"failOnTimeout":[]}`,
	} {
		f.Add([]byte(s))
	}
	client := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // Prepare never talks to Redis
	defer client.Close()
	p, err := testkit.NewDispatcher(client, testkit.DispatchSetup{Now: func() time.Time { return time.Unix(testNow, 0) }})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		v, err := phpser.UnmarshalReadable(doc)
		if err != nil {
			return
		}
		m, err := p.Prepare(v, laraq.OnQueue("q"))
		if err != nil {
			return
		}
		if err := payload.CheckPushRaw(m.Payload); err != nil {
			t.Fatalf("Prepare wrote a payload a worker cannot reserve: %v\n%s", err, m.Payload)
		}
	})
}
