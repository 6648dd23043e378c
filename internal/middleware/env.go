package middleware

import (
	"context"
	"crypto/rand"
	"fmt"
	"time"

	"github.com/laraq/laraq/cache"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/phpser"
)

// Release is the Laravel release of the application whose jobs run, which decides key
// shapes and behaviours (WithoutOverlapping hashes a displayName() from 12.54, ...). The
// zero Release is the newest; a release named by its major alone takes that major's
// newest behaviour when Minor is large (laraq's Release uses 1<<30).
type Release struct{ Major, Minor, Patch int }

// AtLeast says r is major.minor.patch or later.
func (r Release) AtLeast(major, minor, patch int) bool {
	if r.Major == 0 {
		return true
	}
	if r.Major != major {
		return r.Major > major
	}
	if r.Minor != minor {
		return r.Minor > minor
	}
	return r.Patch >= patch
}

func (r Release) String() string {
	if r.Major == 0 {
		return "latest"
	}
	return fmt.Sprintf("%d.%d.%d", r.Major, r.Minor, r.Patch)
}

// Env is what PHP's middleware resolve from the container: the cache stores, the Redis
// connections, the named rate limiters, the clock. One Env serves every job of a worker.
type Env struct {
	// Release is the application's Laravel release. Default: the newest.
	Release Release
	// Cache is the application's default cache store (Cache::class), where
	// WithoutOverlapping takes its lock: an rdb.RedisStore or a cache/database Store.
	Cache cache.Store
	// Limiter is the RateLimiter's store (config cache.limiter, else the default store):
	// RateLimited and ThrottlesExceptions count there. Default: Cache.
	Limiter cache.Store
	// Redis is the application's default Redis connection (database.redis.default), where
	// RateLimitedWithRedis and ThrottlesExceptionsWithRedis keep their DurationLimiter.
	Redis *rdb.DurationLimiter
	// RedisConnections are the other Redis connections by name, for the Redis variants'
	// connection() (12.51+).
	RedisConnections map[string]*rdb.DurationLimiter
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
	return nil, fmt.Errorf("middleware: no cache store for the rate limiter")
}

func (e *Env) redis(connection string) (*rdb.DurationLimiter, error) {
	if connection == "" {
		if e.Redis == nil {
			return nil, fmt.Errorf("middleware: no default Redis connection for the DurationLimiter")
		}
		return e.Redis, nil
	}
	if d := e.RedisConnections[connection]; d != nil {
		return d, nil
	}
	return nil, fmt.Errorf("middleware: Redis connection [%s] not configured", connection)
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

// Job is what PHP's middleware read of the job they wrap: the command ($job in their
// handle(): class, displayName()) and its queue job ($job->job: uuid, attempts). Env is
// the worker's; the engine fills the rest per attempt.
type Job struct {
	// Class is the command's PHP class (data.commandName, get_class($command)).
	Class string
	// HasDisplayName says the command's class has a displayName() method, and
	// DisplayName is what it returns. From 12.41 it replaces the class in
	// WithoutOverlapping's and ThrottlesExceptions' keys (hashed from 12.54 for the
	// former). A Go job type has one when it implements DisplayName() string; for a job
	// without Go type, a payload displayName other than the class says so (a method
	// returning the class name itself cannot be told apart).
	HasDisplayName bool
	DisplayName    string
	// UUID is the payload's uuid ($job->job->uuid(): ThrottlesExceptions' byJob()).
	UUID string
	// Attempts is the attempt running now (1 for the first).
	Attempts int
	// Command is the decoded data.command, when the worker decoded it.
	Command *phpser.Value
	// BatchCancelled reports whether the command's batch was cancelled
	// ($job->batch()?->cancelled()); nil when the command is not Batchable or has no
	// batch id. SkipIfBatchCancelled reads it.
	BatchCancelled func(ctx context.Context) (bool, error)
	// Env is the worker's.
	Env *Env
}
