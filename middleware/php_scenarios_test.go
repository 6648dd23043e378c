package middleware_test

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/internal/rdb"
	mw "github.com/laraq/laraq/middleware"
)

func since(major, minor, patch int) func(job.Release) bool {
	return func(r job.Release) bool { return r.AtLeast(major, minor, patch) }
}

func list(ms ...job.Middleware) []job.Middleware { return ms }

var (
	plainJob = probe{Class: probeClass, UUID: "0b6e1a52-5b0c-4a57-9d0a-2f1c1e9b7a11", Attempts: 1}
	namedJob = probe{Class: namedClass, Display: "Sync order", UUID: "5f0a7c1e-0d2b-4e8a-8c4f-6a1b9e3d2c77", Attempts: 2}
)

// overlapLock is WithoutOverlapping's lock, on the lock connection ('default').
func overlapLock(name string) seed {
	return seed{Conn: "default", Key: "{c}" + name, String: sp("php-worker-lock1"), TTL: 100}
}

func md5hex(s string) string {
	sum := md5.Sum([]byte(s))
	return hex.EncodeToString(sum[:])
}

// throttleKey is ThrottlesExceptions' default key of the plain probe on r.
func throttleKey(r job.Release) string {
	if !r.AtLeast(12, 0, 0) {
		return rdb.ThrottlesExceptionsPrefix + md5hex(probeClass)
	}
	return rdb.ThrottlesExceptionsPrefix + php.XXH128(probeClass)
}

// throttles is `new ThrottlesExceptions(2, 300 seconds)` as each release spells it.
func throttles(class string) func(r job.Release) string {
	return func(r job.Release) string {
		if r.AtLeast(11, 0, 0) {
			return "(new " + class + "(2, 300))"
		}
		return "(new " + class + "(2, 5))"
	}
}

func isBoom(err error) bool { return err != nil && err.Error() == "boom" }

// scenarios are the attempts TestParityWithPHP runs on each release that ships them.
func scenarios() []scenario {
	rlProbe := map[string]string{"probe": "fn ($job) => [Limit::perMinute(2)->by('a'), Limit::perHour(5)->by('b')]"}
	goProbe := func(l *mw.Limiters) {
		l.For("probe", func(*job.JobInfo) []mw.Limit { return []mw.Limit{mw.PerMinute(2).By("a"), mw.PerHour(5).By("b")} })
	}
	keyA, keyB := rdb.RateLimitedKey("probe", "a"), rdb.RateLimitedKey("probe", "b")
	out := []scenario{{
		name: "WithoutOverlapping/free lock: runs and releases the lock",
		php:  "[(new WithoutOverlapping('order-7'))->expireAfter(180)]",
		goMW: func(*mw.Env) []job.Middleware {
			return list(mw.WithoutOverlapping("order-7").ExpireAfter(180 * time.Second))
		},
		job: plainJob, handler: "ok", decoded: true, want: "ran=true",
	}, {
		name: "WithoutOverlapping/held lock: released for releaseAfter",
		php:  "[(new WithoutOverlapping('order-7'))->releaseAfter(30)]",
		goMW: func(*mw.Env) []job.Middleware {
			return list(mw.WithoutOverlapping("order-7").ReleaseAfter(30 * time.Second))
		},
		job: plainJob, handler: "ok", decoded: true, want: "released=30",
		seed: []seed{overlapLock(`laravel-queue-overlap:App\Jobs\MiddlewareProbe:order-7`)},
	}, {
		name: "WithoutOverlapping/held lock, an int key: dontRelease completes without running",
		php:  "[(new WithoutOverlapping(42))->dontRelease()]",
		goMW: func(*mw.Env) []job.Middleware { return list(mw.WithoutOverlapping("42").DontRelease()) },
		job:  plainJob, handler: "ok", decoded: true, want: "ran=false",
		seed: []seed{overlapLock(`laravel-queue-overlap:App\Jobs\MiddlewareProbe:42`)},
	}, {
		name:  "WithoutOverlapping/shared key held by another class",
		ships: since(9, 32, 0),
		php:   "[(new WithoutOverlapping('acct-1'))->shared()->releaseAfter(5)]",
		goMW: func(*mw.Env) []job.Middleware {
			return list(mw.WithoutOverlapping("acct-1").Shared().ReleaseAfter(5 * time.Second))
		},
		job: plainJob, handler: "ok", decoded: true, want: "released=5",
		seed: []seed{overlapLock("laravel-queue-overlap:acct-1")},
	}, {
		name: "WithoutOverlapping/own prefix, a class with displayName(): its lock held",
		php:  "[(new WithoutOverlapping('k'))->withPrefix('overlap:')->releaseAfter(12)]",
		goMW: func(*mw.Env) []job.Middleware {
			return list(mw.WithoutOverlapping("k").WithPrefix("overlap:").ReleaseAfter(12 * time.Second))
		},
		job: namedJob, handler: "ok", decoded: true, want: "released=12",
		seedFor: func(r job.Release) []seed {
			name := namedClass
			if r.AtLeast(12, 54, 0) {
				name = php.XXH128("Sync order")
			} else if r.AtLeast(12, 41, 0) {
				name = "Sync order"
			}
			return []seed{overlapLock("overlap:" + name + ":k")}
		},
	}, {
		name: "WithoutOverlapping/the handler throws: the lock is released all the same",
		php:  "[new WithoutOverlapping('order-7')]",
		goMW: func(*mw.Env) []job.Middleware { return list(mw.WithoutOverlapping("order-7")) },
		job:  plainJob, handler: "throw", decoded: true, want: `exception="boom"`,
	}, {
		name: "RateLimited/fresh limits are counted",
		php:  "[new RateLimited('probe')]", limiters: rlProbe, goLim: goProbe,
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimited("probe")) },
		job:  plainJob, handler: "ok", decoded: true, want: "ran=true",
	}, {
		name: "RateLimited/an exhausted limit with its window releases until the window ends + 3",
		php:  "[new RateLimited('probe')]", limiters: rlProbe, goLim: goProbe,
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimited("probe")) },
		job:  plainJob, handler: "ok", decoded: true, want: "released=43",
		seed: []seed{cacheKey("{c}"+keyA, "2", 40), cacheKey("{c}"+keyA+":timer", "{now+40}", 40)},
	}, {
		name: "RateLimited/a full counter without window starts over",
		php:  "[new RateLimited('probe')]", limiters: rlProbe, goLim: goProbe,
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimited("probe")) },
		job:  plainJob, handler: "ok", want: "ran=true",
		seed: []seed{cacheKey("{c}"+keyA, "2", 40)},
	}, {
		name: "RateLimited/the second limit refuses after the first counted",
		php:  "[new RateLimited('probe')]", limiters: rlProbe, goLim: goProbe,
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimited("probe")) },
		job:  plainJob, handler: "ok", want: "released=1803",
		seed: []seed{cacheKey("{c}"+keyB, "5", 1800), cacheKey("{c}"+keyB+":timer", "{now+1800}", 1800)},
	}, {
		name: "RateLimited/dontRelease completes a limited job without running",
		php:  "[(new RateLimited('probe'))->dontRelease()]", limiters: rlProbe, goLim: goProbe,
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimited("probe").DontRelease()) },
		job:  plainJob, handler: "ok", decoded: true, want: "ran=false",
		seed: []seed{cacheKey("{c}"+keyA, "3", 40), cacheKey("{c}"+keyA+":timer", "{now+40}", 40)},
	}, {
		name:     "RateLimited/two limits with the same key",
		php:      "[new RateLimited('same')]",
		limiters: map[string]string{"same": "fn ($job) => [Limit::perMinute(3), Limit::perDay(100)]"},
		goLim: func(l *mw.Limiters) {
			l.For("same", func(*job.JobInfo) []mw.Limit { return []mw.Limit{mw.PerMinute(3), mw.PerDay(100)} })
		},
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimited("same")) },
		job:  plainJob, handler: "ok", want: "ran=true",
	}, {
		name:     "RateLimited/unlimited",
		php:      "[new RateLimited('free')]",
		limiters: map[string]string{"free": "fn ($job) => Limit::none()"},
		goLim:    func(l *mw.Limiters) { l.For("free", func(*job.JobInfo) []mw.Limit { return nil }) },
		goMW:     func(*mw.Env) []job.Middleware { return list(mw.RateLimited("free")) },
		job:      plainJob, handler: "ok", want: "ran=true",
	}, {
		name:     "RateLimited/per second",
		ships:    since(11, 0, 0),
		php:      "[new RateLimited('fast')]",
		limiters: map[string]string{"fast": "fn ($job) => Limit::perSecond(1)->by('x')"},
		goLim: func(l *mw.Limiters) {
			l.For("fast", func(*job.JobInfo) []mw.Limit { return []mw.Limit{mw.PerSecond(1).By("x")} })
		},
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimited("fast")) },
		job:  plainJob, handler: "ok", want: "ran=true",
	}, {
		name:  "RateLimited/releaseAfter replaces the window's delay",
		ships: since(12, 13, 0),
		php:   "[(new RateLimited('probe'))->releaseAfter(7)]", limiters: rlProbe, goLim: goProbe,
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimited("probe").ReleaseAfter(7 * time.Second)) },
		// ->through() loses releaseAfter before 13.18 (RateLimited::__sleep): decoded
		// runs compare with PHP's unserialized object, whichever release.
		job: plainJob, handler: "ok", decoded: true, want: "released=7",
		seed: []seed{cacheKey("{c}"+keyA, "2", 40), cacheKey("{c}"+keyA+":timer", "{now+40}", 40)},
	}, {
		name: "RateLimitedWithRedis/fresh windows",
		php:  "[new RateLimitedWithRedis('probe')]", limiters: rlProbe, goLim: goProbe,
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimitedWithRedis("probe")) },
		job:  plainJob, handler: "ok", decoded: true, want: "ran=true",
	}, {
		name: "RateLimitedWithRedis/a full window releases until its end + 3, counting the refusal",
		php:  "[new RateLimitedWithRedis('probe')]", limiters: rlProbe, goLim: goProbe,
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimitedWithRedis("probe")) },
		job:  plainJob, handler: "ok", decoded: true, want: "released=53",
		seed: []seed{{Conn: "default", Key: keyA, Hash: map[string]string{"start": "{now-10}", "end": "{now+50}", "count": "2"}, TTL: 120}},
	}, {
		name: "RateLimitedWithRedis/an expired window starts over",
		php:  "[(new RateLimitedWithRedis('probe'))->dontRelease()]", limiters: rlProbe, goLim: goProbe,
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimitedWithRedis("probe").DontRelease()) },
		job:  plainJob, handler: "ok", decoded: true, want: "ran=true",
		seed: []seed{{Conn: "default", Key: keyA, Hash: map[string]string{"start": "{now-100}", "end": "{now-40}", "count": "9"}, TTL: 20}},
	}}
	out = append(out, throttleScenarios()...)
	out = append(out, smallScenarios()...)
	return append(out, databaseScenarios(rlProbe, goProbe)...)
}

func throttleScenarios() []scenario {
	te := throttles("ThrottlesExceptions")
	ter := throttles("ThrottlesExceptionsWithRedis")
	goTE := func() *mw.ThrottlesExceptionsMiddleware { return mw.ThrottlesExceptions(2, 300*time.Second) }
	goTER := func() *mw.ThrottlesExceptionsMiddleware { return mw.ThrottlesExceptionsWithRedis(2, 300*time.Second) }
	counted := func(r job.Release) []seed {
		return []seed{cacheKey("{c}"+throttleKey(r), "2", 200), cacheKey("{c}"+throttleKey(r)+":timer", "{now+200}", 200)}
	}
	return []scenario{{
		name:   "ThrottlesExceptions/an exception is counted and the job released for the backoff",
		phpFor: func(r job.Release) string { return "[" + te(r) + "->backoff(1)]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTE().Backoff(time.Minute)) },
		job:    plainJob, handler: "throw", decoded: true, want: "released=60",
	}, {
		name:   "ThrottlesExceptions/too many: released until the window ends + 3, not run",
		phpFor: func(r job.Release) string { return "[" + te(r) + "]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTE()) },
		job:    plainJob, handler: "throw", decoded: true, want: "ran=false released=203", seedFor: counted,
	}, {
		name:   "ThrottlesExceptions/a run without exception clears the count",
		phpFor: func(r job.Release) string { return "[" + te(r) + "]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTE()) },
		job:    plainJob, handler: "ok", want: "ran=true",
		seedFor: func(r job.Release) []seed {
			return []seed{cacheKey("{c}"+throttleKey(r), "1", 200), cacheKey("{c}"+throttleKey(r)+":timer", "{now+200}", 200)}
		},
	}, {
		name:   "ThrottlesExceptions/the handler's own release is no exception",
		phpFor: func(r job.Release) string { return "[" + te(r) + "]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTE()) },
		job:    plainJob, handler: "release:9", want: "released=9",
		seedFor: func(r job.Release) []seed {
			return []seed{cacheKey("{c}"+throttleKey(r), "1", 200), cacheKey("{c}"+throttleKey(r)+":timer", "{now+200}", 200)}
		},
	}, {
		name: "ThrottlesExceptions/when() lets other exceptions through uncounted",
		phpFor: func(r job.Release) string {
			return "[" + te(r) + "->when(fn ($e) => $e instanceof RuntimeException)]"
		},
		goMW: func(*mw.Env) []job.Middleware { return list(goTE().When(isBoom)) },
		job:  plainJob, handler: "throw-logic", want: `exception="nope"`,
	}, {
		name:   "ThrottlesExceptions/by() a key with characters the RateLimiter cleans",
		phpFor: func(r job.Release) string { return "[" + te(r) + "->by('café&co')]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTE().By("café&co")) },
		job:    plainJob, handler: "throw", decoded: true, want: "released=0",
	}, {
		// cleanRateLimiterKey turns "'" into &#039;, which a second cleaning changes again:
		// before 9.14 tooManyAttempts read the counter under that twice-cleaned key, so a
		// full counter written by hit() was never seen.
		name:   "ThrottlesExceptions/by() a key with an apostrophe",
		phpFor: func(r job.Release) string { return "[" + te(r) + "->by(\"o'clock\")]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTE().By("o'clock")) },
		job:    plainJob, handler: "throw", decoded: true,
		wantFor: func(r job.Release) string {
			if r.AtLeast(9, 14, 0) {
				return "ran=false released=203"
			}
			return "ran=true released=0"
		},
		seed: []seed{cacheKey("{c}laravel_throttles_exceptions:o&#039;clock", "2", 200),
			cacheKey("{c}laravel_throttles_exceptions:o&#039;clock:timer", "{now+200}", 200)},
	}, {
		// clear() cleans the key twice in every release: the counter of such a key
		// survives a run without exception, only its window goes.
		name:   "ThrottlesExceptions/a run without exception under a key with an apostrophe",
		phpFor: func(r job.Release) string { return "[" + te(r) + "->by(\"o'clock\")]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTE().By("o'clock")) },
		job:    plainJob, handler: "ok", want: "ran=true",
		seed: []seed{cacheKey("{c}laravel_throttles_exceptions:o&#039;clock", "1", 200),
			cacheKey("{c}laravel_throttles_exceptions:o&#039;clock:timer", "{now+200}", 200)},
	}, {
		name:   "ThrottlesExceptions/byJob counts per uuid",
		phpFor: func(r job.Release) string { return "[" + te(r) + "->byJob()->withPrefix('te:')]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTE().ByJob().WithPrefix("te:")) },
		job:    plainJob, handler: "throw", decoded: true, want: "released=0",
	}, {
		name:   "ThrottlesExceptions/a class with displayName()",
		phpFor: func(r job.Release) string { return "[" + te(r) + "]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTE()) },
		job:    namedJob, handler: "throw", decoded: true, want: "released=0",
	}, {
		name:   "ThrottlesExceptions/report()",
		ships:  since(11, 3, 0),
		phpFor: func(r job.Release) string { return "[" + te(r) + "->report()]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTE().Report(nil)) },
		job:    plainJob, handler: "throw", want: `reported=["boom"]`,
	}, {
		name:   "ThrottlesExceptions/deleteWhen()",
		ships:  since(12, 14, 0),
		phpFor: func(r job.Release) string { return "[" + te(r) + "->deleteWhen(RuntimeException::class)]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTE().DeleteWhen(isBoom)) },
		job:    plainJob, handler: "throw", want: "deleted",
	}, {
		name:   "ThrottlesExceptions/failWhen()",
		ships:  since(12, 20, 0),
		phpFor: func(r job.Release) string { return "[" + te(r) + "->failWhen(fn ($e) => $e->getMessage() === 'boom')]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTE().FailWhen(isBoom)) },
		job:    plainJob, handler: "throw", want: `failed="boom"`,
	}, {
		name:   "ThrottlesExceptionsWithRedis/an exception takes a slot and releases for the backoff",
		phpFor: func(r job.Release) string { return "[" + ter(r) + "->backoff(2)]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTER().Backoff(2 * time.Minute)) },
		job:    plainJob, handler: "throw", decoded: true, want: "released=120",
	}, {
		name:   "ThrottlesExceptionsWithRedis/too many: released until the window ends",
		phpFor: func(r job.Release) string { return "[" + ter(r) + "]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTER()) },
		job:    plainJob, handler: "throw", decoded: true, want: "ran=false released=150",
		seedFor: func(r job.Release) []seed {
			return []seed{{Conn: "default", Key: throttleKey(r), Hash: map[string]string{"start": "{now-150}", "end": "{now+150}", "count": "2"}, TTL: 450}}
		},
	}, {
		name:   "ThrottlesExceptionsWithRedis/a run without exception clears the window",
		phpFor: func(r job.Release) string { return "[" + ter(r) + "]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(goTER()) },
		job:    plainJob, handler: "ok", want: "ran=true",
		seedFor: func(r job.Release) []seed {
			return []seed{{Conn: "default", Key: throttleKey(r), Hash: map[string]string{"start": "{now-150}", "end": "{now+150}", "count": "1"}, TTL: 450}}
		},
	}}
}

func smallScenarios() []scenario {
	return []scenario{{
		name:  "Skip/when true completes without running",
		ships: since(11, 23, 0),
		php:   "[Skip::when(true)]",
		goMW:  func(*mw.Env) []job.Middleware { return list(mw.SkipWhen(true)) },
		job:   plainJob, handler: "ok", decoded: true, want: "ran=false",
	}, {
		name:  "Skip/unless true runs",
		ships: since(11, 23, 0),
		php:   "[Skip::unless(true)]",
		goMW:  func(*mw.Env) []job.Middleware { return list(mw.SkipUnless(true)) },
		job:   plainJob, handler: "ok", decoded: true, want: "ran=true",
	}, {
		name:  "SkipIfBatchCancelled/a cancelled batch",
		ships: since(9, 49, 0),
		php:   "[new SkipIfBatchCancelled]",
		goMW:  func(*mw.Env) []job.Middleware { return list(mw.SkipIfBatchCancelled()) },
		job:   probe{Class: probeClass, UUID: "u-b1", Attempts: 1, Batch: "cancelled"}, handler: "ok", decoded: true, want: "ran=false",
	}, {
		name:  "SkipIfBatchCancelled/a running batch",
		ships: since(9, 49, 0),
		php:   "[new SkipIfBatchCancelled]",
		goMW:  func(*mw.Env) []job.Middleware { return list(mw.SkipIfBatchCancelled()) },
		job:   probe{Class: probeClass, UUID: "u-b2", Attempts: 1, Batch: "active"}, handler: "ok", decoded: true, want: "ran=true",
	}, {
		name:  "FailOnException/a listed exception fails the job",
		ships: since(12, 19, 0),
		php:   "[new FailOnException([RuntimeException::class])]",
		goMW: func(*mw.Env) []job.Middleware {
			return list(mw.FailOnException(isBoom))
		},
		job: plainJob, handler: "throw", want: `failed="boom" exception="boom"`,
	}, {
		name:  "FailOnException/another exception goes to the worker",
		ships: since(12, 19, 0),
		php:   "[new FailOnException([RuntimeException::class])]",
		goMW: func(*mw.Env) []job.Middleware {
			return list(mw.FailOnException(func(err error) bool { return !errors.Is(err, errLogic) && isBoom(err) }))
		},
		job: plainJob, handler: "throw-logic", want: `exception="nope"`,
	}, {
		name:  "Release/when true releases without running",
		ships: since(13, 18, 1),
		php:   "[Release::when(true, 15)]",
		goMW:  func(*mw.Env) []job.Middleware { return list(mw.ReleaseWhen(true, 15*time.Second)) },
		job:   plainJob, handler: "ok", decoded: true, want: "ran=false released=15",
	}, {
		name:  "Release/unless true runs",
		ships: since(13, 18, 1),
		php:   "[Release::unless(true, 15)]",
		goMW:  func(*mw.Env) []job.Middleware { return list(mw.ReleaseUnless(true, 15*time.Second)) },
		job:   plainJob, handler: "ok", decoded: true, want: "ran=true",
	}, {
		name:     "pipeline/middleware run in order, the first outermost",
		php:      "[(new WithoutOverlapping('order-7'))->releaseAfter(4), new RateLimited('one')]",
		limiters: map[string]string{"one": "fn ($job) => Limit::perMinute(1)"},
		goLim: func(l *mw.Limiters) {
			l.For("one", func(*job.JobInfo) []mw.Limit { return []mw.Limit{mw.PerMinute(1)} })
		},
		goMW: func(*mw.Env) []job.Middleware {
			return list(mw.WithoutOverlapping("order-7").ReleaseAfter(4*time.Second), mw.RateLimited("one"))
		},
		job: plainJob, handler: "ok", decoded: true, want: "ran=false released=4",
		seed: []seed{overlapLock(`laravel-queue-overlap:App\Jobs\MiddlewareProbe:order-7`)},
	}}
}

// databaseScenarios are the same middleware on the database cache store (the default
// store from the 11.x skeleton).
func databaseScenarios(rlProbe map[string]string, goProbe func(*mw.Limiters)) []scenario {
	keyA := rdb.RateLimitedKey("probe", "a")
	te := throttles("ThrottlesExceptions")
	return []scenario{{
		name: "database/WithoutOverlapping: free lock",
		php:  "[(new WithoutOverlapping('order-7'))->expireAfter(180)]",
		goMW: func(*mw.Env) []job.Middleware {
			return list(mw.WithoutOverlapping("order-7").ExpireAfter(180 * time.Second))
		},
		job: plainJob, handler: "ok", database: true, want: "ran=true",
	}, {
		name: "database/WithoutOverlapping: held lock",
		php:  "[(new WithoutOverlapping('order-7'))->releaseAfter(30)]",
		goMW: func(*mw.Env) []job.Middleware {
			return list(mw.WithoutOverlapping("order-7").ReleaseAfter(30 * time.Second))
		},
		job: plainJob, handler: "ok", database: true, decoded: true, want: "released=30",
		seed: []seed{{Table: "cache_locks", Key: `{c}laravel-queue-overlap:App\Jobs\MiddlewareProbe:order-7`, Owner: sp("php-worker-lock1"), Expire: "{now+100}"}},
	}, {
		name: "database/RateLimited: fresh limits",
		php:  "[new RateLimited('probe')]", limiters: rlProbe, goLim: goProbe,
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimited("probe")) },
		job:  plainJob, handler: "ok", database: true, want: "ran=true",
	}, {
		name: "database/RateLimited: exhausted",
		php:  "[new RateLimited('probe')]", limiters: rlProbe, goLim: goProbe,
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimited("probe")) },
		job:  plainJob, handler: "ok", database: true, want: "released=43",
		seed: []seed{{Table: "cache", Key: "{c}" + keyA, Value: sp("i:2;"), Expire: "{now+40}"},
			{Table: "cache", Key: "{c}" + keyA + ":timer", Value: sp("i:{now+40};"), Expire: "{now+40}"}},
	}, {
		name: "database/RateLimited: an expired counter row",
		php:  "[new RateLimited('probe')]", limiters: rlProbe, goLim: goProbe,
		goMW: func(*mw.Env) []job.Middleware { return list(mw.RateLimited("probe")) },
		job:  plainJob, handler: "ok", database: true, want: "ran=true",
		seed: []seed{{Table: "cache", Key: "{c}" + keyA, Value: sp("i:2;"), Expire: "{now-5}"}},
	}, {
		name: "database/WithoutOverlapping in the database, RateLimited in Redis (cache.limiter)",
		php:  "[new WithoutOverlapping('order-7'), new RateLimited('probe')]", limiters: rlProbe, goLim: goProbe,
		goMW: func(*mw.Env) []job.Middleware { return list(mw.WithoutOverlapping("order-7"), mw.RateLimited("probe")) },
		job:  plainJob, handler: "ok", database: true, limiterStore: "redis", decoded: true, want: "ran=true",
	}, {
		name:   "database/ThrottlesExceptions: counted",
		phpFor: func(r job.Release) string { return "[" + te(r) + "->backoff(1)]" },
		goMW: func(*mw.Env) []job.Middleware {
			return list(mw.ThrottlesExceptions(2, 300*time.Second).Backoff(time.Minute))
		},
		job: plainJob, handler: "throw", database: true, want: "released=60",
	}, {
		name:   "database/ThrottlesExceptions: cleared",
		phpFor: func(r job.Release) string { return "[" + te(r) + "]" },
		goMW:   func(*mw.Env) []job.Middleware { return list(mw.ThrottlesExceptions(2, 300*time.Second)) },
		job:    plainJob, handler: "ok", database: true, want: "ran=true",
		seedFor: func(r job.Release) []seed {
			return []seed{{Table: "cache", Key: "{c}" + throttleKey(r), Value: sp("i:1;"), Expire: "{now+200}"},
				{Table: "cache", Key: "{c}" + throttleKey(r) + ":timer", Value: sp("i:{now+200};"), Expire: "{now+200}"}}
		},
	}}
}
