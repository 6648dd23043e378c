package middleware_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/cache"
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
	mw "github.com/laraq/laraq/middleware"
)

// Example: two workers, one key. The second attempt while the first holds the lock is
// released for a minute; the lock is gone once the first is done.
func Example() {
	srv := miniredis.RunT(&testing.T{})
	client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	store, _ := rdb.NewRedisStore(client, client, rdb.CacheKeys{RedisPrefix: "laravel_database_", Prefix: "laravel_cache_"})
	// A worker puts its environment in its handlers' context once.
	ctx := mw.WithEnv(context.Background(), &mw.Env{Release: job.Release{Major: 11, Minor: 56}, Cache: store})
	info := &job.JobInfo{Class: `App\Jobs\SyncOrder`, Name: `App\Jobs\SyncOrder`, UUID: "u-1", Attempt: 1}
	guard := []job.Middleware{mw.WithoutOverlapping("order-7").ReleaseAfter(time.Minute).ExpireAfter(3 * time.Minute)}

	_ = mw.Run(ctx, info, guard, func(ctx context.Context) error {
		fmt.Println(srv.Keys())
		err := mw.Run(ctx, info, guard, func(context.Context) error { return nil })
		fmt.Println(err)
		return nil
	})
	fmt.Println(len(srv.Keys()), "keys")
	// Output:
	// [laravel_database_laravel_cache_laravel-queue-overlap:App\Jobs\SyncOrder:order-7]
	// WithoutOverlapping released the job for 1m0s
	// 0 keys
}

func TestRunOrder(t *testing.T) {
	var trail []string
	step := func(name string) job.Middleware {
		return job.MiddlewareFunc(func(ctx context.Context, _ *job.JobInfo, next job.Next) error {
			trail = append(trail, name+">")
			err := next(ctx)
			trail = append(trail, "<"+name)
			return err
		})
	}
	err := mw.Run(context.Background(), &job.JobInfo{}, []job.Middleware{step("a"), step("b")}, func(context.Context) error {
		trail = append(trail, "handler")
		return errors.New("boom")
	})
	if got := strings.Join(trail, " "); got != "a> b> handler <b <a" || err == nil || err.Error() != "boom" {
		t.Errorf("trail %q, err %v", got, err)
	}
	ran := false
	if err := mw.Run(context.Background(), &job.JobInfo{}, nil, func(context.Context) error { ran = true; return nil }); err != nil || !ran {
		t.Errorf("no middleware: ran %v, %v", ran, err)
	}
}

// TestNoEnv: outside a worker a Laravel middleware says it needs one, and the job is not
// run unguarded.
func TestNoEnv(t *testing.T) {
	for _, m := range []job.Middleware{mw.WithoutOverlapping("k"), mw.RateLimited("x"), mw.RateLimitedWithRedis("x"),
		mw.ThrottlesExceptions(1, time.Minute), mw.ThrottlesExceptionsWithRedis(1, time.Minute)} {
		ran := false
		err := mw.Run(context.Background(), &job.JobInfo{Class: "A"}, []job.Middleware{m}, func(context.Context) error { ran = true; return nil })
		if !errors.Is(err, mw.ErrNoEnv) || ran || !strings.HasPrefix(err.Error(), mw.Name(m)+" needs the worker's environment") {
			t.Errorf("%s: ran %v, err %v", mw.Name(m), ran, err)
		}
	}
}

// TestDecisionsNameTheirMiddleware: a decision is laraq's outcome error, wrapped in a
// MiddlewareDecision naming who took it; a skip is done.
func TestDecisionsNameTheirMiddleware(t *testing.T) {
	ctx := mw.WithEnv(context.Background(), &mw.Env{})
	for _, tc := range []struct {
		m       job.Middleware
		outcome job.Outcome
		delay   time.Duration
		text    string
	}{
		{mw.ReleaseWhen(true, 15*time.Second), job.OutcomeRelease, 15 * time.Second, "Release released the job for 15s"},
		{mw.SkipWhen(true), job.OutcomeDone, 0, "Skip skipped the job"},
		{mw.FailOnException(func(error) bool { return true }), job.OutcomeFail, 0, "FailOnException failed the job: boom"},
	} {
		err := mw.Run(ctx, &job.JobInfo{}, []job.Middleware{tc.m}, func(context.Context) error { return errors.New("boom") })
		var d *job.MiddlewareDecision
		if !errors.As(err, &d) || d.By != mw.Name(tc.m) || err.Error() != tc.text {
			t.Errorf("%s: %v", mw.Name(tc.m), err)
		}
		if o, delay := job.OutcomeOf(err); o != tc.outcome || delay != tc.delay {
			t.Errorf("%s: outcome %v %v, want %v %v", mw.Name(tc.m), o, delay, tc.outcome, tc.delay)
		}
	}
}

// TestUndefinedLimiter: a limiter the Go worker does not define stops the attempt with
// a clear error instead of running the job unlimited.
func TestUndefinedLimiter(t *testing.T) {
	ctx := mw.WithEnv(context.Background(), &mw.Env{Limiters: mw.NewLimiters()})
	ran := false
	err := mw.Run(ctx, &job.JobInfo{}, []job.Middleware{mw.RateLimited("emails")},
		func(context.Context) error { ran = true; return nil })
	var u *mw.UndefinedLimiterError
	if !errors.As(err, &u) || u.Name != "emails" || ran {
		t.Fatalf("ran %v, err %v", ran, err)
	}
}

// failingStore is a Redis store whose lock release fails.
type failingStore struct {
	cache.Store
}

func (failingStore) ReleaseLock(context.Context, string, string) (bool, error) {
	return false, errors.New("connection reset")
}

// TestOverlapReleaseFailure: the lock's release failing after the job ran is an error of
// the attempt (PHP's finally throws); after the rest decided an outcome, that outcome
// stays visible.
func TestOverlapReleaseFailure(t *testing.T) {
	srv := miniredis.RunT(t)
	client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	store, err := rdb.NewRedisStore(client, nil, rdb.CacheKeys{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := mw.WithEnv(context.Background(), &mw.Env{Cache: failingStore{store}})
	info := &job.JobInfo{Class: "A"}
	err = mw.Run(ctx, info, []job.Middleware{mw.WithoutOverlapping("k")}, func(context.Context) error { return nil })
	if o, _ := job.OutcomeOf(err); o != job.OutcomeRetry || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("ran, release failed: %v", err)
	}
	srv.FlushAll()
	err = mw.Run(ctx, info, []job.Middleware{mw.WithoutOverlapping("k"), mw.ReleaseWhen(true, 5*time.Second)},
		func(context.Context) error { return nil })
	if o, d := job.OutcomeOf(err); o != job.OutcomeRelease || d != 5*time.Second || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("released, release of the lock failed: %v", err)
	}
}

// TestNames: every middleware names itself as Laravel does, for events and logs.
func TestNames(t *testing.T) {
	for m, want := range map[job.Middleware]string{
		mw.WithoutOverlapping("k"):                      "WithoutOverlapping",
		mw.RateLimited("x"):                             "RateLimited",
		mw.RateLimitedWithRedis("x"):                    "RateLimitedWithRedis",
		mw.ThrottlesExceptions(1, time.Minute):          "ThrottlesExceptions",
		mw.ThrottlesExceptionsWithRedis(1, time.Minute): "ThrottlesExceptionsWithRedis",
		mw.SkipWhen(true):                               "Skip",
		mw.SkipIfBatchCancelled():                       "SkipIfBatchCancelled",
		mw.ReleaseWhen(true, 0):                         "Release",
		mw.FailOnException(nil):                         "FailOnException",
	} {
		if got := mw.Name(m); got != want {
			t.Errorf("Name = %q, want %q", got, want)
		}
	}
}

// ExampleSpecs: the middleware `laraq work --middleware` gives a class without Go type,
// and a limiter of --limiter, for WorkerConfig.ClassMiddleware and Limiters.
func ExampleSpecs() {
	specs := mw.NewSpecs()
	_ = specs.AddMiddleware(`App\Jobs\SyncOrder=without-overlapping:orderId,release-after=10;rate-limited:orders`)
	_ = specs.AddLimiter("orders=10/minute")
	for _, m := range specs.Classes[`App\Jobs\SyncOrder`] {
		fmt.Println(mw.Name(m))
	}
	fmt.Println(specs.Limiters.Has("orders"))
	fmt.Println(specs.AddMiddleware(`App\Jobs\SyncOrder=without-overlap:orderId`))
	// Output:
	// WithoutOverlapping
	// RateLimited
	// true
	// "App\\Jobs\\SyncOrder=without-overlap:orderId": unknown middleware "without-overlap" (want without-overlapping, rate-limited, rate-limited-with-redis, throttles-exceptions, throttles-exceptions-with-redis or skip-if-batch-cancelled)
}
