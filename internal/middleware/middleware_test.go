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
	mw "github.com/laraq/laraq/internal/middleware"
	"github.com/laraq/laraq/internal/rdb"
)

// Example: two workers, one key. The second attempt while the first holds the lock is
// released for a minute; the lock is gone once the first is done.
func Example() {
	ctx := context.Background()
	srv := miniredis.RunT(&testing.T{})
	client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	store, _ := rdb.NewRedisStore(client, client, rdb.CacheKeys{RedisPrefix: "laravel_database_", Prefix: "laravel_cache_"})
	env := &mw.Env{Release: mw.Release{Major: 11, Minor: 56}, Cache: store, Limiters: mw.NewLimiters()}
	job := &mw.Job{Class: `App\Jobs\SyncOrder`, UUID: "u-1", Attempts: 1, Env: env}
	guard := []mw.Middleware{mw.WithoutOverlapping("order-7").ReleaseAfter(time.Minute).ExpireAfter(3 * time.Minute)}

	_ = mw.Run(ctx, job, guard, func(ctx context.Context) error {
		fmt.Println(srv.Keys())
		err := mw.Run(ctx, job, guard, func(context.Context) error { return nil })
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
	step := func(name string) mw.Middleware {
		return mw.Func(func(ctx context.Context, job *mw.Job, next mw.Next) error {
			trail = append(trail, name+">")
			err := next(ctx)
			trail = append(trail, "<"+name)
			return err
		})
	}
	err := mw.Run(context.Background(), &mw.Job{}, []mw.Middleware{step("a"), step("b")}, func(context.Context) error {
		trail = append(trail, "handler")
		return errors.New("boom")
	})
	if got := strings.Join(trail, " "); got != "a> b> handler <b <a" || err == nil || err.Error() != "boom" {
		t.Errorf("trail %q, err %v", got, err)
	}
	ran := false
	if err := mw.Run(context.Background(), &mw.Job{}, nil, func(context.Context) error { ran = true; return nil }); err != nil || !ran {
		t.Errorf("no middleware: ran %v, %v", ran, err)
	}
}

func TestReleaseAtLeast(t *testing.T) {
	for _, tc := range []struct {
		r    mw.Release
		v    [3]int
		want bool
	}{
		{mw.Release{}, [3]int{13, 18, 1}, true}, // zero: the newest
		{mw.Release{Major: 12, Minor: 1 << 30}, [3]int{12, 54, 0}, true},
		{mw.Release{Major: 12, Minor: 53, Patch: 9}, [3]int{12, 54, 0}, false},
		{mw.Release{Major: 13, Minor: 18, Patch: 0}, [3]int{13, 18, 1}, false},
		{mw.Release{Major: 8, Minor: 83, Patch: 26}, [3]int{9, 14, 0}, false},
		{mw.Release{Major: 10}, [3]int{9, 49, 0}, true},
	} {
		if got := tc.r.AtLeast(tc.v[0], tc.v[1], tc.v[2]); got != tc.want {
			t.Errorf("%v.AtLeast(%v) = %v", tc.r, tc.v, got)
		}
	}
}

// TestUndefinedLimiter: a limiter the Go worker does not define stops the attempt with
// a clear error instead of running the job unlimited.
func TestUndefinedLimiter(t *testing.T) {
	env := &mw.Env{Limiters: mw.NewLimiters()}
	ran := false
	err := mw.Run(context.Background(), &mw.Job{Env: env}, []mw.Middleware{mw.RateLimited("emails")},
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
	env := &mw.Env{Cache: failingStore{store}}
	job := &mw.Job{Class: "A", Env: env}
	err = mw.Run(context.Background(), job, []mw.Middleware{mw.WithoutOverlapping("k")}, func(context.Context) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("ran, release failed: %v", err)
	}
	srv.FlushAll()
	err = mw.Run(context.Background(), job, []mw.Middleware{mw.WithoutOverlapping("k"), mw.ReleaseWhen(true, 5*time.Second)},
		func(context.Context) error { return nil })
	var rel *mw.ReleaseError
	if !errors.As(err, &rel) || rel.Delay != 5*time.Second || !strings.Contains(err.Error(), "connection reset") {
		t.Errorf("released, release of the lock failed: %v", err)
	}
}

// TestNames: every middleware names itself as Laravel does, for logs.
func TestNames(t *testing.T) {
	for m, want := range map[mw.Middleware]string{
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
