package matrix

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// goDispatch is one job Go dispatches, and the dispatch.php request that makes the
// same object in PHP and dispatches it the same way.
type goDispatch struct {
	name string
	min  int // the first major whose classes allow it
	// needs is a part of Laravel the case needs (testenv.Unique, ...): on an older
	// release the case is skipped by name, and the run says so.
	needs *testenv.Feature
	job   any
	opts  []laraq.DispatchOption
	php   string
	check func(t *testing.T, rel laraq.Release, env *payload.Envelope) // what the payload must say, beside matching PHP's
	// noRun: compared, not run (a batch member whose batch does not exist fails in PHP).
	noRun bool
}

// metaOf describes an envelope's metadata for a check.
func metaOf(env *payload.Envelope) string {
	s := func(p *int64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	b := "null"
	if env.Backoff != nil {
		b = *env.Backoff
	}
	return fmt.Sprintf("tries=%s backoff=%s timeout=%s maxExceptions=%s failOnTimeout=%v",
		s(env.MaxTries), b, s(env.Timeout), s(env.MaxExceptions), env.FailOnTimeout)
}

func wantMeta(want func(rel laraq.Release) string) func(t *testing.T, rel laraq.Release, env *payload.Envelope) {
	return func(t *testing.T, rel laraq.Release, env *payload.Envelope) {
		t.Helper()
		if got, w := metaOf(env), want(rel); got != w {
			t.Errorf("%s: metadata %s, want %s", rel, got, w)
		}
	}
}

// wantRetryDelay checks the 5.8–7.x retry delay and expiry (the delay and timeoutAt
// keys) before 8.0, and from 8.0 that there is no backoff and retryUntil is since80 (the
// zero time: null).
func wantRetryDelay(delay int64, timeoutAt, since80 time.Time) func(t *testing.T, rel laraq.Release, env *payload.Envelope) {
	return func(t *testing.T, rel laraq.Release, env *payload.Envelope) {
		t.Helper()
		unix := func(p *int64) string {
			if p == nil {
				return "null"
			}
			return fmt.Sprint(*p)
		}
		want, got := fmt.Sprintf("delay=%d timeoutAt=%d", delay, timeoutAt.Unix()),
			fmt.Sprintf("delay=%s timeoutAt=%s", unix(env.Delay), unix(env.RetryUntil))
		if rel.AtLeast(8, 0, 0) {
			want = "backoff=null retryUntil=null"
			if !since80.IsZero() {
				want = fmt.Sprintf("backoff=null retryUntil=%d", since80.Unix())
			}
			backoff := "null"
			if env.Backoff != nil {
				backoff = *env.Backoff
			}
			got = fmt.Sprintf("backoff=%s retryUntil=%s", backoff, unix(env.RetryUntil))
		}
		if got != want {
			t.Errorf("%s: %s, want %s", rel, got, want)
		}
	}
}

func goDispatches(major int) []goDispatch {
	t1 := time.Date(2024, 5, 6, 7, 8, 9, 123456000, mustZone("Europe/Berlin"))
	t2 := time.Date(1999, 12, 31, 23, 59, 59, 0, time.UTC)
	active, suspended, spades := testkit.Status("Active"), testkit.Status("Suspended"), testkit.Suit("Spades")
	batched := any(mxBatched{N: int64(1), BatchID: testkit.Str("b-1")})
	if major == 8 {
		batched = mxBatched8{N: int64(1), BatchID: testkit.Str("b-1")}
	}
	atLeast13 := func(rel laraq.Release) bool { return rel.AtLeast(13, 0, 0) }
	return []goDispatch{
		{name: "plain", job: mxPlain{Name: "x", Count: int64(1), Ratio: 0.5, Flag: false, Tags: []any{"a"}, Meta: map[string]any{"k": "v"}},
			php: `{"class":"App\\Jobs\\PlainJob","props":{"name":"x","count":1,"ratio":0.5,"flag":false,"nothing":null,"tags":["a"],"meta":{"k":"v"}}}`},
		{name: "visibility", job: mxVisibility{Pub: "p", Prot: int64(7), Priv: []any{int64(1)}},
			php: `{"class":"App\\Jobs\\VisibilityJob","props":{"pub":"p","\u0000*\u0000prot":7,"\u0000App\\Jobs\\VisibilityJob\u0000priv":[1]}}`},
		{name: "visibility-nulls", job: mxVisibility{Pub: "only"},
			php: `{"class":"App\\Jobs\\VisibilityJob","props":{"pub":"only"}}`},
		{name: "nested", job: mxNested{List: []any{int64(1), []any{}}, Map: phpser.Map{{Key: phpser.IntKey(10), Value: "ten"}},
			Object: &mxAddress{Street: "s", Zip: "z", Geo: []float64{1.5}}, Deep: map[string]any{"a": true}, Text: "t"},
			php: `{"class":"App\\Jobs\\NestedJob","props":{"list":[1,[]],"map":{"10":"ten"},"object":{"@class":"App\\Support\\Address","street":"s","\u0000*\u0000zip":"z","\u0000App\\Support\\Address\u0000geo":[1.5]},"deep":{"a":true},"text":"t"}}`},
		{name: "numbers", job: mxNumbers{NegZero: negZero(), Big: 1e100, Tenth: 0.1, MaxInt: 1<<63 - 1, MinInt: -1 << 63, Floats: []float64{1, 5e-324}},
			php: `{"class":"App\\Jobs\\NumbersJob","props":{"negZero":-0.0,"big":1e100,"tenth":0.1,"maxInt":9223372036854775807,"minInt":-9223372036854775808,"floats":[1.0,5e-324]}}`},
		{name: "model", job: testkit.MxModel{User: testkit.ModelID(int64(3)), Note: "n"},
			php: `{"class":"App\\Jobs\\ModelJob","props":{"user":{"@model":"App\\Models\\User","id":3},"note":"n"}}`},
		{name: "models", job: mxModels{User: testkit.ModelID(int64(3)), Users: testkit.ModelID([]any{int64(1), int64(2)}), Note: "n"},
			php: `{"class":"App\\Jobs\\Matrix\\ModelsJob","props":{"user":{"@model":"App\\Models\\User","id":3},"users":{"@models":"App\\Models\\User","ids":[1,2]},"note":"n"}}`},
		{name: "carbon", job: mxCarbon{When: &t1, Date: &t2},
			php: `{"class":"App\\Jobs\\CarbonJob","props":{"when":{"@class":"Illuminate\\Support\\Carbon","date":"2024-05-06 07:08:09.123456","timezone_type":3,"timezone":"Europe/Berlin"},"date":{"@class":"DateTimeImmutable","date":"1999-12-31 23:59:59.000000","timezone_type":3,"timezone":"UTC"}}}`},
		{name: "enum", job: mxEnum{Status: &active, Suit: &spades, Typed: &suspended},
			php: `{"class":"App\\Jobs\\EnumJob","props":{"status":{"@enum":"App\\Enums\\Status:Active"},"suit":{"@enum":"App\\Enums\\Suit:Spades"},"typed":{"@enum":"App\\Enums\\Status:Suspended"}}}`},
		{name: "named", job: mxNamed{Name: "nightly"}, php: `{"class":"App\\Jobs\\NamedJob","props":{"name":"nightly"}}`},
		{name: "reverse", job: mxReverse{UserID: int64(5)}, php: `{"class":"App\\Jobs\\ReverseTraitsJob","props":{"userId":5}}`},
		{name: "meta", job: mxMeta{Tries: int64(4), MaxExceptions: int64(2), Backoff: []any{int64(1), int64(5)}, Timeout: int64(30),
			FailOnTimeout: true, RetryUntil: time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), Label: "meta"},
			php: `{"class":"App\\Jobs\\MetaJob","props":{"tries":4,"maxExceptions":2,"backoff":[1,5],"timeout":30,"failOnTimeout":true,"retryUntil":{"@class":"Illuminate\\Support\\Carbon","date":"2100-01-01 00:00:00.000000","timezone_type":3,"timezone":"UTC"},"label":"meta"}}`},

		// Class defaults: SendInvoice{OrderID: 7} is `new SendInvoice(7)`.
		{name: "defaults", job: testkit.MxDefaults{Changed: "yes"}, php: `{"class":"App\\Jobs\\Matrix\\DefaultsJob","props":{"changed":"yes"}}`,
			check: wantMeta(func(laraq.Release) string {
				return "tries=3 backoff=null timeout=null maxExceptions=null failOnTimeout=false"
			})},
		{name: "defaults-changed", job: testkit.MxDefaults{Tries: 5, Label: "x", Changed: []any{}, Secret: "s", Hidden: []int{1, 2}},
			php: `{"class":"App\\Jobs\\Matrix\\DefaultsJob","props":{"tries":5,"label":"x","changed":[],"\u0000*\u0000secret":"s","\u0000App\\Jobs\\Matrix\\DefaultsJob\u0000hidden":[1,2]}}`},
		{name: "defaults-onqueue-delay", job: testkit.MxDefaults{Changed: "q"}, opts: []laraq.DispatchOption{laraq.OnQueue("emails"), laraq.Delay(5 * time.Second)},
			php: `{"class":"App\\Jobs\\Matrix\\DefaultsJob","props":{"changed":"q"},"queue":"emails","delay":5}`},
		{name: "defaults-onconnection", job: testkit.MxDefaults{Changed: "c"}, opts: []laraq.DispatchOption{laraq.OnConnection("redis")},
			php: `{"class":"App\\Jobs\\Matrix\\DefaultsJob","props":{"changed":"c"},"connection":"redis"}`},
		{name: "meta-defaults", job: mxMetaDefaults{Label: "d"}, php: `{"class":"App\\Jobs\\Matrix\\MetaDefaultsJob","props":{"label":"d"}}`,
			check: func(t *testing.T, rel laraq.Release, env *payload.Envelope) {
				wantMeta(func(rel laraq.Release) string {
					switch {
					case !rel.AtLeast(7, 0, 0): // no maxExceptions, backoff or failOnTimeout yet
						return "tries=4 backoff=null timeout=30 maxExceptions=null failOnTimeout=false"
					case !rel.AtLeast(8, 0, 0):
						return "tries=4 backoff=null timeout=30 maxExceptions=2 failOnTimeout=false"
					}
					return "tries=4 backoff=3,10 timeout=30 maxExceptions=2 failOnTimeout=true"
				})(t, rel, env)
				if env.RetryUntil == nil || *env.RetryUntil != matrixNow.AddDate(100, 0, 0).Unix() {
					t.Errorf("retryUntil() not read: %v", env.RetryUntil)
				}
			}},
		{name: "meta-defaults-set", job: mxMetaDefaults{Tries: 1, Backoff: []int{7}, Label: "e"},
			php: `{"class":"App\\Jobs\\Matrix\\MetaDefaultsJob","props":{"tries":1,"backoff":[7],"label":"e"}}`},
		{name: "meta-methods", job: mxMetaMethods{Label: "m"}, php: `{"class":"App\\Jobs\\Matrix\\MetaMethodsJob","props":{"label":"m"}}`,
			check: wantMeta(func(rel laraq.Release) string {
				if !rel.AtLeast(8, 0, 0) { // backoff() is 8.0's
					return "tries=null backoff=null timeout=null maxExceptions=null failOnTimeout=false"
				}
				return "tries=null backoff=1,5,10 timeout=null maxExceptions=null failOnTimeout=false"
			})},
		// 5.8–7.x's retryAfter and timeoutAt: their delay and timeoutAt keys; 8.0+ reads
		// neither property, retryUntil() only.
		{name: "retry-after", job: mxRetryAfter{RetryAfter: 7, TimeoutAt: new(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)), Label: "r"},
			php:   `{"class":"App\\Jobs\\Matrix\\RetryAfterJob","props":{"label":"r","timeoutAt":{"@class":"Illuminate\\Support\\Carbon","date":"2100-01-01 00:00:00.000000","timezone_type":3,"timezone":"UTC"}}}`,
			check: wantRetryDelay(7, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC), time.Time{})},
		{name: "retry-after-method", job: mxRetryAfterMethod{Label: "m"}, php: `{"class":"App\\Jobs\\Matrix\\RetryAfterMethodJob","props":{"label":"m"}}`,
			check: wantRetryDelay(4, matrixNow.AddDate(10, 0, 0), matrixNow.AddDate(10, 0, 0))},
		{name: "tries-method", job: mxTriesMethod{Label: "t"}, php: `{"class":"App\\Jobs\\Matrix\\TriesMethodJob","props":{"label":"t"}}`,
			check: wantMeta(func(rel laraq.Release) string {
				if rel.AtLeast(10, 39, 0) {
					return "tries=6 backoff=null timeout=null maxExceptions=null failOnTimeout=false"
				}
				return "tries=null backoff=null timeout=null maxExceptions=null failOnTimeout=false"
			})},
		{name: "methods-override", job: mxMethodsOverride{Label: "o"}, php: `{"class":"App\\Jobs\\Matrix\\MethodsOverrideJob","props":{"label":"o"}}`,
			check: wantMeta(func(rel laraq.Release) string {
				switch {
				case atLeast13(rel):
					return "tries=7 backoff=1,2 timeout=null maxExceptions=null failOnTimeout=false"
				case !rel.AtLeast(8, 0, 0): // $backoff is 8.0's
					return "tries=2 backoff=null timeout=null maxExceptions=null failOnTimeout=false"
				}
				return "tries=2 backoff=9 timeout=null maxExceptions=null failOnTimeout=false"
			})},
		{name: "attributes", job: mxAttributeMeta{Label: "a"}, php: `{"class":"App\\Jobs\\Matrix\\AttributeMetaJob","props":{"label":"a"}}`,
			check: wantMeta(func(rel laraq.Release) string {
				if atLeast13(rel) {
					return "tries=5 backoff=2,4 timeout=45 maxExceptions=3 failOnTimeout=true"
				}
				return "tries=null backoff=null timeout=null maxExceptions=null failOnTimeout=false"
			})},
		{name: "attribute-over-default", job: mxAttributeOver{Label: "d"}, php: `{"class":"App\\Jobs\\Matrix\\AttributeOverJob","props":{"label":"d"}}`,
			check: wantMeta(func(rel laraq.Release) string {
				if atLeast13(rel) {
					return "tries=5 backoff=null timeout=null maxExceptions=null failOnTimeout=false"
				}
				return "tries=3 backoff=null timeout=null maxExceptions=null failOnTimeout=false"
			})},
		{name: "attribute-over-set", job: mxAttributeOver{Tries: 4, Label: "s"}, php: `{"class":"App\\Jobs\\Matrix\\AttributeOverJob","props":{"tries":4,"label":"s"}}`,
			check: wantMeta(func(rel laraq.Release) string {
				return "tries=4 backoff=null timeout=null maxExceptions=null failOnTimeout=false"
			})},
		{name: "stub", min: 11, job: mxStub{User: *testkit.ModelID(int64(2)), Note: "stub"},
			php: `{"class":"App\\Jobs\\Matrix\\StubJob","args":{"user":{"@model":"App\\Models\\User","id":2},"note":"stub"}}`},
		{name: "unique", needs: &testenv.Unique, job: mxUnique{OrderID: int64(7)}, php: `{"class":"App\\Jobs\\Matrix\\UniqueJob","props":{"orderId":7}}`},
		{name: "batched", needs: &testenv.Batches, job: batched, noRun: true, php: `{"class":"App\\Jobs\\Matrix\\BatchedJob","props":{"n":1,"batchId":"b-1"}}`},

		// Chains: each element is serialize() of the job, as its class writes it.
		{name: "chain", job: testkit.MxChainStep{Step: int64(1)},
			opts: []laraq.DispatchOption{laraq.Chain(testkit.MxChainStep{Step: int64(2)}, testkit.MxDefaults{Changed: "c"}, mxMetaDefaults{Label: "l"})},
			php: `{"class":"App\\Jobs\\ChainStep","props":{"step":1},"chain":[{"class":"App\\Jobs\\ChainStep","props":{"step":2}},` +
				`{"class":"App\\Jobs\\Matrix\\DefaultsJob","props":{"changed":"c"}},{"class":"App\\Jobs\\Matrix\\MetaDefaultsJob","props":{"label":"l"}}]}`},
		{name: "chain-of-defaults", job: testkit.MxDefaults{Changed: "a"}, opts: []laraq.DispatchOption{laraq.Chain(testkit.MxDefaults{Changed: "b", Count: 2})},
			php: `{"class":"App\\Jobs\\Matrix\\DefaultsJob","props":{"changed":"a"},"chain":[{"class":"App\\Jobs\\Matrix\\DefaultsJob","props":{"changed":"b","count":2}}]}`},
	}
}

func mustZone(name string) *time.Location {
	l, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return l
}

func negZero() float64 { z := 0.0; return -z }

// TestMatrixGoDispatchesPHPRuns: on every major, each job Go dispatches is byte for
// byte what the release writes for the same object (uuid and id aside; createdAt and
// delays on one clock), class defaults left out where SerializesModels leaves them out,
// metadata from class defaults, methods and attributes as that release reads them; and
// the release's own Worker runs every one, its command what Go meant.
func TestMatrixGoDispatchesPHPRuns(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		matrixGoDispatchesPHPRuns(t, srv, major, "", testkit.PeerRelease(t, major))
	})
	// 13.4.0 has neither debounceOwner (13.6) nor uniqueLockOwner (13.24).
	t.Run("L13.4", func(t *testing.T) {
		t.Parallel()
		testenv.NeedPeerTree(t, 13, "13.4")
		matrixGoDispatchesPHPRuns(t, srv, 13, "13.4", testkit.MustRelease(t, "13.4.0"))
	})
}

func matrixGoDispatchesPHPRuns(t *testing.T, srv *testenv.Redis, major int, tree string, rel laraq.Release) {
	cacheDB := major // ShouldBeUnique locks of one run must not meet another's
	if tree != "" {
		cacheDB = 14
	}
	ctx := context.Background()
	phpPrefix, goPrefix := testenv.Prefix(t), testenv.Prefix(t)
	var cases []goDispatch
	var reqs []string
	for _, c := range goDispatches(major) {
		if c.needs != nil && !c.needs.Has(major) {
			t.Logf("case %s skipped: %s", c.name, c.needs.SkipMessage(major))
			continue
		}
		if major >= c.min {
			cases = append(cases, c)
			reqs = append(reqs, c.php)
		}
	}
	got := testenv.PHPEnv{Major: major, Tree: tree, Redis: srv, Prefix: phpPrefix, CacheDB: cacheDB, Client: matrixClient(major, 0)}.Dispatch(t, matrixArgs(major), reqs...)

	cfg := testkit.DispatchSetup{Prefix: goPrefix, Release: rel, Now: fixedClock(0)}
	testkit.FixedIDs(&cfg)
	d, err := testkit.NewDispatcher(srv.Client(t, 0), cfg)
	if err != nil {
		t.Fatal(err)
	}
	sent := map[string]goDispatch{} // job id → case
	for i, c := range cases {
		m, err := d.Prepare(c.job, c.opts...)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		p := got[i]
		testkit.SameExceptIDs(t, fmt.Sprintf("%s %s", rel, c.name), m.Payload, []byte(p.Payload))
		if p.Queue != m.Queue || p.Delayed != m.Delayed || m.Delayed && (p.Score == nil || *p.Score != m.AvailableAt) {
			t.Errorf("%s: Laravel queued on %q (delayed %v, score %v), Go on %q (delayed %v, at %d)", c.name, p.Queue, p.Delayed, p.Score, m.Queue, m.Delayed, m.AvailableAt)
		}
		env, err := payload.Parse(m.Payload)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if c.check != nil {
			c.check(t, rel, env)
		}
		if c.noRun {
			continue
		}
		if err := d.Enqueue(ctx, m); err != nil {
			t.Fatal(err)
		}
		sent[m.ID] = c
	}
	if t.Failed() {
		return
	}

	// The release's Worker runs what Go queued (and the chains' next jobs).
	records := testkit.RecordFile(t)
	penv := testenv.PHPEnv{Major: major, Tree: tree, Redis: srv, Prefix: goPrefix, CacheDB: cacheDB, Record: records, FailedDB: testenv.SQLite(t), Client: matrixClient(major, 0)}
	out := testkit.RunWorker(t, penv, 60*time.Second, "--queue=default,emails", "--stop-when-empty", "--sleep=0",
		fmt.Sprint("--now=", matrixNow.Add(time.Minute).Unix()))
	if strings.Contains(out, "Failed:") {
		t.Fatalf("Laravel's worker failed jobs Go queued:\n%s", out)
	}
	ran := map[string]bool{}
	for _, rec := range testkit.ReadRecords(t, records) {
		if rec.ID == nil || rec.Event != "handle" {
			continue
		}
		c, ok := sent[*rec.ID]
		if !ok {
			continue // a chain's next job, dispatched by PHP
		}
		ran[*rec.ID] = true
		want := readBack(t, c.job, rec.Raw)
		for _, diff := range testkit.CompareRecord(rec.Class, rec.Props, want) {
			t.Errorf("%s %s: %s", rel, c.name, diff)
		}
	}
	for id, c := range sent {
		if !ran[id] {
			t.Errorf("%s: Laravel's worker did not run %s", rel, c.name)
		}
	}
	if n, want := strings.Count(out, "Processed:"), len(sent)+4; n != want {
		t.Errorf("Laravel processed %d jobs, want %d (%d from Go, 4 chained):\n%s", n, want, len(sent), out)
	}
}

// readBack decodes the command of a payload into a new value of job's type, as a Go
// worker reads it: the properties it leaves out at their class defaults.
func readBack(t *testing.T, job any, raw string) any {
	t.Helper()
	env, err := payload.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	ptr := reflect.New(reflect.TypeOf(job))
	if err := phpser.Unmarshal([]byte(env.Command), ptr.Interface()); err != nil {
		t.Fatalf("%s: %v", env.CommandName, err)
	}
	return ptr.Interface()
}
