package middleware

import (
	"context"
	"fmt"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
)

// RateLimitedMiddleware is Laravel's RateLimited, or RateLimitedWithRedis: each limit the
// named limiter gives for the job is checked and counted; when one is exhausted the job is
// released until its window ends, plus 3 seconds (releaseAfter's delay from 12.13), or,
// with DontRelease, completed without running.
//
// RateLimited counts with the RateLimiter in the limiter store (Env.Limiter): for each
// limit in turn, tooManyAttempts then hit, on md5(name . key) and its ":timer".
// RateLimitedWithRedis counts with a DurationLimiter hash named md5(name . key) on the
// default Redis connection (Env.Redis; 12.51+ connection()), one attempt per limit, a
// refused one included. A limit counted before a later one refused stays counted, in both.
type RateLimitedMiddleware struct {
	limiterName   string
	shouldRelease bool
	releaseAfter  int64
	releaseAt     time.Time
	withRedis     bool
	connection    string
}

// RateLimited is `new RateLimited($limiterName)`.
func RateLimited(limiterName string) *RateLimitedMiddleware {
	return &RateLimitedMiddleware{limiterName: limiterName, shouldRelease: true}
}

// RateLimitedWithRedis is `new RateLimitedWithRedis($limiterName)`.
func RateLimitedWithRedis(limiterName string) *RateLimitedMiddleware {
	return &RateLimitedMiddleware{limiterName: limiterName, shouldRelease: true, withRedis: true}
}

// DontRelease is dontRelease(): a limited job is completed without running.
func (m *RateLimitedMiddleware) DontRelease() *RateLimitedMiddleware {
	m.shouldRelease = false
	return m
}

// ReleaseAfter is releaseAfter($seconds) (12.13+): a limited job is released for this
// long instead of until its window ends (0 keeps the window's delay, as PHP's ?: does).
func (m *RateLimitedMiddleware) ReleaseAfter(d time.Duration) *RateLimitedMiddleware {
	m.releaseAfter, m.releaseAt = seconds(d), time.Time{}
	return m
}

// Connection is connection($name) of RateLimitedWithRedis (12.51+): the Redis connection
// of the DurationLimiter, one of Env.RedisConnections.
func (m *RateLimitedMiddleware) Connection(name string) *RateLimitedMiddleware {
	m.connection = name
	return m
}

// Name is the Laravel class name, for events and logs.
func (m *RateLimitedMiddleware) Name() string {
	if m.withRedis {
		return "RateLimitedWithRedis"
	}
	return "RateLimited"
}

func (m *RateLimitedMiddleware) name() string { return m.Name() }

// Handle is RateLimited::handle and handleJob.
func (m *RateLimitedMiddleware) Handle(ctx context.Context, info *job.JobInfo, next job.Next) error {
	env, err := envOf(ctx, m.Name())
	if err != nil {
		return err
	}
	fn := env.Limiters.lookup(m.limiterName)
	if fn == nil {
		return &UndefinedLimiterError{Name: m.limiterName}
	}
	limits, err := fn(info)
	if err != nil {
		return fmt.Errorf("%s: limiter [%s]: %w", m.name(), m.limiterName, err)
	}
	limits = withFallbackKeys(limits, env.Release)
	if len(limits) == 0 {
		return next(ctx)
	}
	if m.withRedis {
		return m.handleWithRedis(ctx, env, next, limits)
	}
	limiter, err := newRateLimiter(env)
	if err != nil {
		return fmt.Errorf("%s: %w", m.name(), err)
	}
	for _, l := range limits {
		key := rdb.RateLimitedKey(m.limiterName, l.Key)
		too, err := limiter.tooManyAttempts(ctx, key, l.MaxAttempts)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name(), err)
		}
		if too {
			return m.limited(env, func() (int64, error) {
				in, err := limiter.availableIn(ctx, key)
				return in + 3, err
			})
		}
		if _, err := limiter.hit(ctx, key, l.DecaySeconds); err != nil {
			return fmt.Errorf("%s: %w", m.name(), err)
		}
	}
	return next(ctx)
}

func (m *RateLimitedMiddleware) handleWithRedis(ctx context.Context, env *Env, next job.Next, limits []Limit) error {
	dl, err := env.durationLimiter(m.connection)
	if err != nil {
		return fmt.Errorf("%s: %w", m.name(), err)
	}
	now := env.now()
	for _, l := range limits {
		w, err := dl.Acquire(ctx, rdb.RateLimitedKey(m.limiterName, l.Key), l.MaxAttempts, l.DecaySeconds, now)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name(), err)
		}
		if !w.Acquired {
			return m.limited(env, func() (int64, error) { return w.DecaysAt - now.Unix() + 3, nil })
		}
	}
	return next(ctx)
}

// limited is the answer for an exhausted limit: release (for releaseAfter when set, else
// for the window's delay) or skip.
func (m *RateLimitedMiddleware) limited(env *Env, window func() (int64, error)) error {
	if !m.shouldRelease {
		return skipped(m.name())
	}
	if !m.releaseAt.IsZero() {
		return releasedFor(m.name(), max(0, m.releaseAt.Sub(env.now())))
	}
	if m.releaseAfter != 0 {
		return released(m.name(), m.releaseAfter)
	}
	delay, err := window()
	if err != nil {
		return fmt.Errorf("%s: %w", m.name(), err)
	}
	return released(m.name(), delay)
}
