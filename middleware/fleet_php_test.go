package middleware_test

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq"
	fdb "github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// fleetOverlap is what one round of TestFleetWithoutOverlapping saw.
type fleetOverlap struct {
	lock  string // the holder's lock while it ran: name, TTL, owner's shape
	guest string // what became of the guest's job
	ran   []string
	after string // the lock state once the holder is done
}

// runFleetOverlap: holder takes job A of key K and waits; guest takes job B of key K;
// then A finishes. holder and guest are "php" (work.php --once) or "go".
func runFleetOverlap(t *testing.T, srv *testenv.Redis, major int, database bool, guard, holder, guest string) fleetOverlap {
	t.Helper()
	f := newFleet(t, srv, major, database)
	g := newGate(t)
	f.dispatch(guardedJob(`"key":"K","guard":"`+guard+`","wait":"`+string(g)+`"`), guardedJob(`"key":"K","guard":"`+guard+`"`))
	var holderDone func()
	if holder == "php" {
		cmd, out := f.phpStart("--once")
		holderDone = func() { f.phpWait(cmd, out) }
	} else {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { defer wg.Done(); f.goOnce(laraq.WorkerConfig{}) }()
		holderDone = wg.Wait
	}
	g.waitStarted(t)
	var r fleetOverlap
	now := time.Now().Unix()
	for k, v := range dumpSide(t, srv, f.side, now) {
		if strings.Contains(k, "laravel-queue-overlap:") {
			r.lock += k + " = " + lockTTL(v) + "; "
		}
	}
	before := time.Now().Unix()
	if guest == "php" {
		f.phpOnce()
	} else {
		f.goOnce(laraq.WorkerConfig{})
	}
	after := time.Now().Unix()
	r.guest = "gone"
	for member, score := range f.delayed() {
		env, err := payload.Parse([]byte(member))
		if err != nil {
			t.Fatal(err)
		}
		delay := fmt.Sprintf("%d..%d", int64(score)-after, int64(score)-before)
		if int64(score)-after <= 7 && 7 <= int64(score)-before {
			delay = "7"
		}
		r.guest = fmt.Sprintf("delayed attempts=%d delay=%s", env.Attempts, delay)
	}
	if left := f.left(); left != "(ready 0, reserved 1)" { // the holder's job alone
		r.guest += " " + left
	}
	g.open(t)
	holderDone()
	r.ran = f.ran()
	if left := f.left(); left != "" {
		t.Errorf("left behind: %s", left)
	}
	for k := range dumpSide(t, srv, f.side, now) {
		if strings.Contains(k, "laravel-queue-overlap:") {
			r.after += k + " "
		}
	}
	if rows := f.failedRows(); len(rows) > 0 {
		t.Errorf("failed rows %q", rows)
	}
	return r
}

// lockTTL keeps of a lock's dump its owner's shape and whether its expiry is the
// expireAfter of 120 s (a second may have passed since it was taken).
func lockTTL(v string) string {
	for _, ttl := range []string{"ttl=120", "ttl=119", "expiration={now+120}", "expiration={now+119}"} {
		if strings.HasSuffix(v, ttl) {
			return strings.TrimSuffix(v, ttl) + "expires in 120 s"
		}
	}
	return v
}

// TestFleetWithoutOverlapping: a PHP worker runs a job under WithoutOverlapping(K) and
// waits; a Go worker taking another job of key K releases it (or deletes it with
// dontRelease) exactly as a second PHP worker does: the same attempts, the same delay,
// the same lock key and TTL; and a PHP worker does the same while Go holds the lock.
// With the Redis store and with the database store.
func TestFleetWithoutOverlapping(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		for _, tc := range []struct {
			guard    string
			database bool
			guest    string
		}{
			{"overlap", false, "delayed attempts=1 delay=7"},
			{"overlap-dont-release", false, "gone"},
			{"overlap", true, "delayed attempts=1 delay=7"},
		} {
			t.Run(fmt.Sprintf("%s/database=%v", tc.guard, tc.database), func(t *testing.T) {
				needMiddleware(t, releaseOf(t, major), "WithoutOverlapping")
				phpPHP := runFleetOverlap(t, srv, major, tc.database, tc.guard, "php", "php")
				if phpPHP.guest != tc.guest || fmt.Sprint(phpPHP.ran) != "[php K]" || !strings.Contains(phpPHP.lock, "expires in 120 s") || phpPHP.after != "" {
					t.Fatalf("two PHP workers: %+v; want the guest %s", phpPHP, tc.guest)
				}
				t.Logf("two PHP workers: %+v", phpPHP)
				for _, roles := range [][2]string{{"php", "go"}, {"go", "php"}} {
					got := runFleetOverlap(t, srv, major, tc.database, tc.guard, roles[0], roles[1])
					want := phpPHP
					want.ran = []string{roles[0] + " K"}
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("%s holds, %s takes the other job:\n  got  %+v\n  PHP  %+v", roles[0], roles[1], got, want)
					}
				}
			})
		}
	})
}

// limiterWindow is when the RateLimiter's window of the fleet limiter (or the
// ThrottlesExceptions counter of the class, or their DurationLimiter) ends.
func limiterWindow(t *testing.T, f *fleet, key string, withRedis bool) int64 {
	t.Helper()
	ctx := context.Background()
	var v string
	switch {
	case withRedis:
		v = f.srv.Client(t, 0).HGet(ctx, f.side.prefix+key, "end").Val()
	case f.database:
		db, _, _, err := openDB(f.side.dbFile)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_ = db.QueryRow(`select value from cache where "key" = ?`, cachePrefix+key+":timer").Scan(&v)
		v = strings.TrimSuffix(strings.TrimPrefix(v, "i:"), ";")
	default:
		v = f.srv.Client(t, 1).Get(ctx, f.side.prefix+storePrefix(f.major)+key+":timer").Val()
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("window of %s: %q", key, v)
	}
	return n
}

// limiterHits is the RateLimiter's count of the fleet limiter.
func limiterHits(t *testing.T, f *fleet, key string) int64 {
	t.Helper()
	var v string
	if f.database {
		db, _, _, err := openDB(f.side.dbFile)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		_ = db.QueryRow(`select value from cache where "key" = ?`, cachePrefix+key).Scan(&v)
		v = strings.TrimSuffix(strings.TrimPrefix(v, "i:"), ";")
	} else {
		v = f.srv.Client(t, 1).Get(context.Background(), f.side.prefix+storePrefix(f.major)+key).Val()
	}
	n, _ := strconv.ParseInt(v, 10, 64)
	return n
}

// delayedAt describes the :delayed set: each job's attempts and when it is due,
// relative to at.
func delayedAt(t *testing.T, f *fleet, at int64) []string {
	t.Helper()
	var out []string
	for member, score := range f.delayed() {
		env, err := payload.Parse([]byte(member))
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("attempts=%d at%+d", env.Attempts, int64(score)-at))
	}
	sortStrings(out)
	return out
}

// TestFleetRateLimited: jobs of one limited class (3 a minute) split over a PHP and a
// Go worker run 3 in total, taken in turns or at once; the others are released until the
// window ends + 3 (the :timer PHP wrote, or the DurationLimiter's end), their attempt
// counted, whichever language released them. RateLimited on the Redis and the database
// store, and RateLimitedWithRedis.
func TestFleetRateLimited(t *testing.T) {
	srv := testenv.RedisServer(t)
	key := rdb.RateLimitedKey("fleet", "fleet")
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		for _, tc := range []struct {
			guard     string
			database  bool
			withRedis bool
		}{{"limited", false, false}, {"limited", true, false}, {"limited-redis", false, true}} {
			name := map[bool]string{false: "RateLimited", true: "RateLimitedWithRedis"}[tc.withRedis]
			t.Run(fmt.Sprintf("%s/database=%v/in turns", tc.guard, tc.database), func(t *testing.T) {
				needMiddleware(t, releaseOf(t, major), name)
				f := newFleet(t, srv, major, tc.database)
				f.dispatchGuarded(6, tc.guard)
				for i := range 6 {
					if i%2 == 0 {
						f.phpOnce()
					} else {
						f.goOnce(laraq.WorkerConfig{})
					}
				}
				if got := fmt.Sprint(f.ran()); got != "[go 2 php 1 php 3]" {
					t.Errorf("ran %s", got)
				}
				end := limiterWindow(t, f, key, tc.withRedis)
				if got := fmt.Sprint(delayedAt(t, f, end)); got != "[attempts=1 at+3 attempts=1 at+3 attempts=1 at+3]" {
					t.Errorf("released %s, relative to the window's end", got)
				}
			})
			t.Run(fmt.Sprintf("%s/database=%v/at once", tc.guard, tc.database), func(t *testing.T) {
				needMiddleware(t, releaseOf(t, major), name)
				f := newFleet(t, srv, major, tc.database)
				f.dispatchGuarded(8, tc.guard)
				cmd, out := f.phpStart("--stop-when-empty")
				f.goRun(f.goWorker(laraq.WorkerConfig{StopWhenEmpty: true}, false))
				f.phpWait(cmd, out)
				// The DurationLimiter counts in one script: exactly the limit runs. The
				// RateLimiter reads the count, then adds its hit (PHP's tooManyAttempts, then
				// hit): two workers reading the same count at once may both run, with PHP
				// workers alone as with Go, so one more than the limit can run; every run is
				// counted all the same.
				ran, released := len(f.ran()), len(f.delayed())
				switch {
				case ran+released != 8:
					t.Errorf("%d ran, %d released of 8", ran, released)
				case tc.withRedis && ran != 3:
					t.Errorf("ran %d, want 3 in the window", ran)
				case !tc.withRedis && (ran < 3 || ran > 4 || limiterHits(t, f, key) != int64(ran)):
					t.Errorf("ran %d, counted %d; want 3, or 4 after a race, each counted", ran, limiterHits(t, f, key))
				}
			})
		}
	})
}

// TestFleetThrottlesExceptions: after two exceptions, one thrown under a PHP worker and
// one under a Go worker, the next job is not run but released until the window ends
// (+ 3 s for the cache variant), by either language; each exception released its job
// for the backoff (a minute), attempt counted.
func TestFleetThrottlesExceptions(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		key := throttleKeyOf(guardedClass, releaseOf(t, major))
		for _, tc := range []struct {
			guard     string
			withRedis bool
			plus      int64
		}{{"throttled", false, 3}, {"throttled-redis", true, 0}} {
			for _, order := range []string{"php go php", "go php go"} {
				t.Run(tc.guard+"/"+order, func(t *testing.T) {
					needMiddleware(t, releaseOf(t, major), map[bool]string{false: "ThrottlesExceptions", true: "ThrottlesExceptionsWithRedis"}[tc.withRedis])
					f := newFleet(t, srv, major, false)
					f.dispatch(guardedJob(`"key":"1","guard":"`+tc.guard+`","throw":true`),
						guardedJob(`"key":"2","guard":"`+tc.guard+`","throw":true`),
						guardedJob(`"key":"3","guard":"`+tc.guard+`","throw":true`))
					who := strings.Fields(order)
					var span [3][2]int64
					for i, w := range who {
						span[i][0] = time.Now().Unix()
						if w == "php" {
							f.phpOnce()
						} else {
							f.goOnce(laraq.WorkerConfig{})
						}
						span[i][1] = time.Now().Unix()
					}
					if got, want := fmt.Sprint(f.ran()), fmt.Sprint(sorted(who[0]+" 1", who[1]+" 2")); got != want {
						t.Errorf("ran %s, want %s", got, want)
					}
					end := limiterWindow(t, f, key, tc.withRedis)
					for k, at := range delayedByKey(t, f) {
						n, _ := strconv.Atoi(k)
						switch {
						case n == 3 && at.score != end+tc.plus:
							t.Errorf("the third job is due %+d s after the window's end, want %+d", at.score-end, tc.plus)
						case n < 3 && (at.score-span[n-1][1] > 60 || at.score-span[n-1][0] < 60):
							t.Errorf("job %s is due %d..%d s after its run, want the backoff of 60", k, at.score-span[n-1][1], at.score-span[n-1][0])
						case at.attempts != 1:
							t.Errorf("job %s: attempts %d", k, at.attempts)
						}
					}
					if n := len(f.delayed()); n != 3 {
						t.Errorf("%d released, want 3", n)
					}
				})
			}
		}
	})
}

// throttleKeyOf is ThrottlesExceptions' default key of class on r (no displayName()).
func throttleKeyOf(class string, r laraq.Release) string {
	if !r.AtLeast(12, 0, 0) {
		return rdb.ThrottlesExceptionsPrefix + md5hex(class)
	}
	return rdb.ThrottlesExceptionsPrefix + php.XXH128(class)
}

type due struct{ score, attempts int64 }

// delayedByKey reads the :delayed set by the jobs' key property.
func delayedByKey(t *testing.T, f *fleet) map[string]due {
	t.Helper()
	out := map[string]due{}
	for member, score := range f.delayed() {
		env, err := payload.Parse([]byte(member))
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := phpser.DecodeString(env.Command)
		if err != nil {
			t.Fatal(err)
		}
		k, _ := cmd.Prop("key")
		out[k.Str()] = due{int64(score), env.Attempts}
	}
	return out
}

func openDB(file string) (*sql.DB, fdb.Dialect, string, error) {
	return fdb.OpenDB(context.Background(), "sqlite:"+file)
}

func sorted(s ...string) []string { sortStrings(s); return s }

func sortStrings(s []string) { sort.Strings(s) }
