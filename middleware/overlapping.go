package middleware

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/internal/rdb"
)

// WithoutOverlappingMiddleware is Laravel's WithoutOverlapping: one job of a key at a
// time, fleet-wide. It takes a lock in the default cache store (Env.Cache) named
// rdb.OverlapLockName(prefix, job, key, shared) for expiresAfter seconds (0: a Redis
// lock without expiry, the database store's lock_timeout), runs the rest and releases
// the lock; when another worker holds it, the job is released for releaseAfter seconds,
// or, with DontRelease, completed without running.
type WithoutOverlappingMiddleware struct {
	key          string
	releaseAfter int64
	releaseAt    time.Time // a DateTime releaseAfter (decoded from PHP); zero: releaseAfter
	dontRelease  bool
	expiresAfter int64
	prefix       string
	shared       bool
	keyProperty  string // the key is this property of the command (a spec's), not key
}

// WithoutOverlapping is `new WithoutOverlapping($key)`: release after 0 seconds, no
// expiry, the default prefix, the key per job class.
func WithoutOverlapping(key string) *WithoutOverlappingMiddleware {
	return &WithoutOverlappingMiddleware{key: key, prefix: rdb.OverlapPrefix}
}

// ReleaseAfter is releaseAfter($seconds): how long a job that finds the lock taken waits.
func (m *WithoutOverlappingMiddleware) ReleaseAfter(d time.Duration) *WithoutOverlappingMiddleware {
	m.releaseAfter, m.releaseAt, m.dontRelease = seconds(d), time.Time{}, false
	return m
}

// DontRelease is dontRelease(): a job that finds the lock taken is completed without
// running (deleted; a chain continues).
func (m *WithoutOverlappingMiddleware) DontRelease() *WithoutOverlappingMiddleware {
	m.dontRelease = true
	return m
}

// ExpireAfter is expireAfter($seconds): the lock's lifetime, should a worker die holding
// it.
func (m *WithoutOverlappingMiddleware) ExpireAfter(d time.Duration) *WithoutOverlappingMiddleware {
	m.expiresAfter = seconds(d)
	return m
}

// WithPrefix is withPrefix($prefix), replacing "laravel-queue-overlap:".
func (m *WithoutOverlappingMiddleware) WithPrefix(prefix string) *WithoutOverlappingMiddleware {
	m.prefix = prefix
	return m
}

// Shared is shared() (9.32+): the key is shared across job classes.
func (m *WithoutOverlappingMiddleware) Shared() *WithoutOverlappingMiddleware {
	m.shared = true
	return m
}

// LockName is the lock's name in the cache store for the job under release r
// (WithoutOverlapping::getLockKey): the job is named by its class, from 12.41 by its
// displayName() when it has one, hashed with xxh128 from 12.54. An error is a key
// property (from a spec) the command cannot give.
func (m *WithoutOverlappingMiddleware) LockName(info *job.JobInfo, r job.Release) (string, error) {
	key := m.key
	if m.keyProperty != "" {
		var err error
		if key, err = Property(info, m.keyProperty); err != nil {
			return "", err
		}
	}
	return rdb.OverlapLockName(m.prefix, overlapJobName(info, r), key, m.shared), nil
}

func overlapJobName(info *job.JobInfo, r job.Release) string {
	if !r.AtLeast(12, 41, 0) {
		return info.Class
	}
	display, has := job.DisplayNameOf(info)
	switch {
	case has && r.AtLeast(12, 54, 0):
		return php.XXH128(display)
	case has:
		return display
	}
	return info.Class
}

// Name is the Laravel class name, for events and logs.
func (m *WithoutOverlappingMiddleware) Name() string { return "WithoutOverlapping" }

// Handle is WithoutOverlapping::handle.
func (m *WithoutOverlappingMiddleware) Handle(ctx context.Context, info *job.JobInfo, next job.Next) (err error) {
	env, err := envOf(ctx, m.Name())
	if err != nil {
		return err
	}
	if env.Cache == nil {
		return fmt.Errorf("WithoutOverlapping: no cache store for its lock")
	}
	name, err := m.LockName(info, env.Release)
	if err != nil {
		return fmt.Errorf("WithoutOverlapping: %w", err)
	}
	owner := env.owner()
	got, err := env.Cache.AcquireLock(ctx, name, owner, m.expiresAfter)
	if err != nil {
		return fmt.Errorf("WithoutOverlapping: %w", err)
	}
	if !got {
		switch {
		case m.dontRelease:
			return skipped(m.Name())
		case !m.releaseAt.IsZero():
			return releasedFor(m.Name(), max(0, m.releaseAt.Sub(env.now())))
		}
		return released(m.Name(), m.releaseAfter)
	}
	defer func() {
		// PHP releases in a finally block, whatever the rest did, even when the worker's
		// context was cancelled meanwhile. An exception there escapes the attempt: a
		// job that ran is then retried, as in PHP; a release, delete or fail the rest
		// decided has already happened in PHP, so it stays the outcome here.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		if _, rerr := env.Cache.ReleaseLock(rctx, name, owner); rerr != nil {
			err = errors.Join(err, fmt.Errorf("WithoutOverlapping: release lock %s: %w", name, rerr))
		}
	}()
	return next(ctx)
}

func seconds(d time.Duration) int64 { return int64(d / time.Second) }
