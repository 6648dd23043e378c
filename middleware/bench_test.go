package middleware_test

import (
	"context"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
	mw "github.com/laraq/laraq/middleware"
)

func benchEnv(b *testing.B) *mw.Env {
	b.Helper()
	srv := testenv.RedisServer(b)
	db0, db1 := srv.Client(b, 0), srv.Client(b, 1)
	p := testenv.Prefix(b)
	store, _ := rdb.NewRedisStore(db1, db0, rdb.CacheKeys{RedisPrefix: p, Prefix: "laravel_cache_"})
	if err := rdb.LoadMiddlewareScripts(context.Background(), db0); err != nil {
		b.Fatal(err)
	}
	lim := mw.NewLimiters().For("bench", func(*job.JobInfo) []mw.Limit { return []mw.Limit{mw.PerDay(1 << 40)} })
	return &mw.Env{Cache: store, Redis: db0, RedisPrefix: p, Limiters: lim}
}

// BenchmarkRun measures one attempt through each middleware on a real redis-server
// (the cost a job pays for its guard), and through none (what every other job pays).
func BenchmarkRun(b *testing.B) {
	ok := func(context.Context) error { return nil }
	for _, bc := range []struct {
		name string
		mws  func() []job.Middleware
	}{
		{"none", func() []job.Middleware { return nil }},
		{"WithoutOverlapping", func() []job.Middleware {
			return []job.Middleware{mw.WithoutOverlapping("k").ExpireAfter(time.Minute)}
		}},
		{"RateLimited", func() []job.Middleware { return []job.Middleware{mw.RateLimited("bench")} }},
		{"RateLimitedWithRedis", func() []job.Middleware { return []job.Middleware{mw.RateLimitedWithRedis("bench")} }},
		{"ThrottlesExceptions", func() []job.Middleware { return []job.Middleware{mw.ThrottlesExceptions(10, time.Minute)} }},
		{"Skip", func() []job.Middleware { return []job.Middleware{mw.SkipUnless(true)} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			ctx := mw.WithEnv(context.Background(), benchEnv(b))
			info := &job.JobInfo{Class: `App\Jobs\Bench`, Name: `App\Jobs\Bench`, UUID: "u", Attempt: 1}
			ms := bc.mws()
			b.ReportAllocs()
			for b.Loop() {
				if err := mw.Run(ctx, info, ms, ok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
