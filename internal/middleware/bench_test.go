package middleware_test

import (
	"context"
	"testing"
	"time"

	mw "github.com/laraq/laraq/internal/middleware"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
)

func benchEnv(b *testing.B) *mw.Env {
	b.Helper()
	srv := testenv.RedisServer(b)
	db0, db1 := srv.Client(b, 0), srv.Client(b, 1)
	p := testenv.Prefix(b)
	store, _ := rdb.NewRedisStore(db1, db0, rdb.CacheKeys{RedisPrefix: p, Prefix: "laravel_cache_"})
	dl, _ := rdb.NewDurationLimiter(db0, p)
	if err := rdb.LoadMiddlewareScripts(context.Background(), db0); err != nil {
		b.Fatal(err)
	}
	lim := mw.NewLimiters().For("bench", func(*mw.Job) []mw.Limit { return []mw.Limit{mw.PerDay(1 << 40)} })
	return &mw.Env{Cache: store, Redis: dl, Limiters: lim}
}

// BenchmarkRun measures one attempt through each middleware on a real redis-server
// (the cost a job pays for its guard), and through none (what every other job pays).
func BenchmarkRun(b *testing.B) {
	ok := func(context.Context) error { return nil }
	for _, bc := range []struct {
		name string
		mws  func() []mw.Middleware
	}{
		{"none", func() []mw.Middleware { return nil }},
		{"WithoutOverlapping", func() []mw.Middleware {
			return []mw.Middleware{mw.WithoutOverlapping("k").ExpireAfter(time.Minute)}
		}},
		{"RateLimited", func() []mw.Middleware { return []mw.Middleware{mw.RateLimited("bench")} }},
		{"RateLimitedWithRedis", func() []mw.Middleware { return []mw.Middleware{mw.RateLimitedWithRedis("bench")} }},
		{"ThrottlesExceptions", func() []mw.Middleware { return []mw.Middleware{mw.ThrottlesExceptions(10, time.Minute)} }},
		{"Skip", func() []mw.Middleware { return []mw.Middleware{mw.SkipUnless(true)} }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			env := benchEnv(b)
			job := &mw.Job{Class: `App\Jobs\Bench`, UUID: "u", Attempts: 1, Env: env}
			ms := bc.mws()
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if err := mw.Run(ctx, job, ms, ok); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
