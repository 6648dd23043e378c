package middleware_test

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
)

// The parity suite through the workers (the root's parity method): one payload of
// App\Jobs\MiddlewareGuarded, dispatched by PHP, run once by Illuminate\Queue\Worker
// (work.php --once) and once by a laraq worker, each from the same seeded state under its
// own prefix and database, within one second of its own clock; then the outcome (the
// handler ran or not, the failed_jobs rows) and the whole state (every Redis key with its
// value and TTL, the queue's sets with each job's attempts, bytes and due time, the
// database store's rows) must be the same.

type fleetScenario struct {
	name     string // the middleware's name first: the release must ship it
	props    string // the job's properties
	through  string // ->through([...]) as a PHP expression
	database bool
	batch    bool // the job belongs to a cancelled batch
	seed     func(r laraq.Release) []seed
	want     string // what PHP's run must show (a part of the summary)
}

func fleetScenarios() []fleetScenario {
	lock := func(name string) func(laraq.Release) []seed {
		return func(laraq.Release) []seed { return []seed{overlapLock(name)} }
	}
	limit := rdb.RateLimitedKey("fleet", "fleet")
	limited := func(laraq.Release) []seed {
		return []seed{cacheKey("{c}"+limit, "3", 40), cacheKey("{c}"+limit+":timer", "{now+40}", 40)}
	}
	throttled := func(n string) func(r laraq.Release) []seed {
		return func(r laraq.Release) []seed {
			k := throttleKeyOf(guardedClass, r)
			return []seed{cacheKey("{c}"+k, n, 200), cacheKey("{c}"+k+":timer", "{now+200}", 200)}
		}
	}
	overlapName := `laravel-queue-overlap:App\Jobs\MiddlewareGuarded:K`
	return []fleetScenario{
		{name: "WithoutOverlapping/free", props: `"guard":"overlap"`, want: "ran=true gone"},
		{name: "WithoutOverlapping/held", props: `"guard":"overlap"`, seed: lock(overlapName), want: "ran=false delayed(attempts=1 at=+7)"},
		{name: "WithoutOverlapping/held, dontRelease", props: `"guard":"overlap-dont-release"`, seed: lock(overlapName), want: "ran=false gone"},
		{name: "RateLimited/fresh", props: `"guard":"limited"`, want: "ran=true gone"},
		{name: "RateLimited/exhausted", props: `"guard":"limited"`, seed: limited, want: "ran=false delayed(attempts=1 at=+43)"},
		{name: "RateLimited/exhausted, dontRelease", props: `"guard":"limited-dont-release"`, seed: limited, want: "ran=false gone"},
		{name: "RateLimitedWithRedis/exhausted", props: `"guard":"limited-redis"`, want: "ran=false delayed(attempts=1 at=+53)",
			seed: func(laraq.Release) []seed {
				return []seed{{Conn: "default", Key: limit, Hash: map[string]string{"start": "{now-10}", "end": "{now+50}", "count": "3"}, TTL: 120}}
			}},
		{name: "ThrottlesExceptions/an exception", props: `"guard":"throttled","throw":true`, want: "ran=true delayed(attempts=1 at=+60)"},
		{name: "ThrottlesExceptions/too many", props: `"guard":"throttled","throw":true`, seed: throttled("2"), want: "ran=false delayed(attempts=1 at=+203)"},
		{name: "ThrottlesExceptions/cleared", props: `"guard":"throttled"`, seed: throttled("1"), want: "ran=true gone"},
		{name: "ThrottlesExceptionsWithRedis/an exception", props: `"guard":"throttled-redis","throw":true`, want: "ran=true delayed(attempts=1 at=+60)"},
		{name: "Skip", props: `"guard":"skip"`, want: "ran=false gone"},
		{name: "SkipIfBatchCancelled", props: `"guard":"batch-cancelled"`, batch: true, want: "ran=false gone"},
		{name: "FailOnException", props: `"guard":"fail-on-exception","throw":true`,
			want: `ran=true gone failed=["RuntimeException: boom"]`},
		{name: "Release", props: `"guard":"release"`, want: "ran=false delayed(attempts=1 at=+15)"},
		{name: "WithoutOverlapping/through, held", props: `"key":"acct"`, through: "[(new WithoutOverlapping('acct'))->releaseAfter(9)]",
			seed: lock(`laravel-queue-overlap:App\Jobs\MiddlewareGuarded:acct`), want: "ran=false delayed(attempts=1 at=+9)"},
		{name: "WithoutOverlapping/database, held", props: `"guard":"overlap"`, database: true, want: "ran=false delayed(attempts=1 at=+7)",
			seed: func(laraq.Release) []seed {
				return []seed{{Table: "cache_locks", Key: "{c}" + overlapName, Owner: sp("php-worker-lock1"), Expire: "{now+100}"}}
			}},
		{name: "RateLimited/database, exhausted", props: `"guard":"limited"`, database: true, want: "ran=false delayed(attempts=1 at=+43)",
			seed: func(laraq.Release) []seed {
				return []seed{{Table: "cache", Key: "{c}" + limit, Value: sp("i:3;"), Expire: "{now+40}"},
					{Table: "cache", Key: "{c}" + limit + ":timer", Value: sp("i:{now+40};"), Expire: "{now+40}"}}
			}},
		{name: "ThrottlesExceptions/database, an exception", props: `"guard":"throttled","throw":true`, database: true, want: "ran=true delayed(attempts=1 at=+60)"},
	}
}

// TestFleetParityWithPHP: every middleware the release ships, run once by PHP's worker
// and once by laraq's on the same job from the same state, leaves the same outcome and
// state.
func TestFleetParityWithPHP(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		rel := releaseOf(t, major)
		for _, sc := range fleetScenarios() {
			t.Run(sc.name, func(t *testing.T) {
				name, _, _ := strings.Cut(sc.name, "/")
				needMiddleware(t, rel, name)
				props := `"key":"K",` + sc.props
				if sc.batch {
					props += `,"batchId":"batch-1"`
				}
				req := strings.TrimSuffix(guardedJob(props), "}")
				if sc.through != "" {
					req += `,"through":` + jsonString(sc.through)
				}
				job := newFleet(t, srv, major, false).dispatch(req + "}")[0]
				phpOut, phpState := fleetRun(t, srv, major, sc, job, "php")
				if !strings.Contains(phpOut, sc.want) {
					t.Fatalf("PHP: %s; the scenario wants %s", phpOut, sc.want)
				}
				if testing.Verbose() {
					t.Logf("PHP: %s%s", phpOut, showDump(phpState))
				}
				goOut, goState := fleetRun(t, srv, major, sc, job, "go")
				if goOut != phpOut {
					t.Errorf("outcome\n  PHP: %s\n   Go: %s", phpOut, goOut)
				}
				if !sameDump(phpState, goState) {
					t.Errorf("state\n  PHP: %s\n   Go: %s", showDump(phpState), showDump(goState))
				}
			})
		}
	})
}

// fleetRun runs the job once by lang on a fresh fleet seeded as the scenario says, and
// returns the outcome and the state relative to the second it ran in.
func fleetRun(t *testing.T, srv *testenv.Redis, major int, sc fleetScenario, job, lang string) (string, map[string]string) {
	t.Helper()
	for try := 0; ; try++ {
		f := newFleet(t, srv, major, sc.database)
		if sc.batch {
			f.exec(`insert into job_batches (id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, cancelled_at, created_at)
				values ('batch-1', '', 1, 1, 0, '[]', 'a:0:{}', ?, ?)`, time.Now().Unix(), time.Now().Unix())
		}
		var seeds []seed
		if sc.seed != nil {
			seeds = sc.seed(f.rel)
		}
		for i := range seeds {
			c := storePrefix(major)
			if seeds[i].Table != "" {
				c = cachePrefix
			}
			seeds[i].Key = strings.ReplaceAll(seeds[i].Key, "{c}", c)
		}
		before := time.Now().Unix()
		seedGo(t, srv, f.side, seeds, before)
		f.push(job)
		if lang == "php" {
			f.phpOnce()
		} else {
			f.goOnce(laraq.WorkerConfig{})
		}
		if after := time.Now().Unix(); after != before && try < 5 {
			continue
		}
		state := dumpSide(t, srv, f.side, before)
		out := fmt.Sprintf("ran=%v", len(f.ran()) > 0)
		where := "gone"
		for k, v := range state {
			if m := delayedJob.FindStringSubmatch(v); m != nil && strings.HasSuffix(k, "queues:default:delayed") {
				where = fmt.Sprintf("delayed(attempts=%s at=%s)", m[1], m[2])
			}
		}
		out += " " + where
		if left := f.left(); left != "" {
			out += " " + left
		}
		if rows := f.failedRows(); len(rows) > 0 {
			out += fmt.Sprintf(" failed=%q", rows)
		}
		return out, state
	}
}

var delayedJob = regexp.MustCompile(`^zset\{job\(attempts=(\d+) bytes=\w+\) at=\{now([+-]\d+)\}\}$`)

func jsonString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// TestFleetRoundTripsMatchPHP: through the workers, a middleware sends the Redis
// commands on its keys PHP's sends for it, as many of each, no more (MONITOR on a server
// of its own; EVALSHA counted as EVAL, the scripts loaded at the worker's start as a
// running PHP worker has them cached in Redis): the scenarios of TestFleetParityWithPHP
// on the Redis store.
func TestFleetRoundTripsMatchPHP(t *testing.T) {
	markers := []string{"laravel-queue-overlap:", rdb.RateLimitedKey("fleet", "fleet"), rdb.ThrottlesExceptionsPrefix}
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		srv, mon, c := monitoredServer(t)
		rel := releaseOf(t, major)
		for _, sc := range fleetScenarios() {
			if sc.database || sc.batch {
				continue
			}
			t.Run(sc.name, func(t *testing.T) {
				name, _, _ := strings.Cut(sc.name, "/")
				needMiddleware(t, rel, name)
				req := strings.TrimSuffix(guardedJob(`"key":"K",`+sc.props), "}")
				if sc.through != "" {
					req += `,"through":` + jsonString(sc.through)
				}
				job := newFleet(t, srv, major, false).dispatch(req + "}")[0]
				trips := map[string]string{}
				for _, lang := range []string{"php", "go"} {
					f := newFleet(t, srv, major, false)
					var seeds []seed
					if sc.seed != nil {
						seeds = sc.seed(rel)
					}
					for i := range seeds {
						seeds[i].Key = strings.ReplaceAll(seeds[i].Key, "{c}", storePrefix(major))
					}
					seedGo(t, srv, f.side, seeds, time.Now().Unix())
					f.push(job)
					mon.take(t, c, nil)
					if lang == "php" {
						f.phpOnce()
					} else {
						f.goOnce(laraq.WorkerConfig{})
					}
					trips[lang] = strings.Join(mon.take(t, c, func(line string) bool {
						if !strings.Contains(line, f.side.prefix) {
							return false
						}
						for _, m := range markers {
							if strings.Contains(line, m) {
								return true
							}
						}
						return false
					}), " ")
				}
				stateless := name == "Skip" || name == "FailOnException" || name == "Release"
				if trips["php"] == "" && !stateless || trips["go"] != trips["php"] {
					t.Errorf("round trips on the middleware's keys\n  PHP: %s\n   Go: %s", trips["php"], trips["go"])
				}
				if testing.Verbose() {
					t.Logf("round trips: %s", trips["go"])
				}
			})
		}
	})
}
