package middleware

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/cache"
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
)

// Env is what PHP's middleware resolve from the container: the cache stores, the Redis
// connections, the named rate limiters, the clock. One Env serves every job of a worker:
// the worker puts it once in the context its handlers run under (WithEnv), where the
// middleware find it (EnvFrom).
type Env struct {
	// Release is the application's Laravel release, which decides key shapes and
	// behaviours (WithoutOverlapping hashes a displayName() from 12.54, ...). The zero
	// Release is the newest.
	Release job.Release
	// Cache is the application's default cache store (Cache::class), where
	// WithoutOverlapping takes its lock: Laravel's Redis store or the database store
	// (package cache/database).
	Cache cache.Store
	// Limiter is the RateLimiter's store (config cache.limiter, else the default store):
	// RateLimited and ThrottlesExceptions count there. Default: Cache.
	Limiter cache.Store
	// Redis is the application's default Redis connection (database.redis.default),
	// whose prefix is RedisPrefix: RateLimitedWithRedis and ThrottlesExceptionsWithRedis
	// keep their DurationLimiter there.
	Redis       redis.UniversalClient
	RedisPrefix string
	// RedisConnections are the application's Redis connections by name, for the Redis
	// variants' connection() (12.51+); they share RedisPrefix.
	RedisConnections map[string]redis.UniversalClient
	// Limiters are the rate limiters PHP defines with RateLimiter::for.
	Limiters *Limiters
	// Now is the clock. Default time.Now.
	Now func() time.Time
	// NewOwner returns a lock owner token. Default: 16 random letters and digits, as
	// Str::random() gives Laravel's locks.
	NewOwner func() string
	// Report receives what ThrottlesExceptions' report() asks to report ($this->report()
	// in PHP, the exception handler's report()). Default: nothing.
	Report func(ctx context.Context, err error)
}

type envKey struct{}

// WithEnv returns ctx carrying env, for the Laravel middleware run under it. A worker
// does this once, for the parent context of all its handlers.
func WithEnv(ctx context.Context, env *Env) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

// EnvFrom returns the Env ctx carries, or nil.
func EnvFrom(ctx context.Context) *Env {
	env, _ := ctx.Value(envKey{}).(*Env)
	return env
}

func (e *Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Env) owner() string {
	if e.NewOwner != nil {
		return e.NewOwner()
	}
	return randomToken(16)
}

func (e *Env) limiterStore() (cache.Store, error) {
	if e.Limiter != nil {
		return e.Limiter, nil
	}
	if e.Cache != nil {
		return e.Cache, nil
	}
	return nil, fmt.Errorf("no cache store for the rate limiter")
}

// durationLimiter is the DurationLimiter on the named connection ("" the default).
func (e *Env) durationLimiter(connection string) (*rdb.DurationLimiter, error) {
	client := e.Redis
	if connection != "" {
		client = e.RedisConnections[connection]
		if client == nil {
			return nil, fmt.Errorf("redis connection [%s] not configured", connection)
		}
	}
	if client == nil {
		return nil, fmt.Errorf("no default Redis connection for the DurationLimiter")
	}
	return rdb.NewDurationLimiter(client, e.RedisPrefix)
}

const tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

// randomToken is n letters and digits, like Str::random(n).
func randomToken(n int) string {
	out := make([]byte, 0, n)
	var buf [32]byte
	for len(out) < n {
		_, _ = rand.Read(buf[:]) // never fails (crypto/rand panics rather than return an error)
		for _, c := range buf {
			// 248 = 4 × 62: bytes above it would favour the first letters.
			if c < 248 && len(out) < n {
				out = append(out, tokenAlphabet[int(c)%len(tokenAlphabet)])
			}
		}
	}
	return string(out)
}
