package middleware_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/bus"
	"github.com/laraq/laraq/cache"
	cachedb "github.com/laraq/laraq/cache/database"
	fdb "github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
	mw "github.com/laraq/laraq/middleware"
	"github.com/laraq/laraq/phpser"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// The parity tests run one attempt of a probe job through a middleware twice from the same
// starting state: once in PHP (testdata/php/middleware_op.php drives the release's own
// middleware class) and once in Go, each under its own Redis prefix and SQLite file, and
// require the same outcome and the same state afterwards: every Redis key of the queue
// and cache connections with its value and TTL, every row of the database store's tables.
// Times are compared relative to the second each attempt ran in: both sides write their
// seed and run the attempt within one second of their own clock (a run that straddles a
// second is repeated), so "now + 60" here is "now + 60" there. Lock owners are random on
// both sides and compared by shape.

// cachePrefix is the cache store prefix both sides use (config cache.prefix): RedisStore
// adds ":" after it up to 10.x.
const cachePrefix = "mwc"

// seed is one key or row written just before the attempt. Values may hold {now},
// {now+N}, {now-N}; key names {c}, the cache prefix as the store applies it.
type seed struct {
	Conn   string            `json:"conn,omitempty"` // "cache" (DB 1) or "default" (DB 0)
	Key    string            `json:"key"`
	String *string           `json:"string,omitempty"`
	Hash   map[string]string `json:"hash,omitempty"`
	TTL    int64             `json:"ttl,omitempty"`
	Table  string            `json:"table,omitempty"` // database store: cache or cache_locks
	Value  *string           `json:"value,omitempty"`
	Owner  *string           `json:"owner,omitempty"`
	Expire string            `json:"expiration,omitempty"`
}

func sp(s string) *string { return &s }

// strKey seeds a string under the cache connection.
func cacheKey(key, value string, ttl int64) seed {
	return seed{Conn: "cache", Key: key, String: sp(value), TTL: ttl}
}

// probe is the job the attempt runs.
type probe struct {
	Class    string `json:"class"`
	Display  string `json:"display,omitempty"`
	UUID     string `json:"uuid"`
	Attempts int    `json:"attempts"`
	Batch    string `json:"batch,omitempty"`
}

const (
	probeClass = `App\Jobs\MiddlewareProbe`
	namedClass = `App\Jobs\MiddlewareProbeNamed`
)

// outcome is what one attempt did, in middleware_op.php's terms.
type outcome struct {
	Ran       bool     `json:"ran"`
	Released  *int64   `json:"released"`
	Deleted   bool     `json:"deleted"`
	Failed    *string  `json:"failed"`
	Exception *string  `json:"exception"`
	Reported  []string `json:"reported"`
	Before    int64    `json:"before"`
	After     int64    `json:"after"`
}

func (o outcome) String() string {
	var parts []string
	parts = append(parts, "ran="+strconv.FormatBool(o.Ran))
	if o.Released != nil {
		parts = append(parts, fmt.Sprintf("released=%d", *o.Released))
	}
	if o.Deleted {
		parts = append(parts, "deleted")
	}
	if o.Failed != nil {
		parts = append(parts, "failed="+strconv.Quote(*o.Failed))
	}
	if o.Exception != nil {
		parts = append(parts, "exception="+strconv.Quote(*o.Exception))
	}
	if len(o.Reported) > 0 {
		parts = append(parts, fmt.Sprintf("reported=%q", o.Reported))
	}
	return strings.Join(parts, " ")
}

// errLogic is the "throw-logic" handler's error (PHP: LogicException "nope").
var errLogic = errors.New("nope")

// scenario is one attempt, the same in PHP and Go.
type scenario struct {
	name string
	// ships says which releases have the middleware (nil: all).
	ships    func(r job.Release) bool
	php      string                             // the middleware array as a PHP expression
	phpFor   func(r job.Release) string         // or as each release spells it
	goMW     func(env *mw.Env) []job.Middleware // the same middleware declared in Go
	limiters map[string]string                  // PHP RateLimiter::for closures
	goLim    func(l *mw.Limiters)
	job      probe
	handler  string
	seed     []seed
	seedFor  func(r job.Release) []seed // or the seeds for each release
	database bool                       // the default (and limiter) store is the database store
	// limiterStore is config cache.limiter: "redis" counts in the Redis store while the
	// default store is the database one.
	limiterStore string
	// decoded also runs the objects PHP's serialize() gives, decoded by Go, against PHP
	// running them after unserialize(), as a worker does with ->through() (false where
	// PHP cannot serialize them: closures).
	decoded bool
	// want is what PHP's outcome must say (outcome.String contains it), so that a
	// scenario cannot pass by exercising nothing.
	want    string
	wantFor func(r job.Release) string // or per release
}

// side is one implementation's place: Redis prefix, SQLite file.
type side struct {
	prefix string
	dbFile string
}

func newSide(t *testing.T, database bool) side {
	s := side{prefix: testenv.Prefix(t)}
	if database {
		s.dbFile = filepath.Join(t.TempDir(), "cache-"+testenv.RandomName(4)+".sqlite")
		db, _, _, err := fdb.OpenDB(context.Background(), "sqlite:"+s.dbFile)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range []string{
			`create table "cache" ("key" varchar not null, "value" text not null, "expiration" integer not null, primary key ("key"))`,
			`create table "cache_locks" ("key" varchar not null, "owner" varchar not null, "expiration" integer not null, primary key ("key"))`,
		} {
			if _, err := db.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
	}
	return s
}

// storePrefix is the cache store's prefix as RedisStore keeps it on major.
func storePrefix(major int) string {
	if major <= 10 {
		return cachePrefix + ":"
	}
	return cachePrefix
}

func releaseOf(t *testing.T, major int) job.Release {
	tag := strings.TrimPrefix(testenv.Peer(t, major).Tag, "v")
	var r job.Release
	parts := strings.Split(tag, ".")
	nums := []*int{&r.Major, &r.Minor, &r.Patch}
	for i, p := range parts {
		if i < 3 {
			*nums[i], _ = strconv.Atoi(p)
		}
	}
	if r.Major == 8 && r.Patch == 0 {
		r.Patch = 26 // Debian's 8.83.26
	}
	return r
}

var nowToken = regexp.MustCompile(`\{now([+-]\d+)?\}`)

func atNow(s string, now int64) string {
	return nowToken.ReplaceAllStringFunc(s, func(m string) string {
		d, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(m, "{now"), "}"), 10, 64)
		return strconv.FormatInt(now+d, 10)
	})
}

// seeds are the scenario's seeds for major, {c} replaced by the cache prefix as the store
// applies it (RedisStore's "mwc:" up to 10.x; the database store's "mwc").
func (sc scenario) phpExpr(t *testing.T, major int) string {
	if sc.phpFor != nil {
		return sc.phpFor(releaseOf(t, major))
	}
	return sc.php
}

func (sc scenario) seeds(t *testing.T, major int) []seed {
	in := sc.seed
	if sc.seedFor != nil {
		in = sc.seedFor(releaseOf(t, major))
	}
	out := make([]seed, len(in))
	for i, s := range in {
		c := storePrefix(major)
		if s.Table != "" {
			c = cachePrefix
		}
		s.Key = strings.ReplaceAll(s.Key, "{c}", c)
		out[i] = s
	}
	return out
}

// runPHP runs the attempt in PHP on one side.
// With roundtrip the middleware run after unserialize(serialize()).
func runPHP(t *testing.T, srv *testenv.Redis, major int, sc scenario, s side, roundtrip bool) outcome {
	t.Helper()
	env, in := phpRequest(t, srv, major, sc, s, roundtrip)
	return parsePHP(t, env.Run(t, in, "middleware_op.php", "run"))
}

// phpRequest is the harness environment and stdin of an attempt.
func phpRequest(t *testing.T, srv *testenv.Redis, major int, sc scenario, s side, roundtrip bool) (testenv.PHPEnv, []byte) {
	t.Helper()
	env := testenv.PHPEnv{Major: major, Redis: srv, Prefix: s.prefix, CachePrefix: cachePrefix}
	if s.dbFile != "" {
		env.CacheStoreDB = s.dbFile
	}
	req := map[string]any{"middleware": sc.phpExpr(t, major), "limiters": sc.limiters, "job": sc.job, "handler": sc.handler,
		"seed": sc.seeds(t, major), "roundtrip": roundtrip}
	if sc.limiterStore != "" {
		req["limiter_store"] = sc.limiterStore
	}
	in, _ := json.Marshal(req)
	return env, in
}

func parsePHP(t *testing.T, out []byte) outcome {
	t.Helper()
	var o outcome
	if err := json.Unmarshal(out, &o); err != nil {
		t.Fatalf("middleware_op.php: %v: %s", err, out)
	}
	if o.Exception != nil {
		// Compare messages: Go errors carry no PHP class.
		_, msg, _ := strings.Cut(*o.Exception, ": ")
		o.Exception = &msg
	}
	return o
}

// serializedPHP asks PHP for serialize() of the scenario's middleware array.
func serializedPHP(t *testing.T, major int, sc scenario) *phpser.Value {
	t.Helper()
	in, _ := json.Marshal(map[string]any{"middleware": sc.phpExpr(t, major)})
	var v struct {
		Serialized *string
		Error      string
	}
	if err := json.Unmarshal(testenv.PHPEnv{Major: major}.Run(t, in, "middleware_op.php", "serialize"), &v); err != nil {
		t.Fatal(err)
	}
	if v.Serialized == nil {
		t.Fatalf("PHP cannot serialize %s: %s", sc.phpExpr(t, major), v.Error)
	}
	b, _ := base64.StdEncoding.DecodeString(*v.Serialized)
	arr, err := phpser.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	return phpser.NewObject(sc.job.Class, phpser.PublicProp("middleware", arr))
}

// runGoDecoded runs the Go forms Decoders.Through gives for PHP's serialized objects.
func runGoDecoded(t *testing.T, srv *testenv.Redis, major int, sc scenario, s side, command *phpser.Value) outcome {
	t.Helper()
	ms, err := mw.LaravelDecoders().Through(command)
	if err != nil {
		t.Fatal(err)
	}
	return runGo(t, srv, major, sc, s, func(*mw.Env) []job.Middleware { return ms })
}

// goEnv is the Go side's environment on one side's keys and file.
func goEnv(t *testing.T, srv *testenv.Redis, major int, s side, reported *[]string) *mw.Env {
	t.Helper()
	db0, db1 := srv.Client(t, 0), srv.Client(t, 1)
	keys := rdb.CacheKeys{RedisPrefix: s.prefix, Prefix: cachePrefix, Separator: major <= 10}
	var store cache.Store
	var err error
	if s.dbFile != "" {
		store, err = cachedb.Open(context.Background(), "sqlite:"+s.dbFile, cachedb.Options{Prefix: cachePrefix})
		if err == nil {
			t.Cleanup(func() { _ = store.Close() })
		}
	} else {
		store, err = rdb.NewRedisStore(db1, db0, keys)
	}
	if err != nil {
		t.Fatal(err)
	}
	return &mw.Env{
		Release: releaseOf(t, major), Cache: store, Redis: db0, RedisPrefix: s.prefix, Limiters: mw.NewLimiters(),
		Report: func(_ context.Context, err error) { *reported = append(*reported, err.Error()) },
	}
}

// goHandler is the probe's handle() in Go.
func goHandler(behaviour string, ran *bool) job.Next {
	return func(ctx context.Context) error {
		*ran = true
		switch {
		case behaviour == "throw":
			return errors.New("boom")
		case behaviour == "throw-logic":
			return errLogic
		case strings.HasPrefix(behaviour, "release:"):
			n, _ := strconv.ParseInt(strings.TrimPrefix(behaviour, "release:"), 10, 64)
			return job.ReleaseAfter(time.Duration(n) * time.Second)
		case behaviour == "delete":
			return job.Delete()
		case behaviour == "fail":
			return job.Fail(errors.New("failed by the handler"))
		case strings.HasPrefix(behaviour, "wait:"):
			waitGate(strings.TrimPrefix(behaviour, "wait:"))
		}
		return nil
	}
}

// batches answers Find for the probe's batch: cancelled or not.
type batches struct {
	bus.Repository
	cancelled bool
}

func (b batches) Find(_ context.Context, id string) (*bus.Batch, error) {
	out := &bus.Batch{ID: id}
	if b.cancelled {
		now := time.Now()
		out.CancelledAt = &now
	}
	return out, nil
}

// goJob is the worker's view of the probe: its class, displayName (the payload's, as
// PHP's displayName() gave it), uuid, attempt and batch.
func goJob(p probe) *job.JobInfo {
	info := &job.JobInfo{Class: p.Class, Name: p.Class, UUID: p.UUID, Attempt: max(p.Attempts, 1)}
	if p.Class == namedClass {
		info.Name = p.Display
	}
	env := &job.Env{}
	if p.Batch != "" {
		info.BatchID = "batch-" + p.Batch
		env.Batches = batches{cancelled: p.Batch == "cancelled"}
	}
	job.Attach(info, env, nil)
	return info
}

// seedGo writes the seeds as middleware_op.php does.
func seedGo(t *testing.T, srv *testenv.Redis, s side, seeds []seed, now int64) {
	t.Helper()
	ctx := context.Background()
	for _, sd := range seeds {
		if sd.Table != "" {
			db, _, _, err := fdb.OpenDB(ctx, "sqlite:"+s.dbFile)
			if err != nil {
				t.Fatal(err)
			}
			exp, _ := strconv.ParseInt(atNow(sd.Expire, now), 10, 64)
			if sd.Owner != nil {
				_, err = db.Exec(`insert into "cache_locks" ("key", "owner", "expiration") values (?, ?, ?)`, sd.Key, *sd.Owner, exp)
			} else {
				_, err = db.Exec(`insert into "cache" ("key", "value", "expiration") values (?, ?, ?)`, sd.Key, atNow(*sd.Value, now), exp)
			}
			_ = db.Close()
			if err != nil {
				t.Fatal(err)
			}
			continue
		}
		dbn := 0
		if sd.Conn == "cache" {
			dbn = 1
		}
		c := srv.Client(t, dbn)
		key := s.prefix + sd.Key
		var err error
		if sd.Hash != nil {
			h := map[string]string{}
			for f, v := range sd.Hash {
				h[f] = atNow(v, now)
			}
			err = c.HSet(ctx, key, h).Err()
		} else {
			err = c.Set(ctx, key, atNow(*sd.String, now), 0).Err()
		}
		if err == nil && sd.TTL > 0 {
			err = c.Expire(ctx, key, time.Duration(sd.TTL)*time.Second).Err()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// runGo runs the attempt in Go on one side with middleware ms.
func runGo(t *testing.T, srv *testenv.Redis, major int, sc scenario, s side, ms func(env *mw.Env) []job.Middleware) outcome {
	t.Helper()
	var o outcome
	env := goEnv(t, srv, major, s, &o.Reported)
	if sc.limiterStore == "redis" {
		keys := rdb.CacheKeys{RedisPrefix: s.prefix, Prefix: cachePrefix, Separator: major <= 10}
		store, err := rdb.NewRedisStore(srv.Client(t, 1), srv.Client(t, 0), keys)
		if err != nil {
			t.Fatal(err)
		}
		env.Limiter = store
	}
	if sc.goLim != nil {
		sc.goLim(env.Limiters)
	}
	info := goJob(sc.job)
	o.Before = time.Now().Unix()
	seedGo(t, srv, s, sc.seeds(t, major), o.Before)
	err := mw.Run(mw.WithEnv(context.Background(), env), info, ms(env), goHandler(sc.handler, &o.Ran))
	o.After = time.Now().Unix()
	describeGo(&o, err)
	return o
}

// describeGo maps an attempt's error to what middleware_op.php reports of PHP's: the
// outcome the worker would give it.
func describeGo(o *outcome, err error) {
	outcome, delay := job.OutcomeOf(err)
	switch outcome {
	case job.OutcomeDone:
	case job.OutcomeRelease:
		n := int64(delay / time.Second)
		o.Released = &n
	case job.OutcomeFail:
		var fail *job.FailError
		errors.As(err, &fail)
		msg := fail.Err.Error()
		o.Failed = &msg
		var d *job.MiddlewareDecision
		if errors.As(err, &d) && d.Rethrown { // PHP fails the job, then rethrows
			o.Exception = &msg
		}
	case job.OutcomeDelete:
		o.Deleted = true
	default:
		msg := err.Error()
		o.Exception = &msg
	}
	if o.Reported == nil {
		o.Reported = []string{}
	}
}

// attempt runs fn until it ran within one second (before == after), at most 6 times.
func attempt(t *testing.T, fn func() (outcome, map[string]string)) (outcome, map[string]string) {
	t.Helper()
	for i := 0; ; i++ {
		o, state := fn()
		if o.Before == o.After || i == 5 {
			if o.Before != o.After {
				t.Fatalf("six attempts straddled a second")
			}
			return o, state
		}
	}
}
