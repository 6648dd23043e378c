package rdb

import (
	"context"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

// BenchmarkDurationLimiterAcquire is one attempt of RateLimitedWithRedis on a window with
// room (the window reopens every 1e9 attempts).
func BenchmarkDurationLimiterAcquire(b *testing.B) {
	c := testenv.RedisServer(b).Client(b, 0)
	p := testenv.Prefix(b)
	d, _ := NewDurationLimiter(c, p)
	ctx := context.Background()
	if err := LoadMiddlewareScripts(ctx, c); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cleanupKeys(c, p) })
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := d.Acquire(ctx, "bench", 1e9, 60, now); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRedisStoreAdd is RateLimiter::hit's add of a running window (the key exists).
func BenchmarkRedisStoreAdd(b *testing.B) {
	c := testenv.RedisServer(b).Client(b, 1)
	p := testenv.Prefix(b)
	s, _ := NewRedisStore(c, nil, CacheKeys{RedisPrefix: p, Prefix: "laravel_cache_"})
	ctx := context.Background()
	if err := LoadMiddlewareScripts(ctx, c); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cleanupKeys(c, p) })
	b.ReportAllocs()
	for b.Loop() {
		if _, err := s.Add(ctx, "c0ffee:timer", "i:1700000060;", 60); err != nil {
			b.Fatal(err)
		}
	}
}
