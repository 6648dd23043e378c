package middleware

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/internal/rdb"
)

// Defaults of `new ThrottlesExceptions()`.
const (
	DefaultThrottleAttempts = 10
	DefaultThrottleDecay    = 10 * time.Minute
)

// ThrottlesExceptionsMiddleware is Laravel's ThrottlesExceptions, or
// ThrottlesExceptionsWithRedis: after maxAttempts exceptions within decay, the job is no
// longer run but released until the window ends. Each exception that counts releases the
// job for the backoff (0 by default) instead of letting the worker retry it; a run without
// exception clears the count. Releases, deletes and fails of the rest are no exceptions.
//
// ThrottlesExceptions counts with the RateLimiter in the limiter store (Env.Limiter) on
// the key PREFIX + (by() | the job's uuid with byJob() | a hash of the job's name) and its
// ":timer"; the release when too many is the window's end + 3 seconds.
// ThrottlesExceptionsWithRedis counts with a DurationLimiter hash of that name on the
// default Redis connection (Env.Redis; 12.51+ connection()); the release when too many is
// the window's end, without the 3 seconds.
type ThrottlesExceptionsMiddleware struct {
	maxAttempts  int64
	decaySeconds int64
	retryAfter   int64                     // backoff, in seconds (PHP keeps minutes)
	backoffFunc  func(error) time.Duration // 13.9+ backoff(Closure)
	key          string
	byJob        bool
	prefix       string
	when         func(error) bool
	report       func(error) bool
	deleteWhen   []func(error) bool
	failWhen     []func(error) bool
	withRedis    bool
	connection   string
	keyProperty  string // by() this property of the command (a spec's by-property)
}

// ThrottlesExceptions is `new ThrottlesExceptions($maxAttempts, $decay)` (decay in minutes
// up to 10.x, in seconds from 11.0; here a duration, counted in whole seconds).
func ThrottlesExceptions(maxAttempts int64, decay time.Duration) *ThrottlesExceptionsMiddleware {
	return &ThrottlesExceptionsMiddleware{maxAttempts: maxAttempts, decaySeconds: seconds(decay), prefix: rdb.ThrottlesExceptionsPrefix}
}

// ThrottlesExceptionsWithRedis is `new ThrottlesExceptionsWithRedis($maxAttempts, $decay)`.
func ThrottlesExceptionsWithRedis(maxAttempts int64, decay time.Duration) *ThrottlesExceptionsMiddleware {
	m := ThrottlesExceptions(maxAttempts, decay)
	m.withRedis = true
	return m
}

// Backoff is backoff($minutes): how long a job whose exception counted waits. PHP takes
// minutes; a duration that is not whole minutes is kept to the second.
func (m *ThrottlesExceptionsMiddleware) Backoff(d time.Duration) *ThrottlesExceptionsMiddleware {
	m.retryAfter, m.backoffFunc = seconds(d), nil
	return m
}

// BackoffFunc is backoff(Closure) (13.9+): the wait computed from the exception.
func (m *ThrottlesExceptionsMiddleware) BackoffFunc(fn func(error) time.Duration) *ThrottlesExceptionsMiddleware {
	m.backoffFunc = fn
	return m
}

// By is by($key): the count is kept per key rather than per job class.
func (m *ThrottlesExceptionsMiddleware) By(key string) *ThrottlesExceptionsMiddleware {
	m.key = key
	return m
}

// ByJob is byJob(): the count is kept per job (its uuid).
func (m *ThrottlesExceptionsMiddleware) ByJob() *ThrottlesExceptionsMiddleware {
	m.byJob = true
	return m
}

// WithPrefix is withPrefix($prefix), replacing "laravel_throttles_exceptions:".
func (m *ThrottlesExceptionsMiddleware) WithPrefix(prefix string) *ThrottlesExceptionsMiddleware {
	m.prefix = prefix
	return m
}

// When is when($callback): only errors it accepts are throttled; the others go to the
// worker as they are.
func (m *ThrottlesExceptionsMiddleware) When(accept func(error) bool) *ThrottlesExceptionsMiddleware {
	m.when = accept
	return m
}

// Report is report($callback) (11.3+): throttled errors it accepts are reported (to
// Env.Report); a nil callback reports every one, like report() without argument.
func (m *ThrottlesExceptionsMiddleware) Report(accept func(error) bool) *ThrottlesExceptionsMiddleware {
	if accept == nil {
		accept = func(error) bool { return true }
	}
	m.report = accept
	return m
}

// DeleteWhen is deleteWhen($callback) (12.14+): a throttled error it accepts deletes the
// job instead (chains continue).
func (m *ThrottlesExceptionsMiddleware) DeleteWhen(accept func(error) bool) *ThrottlesExceptionsMiddleware {
	m.deleteWhen = append(m.deleteWhen, accept)
	return m
}

// FailWhen is failWhen($callback) (12.20+): a throttled error it accepts fails the job.
func (m *ThrottlesExceptionsMiddleware) FailWhen(accept func(error) bool) *ThrottlesExceptionsMiddleware {
	m.failWhen = append(m.failWhen, accept)
	return m
}

// Connection is connection($name) of ThrottlesExceptionsWithRedis (12.51+).
func (m *ThrottlesExceptionsMiddleware) Connection(name string) *ThrottlesExceptionsMiddleware {
	m.connection = name
	return m
}

// Name is the Laravel class name, for events and logs.
func (m *ThrottlesExceptionsMiddleware) Name() string { return m.name() }

func (m *ThrottlesExceptionsMiddleware) name() string {
	if m.withRedis {
		return "ThrottlesExceptionsWithRedis"
	}
	return "ThrottlesExceptions"
}

// Key is the key the count of the job is kept under for release r (getKey): the prefix,
// then by()'s key when truthy, else the job's uuid with byJob(), else the job's name
// hashed: md5 of the class up to 11.x, xxh128 of it in 12.0–12.40, xxh128 of
// displayName() (or the class) from 12.41.
func (m *ThrottlesExceptionsMiddleware) Key(info *job.JobInfo, r job.Release) (string, error) {
	if m.keyProperty == "" {
		return m.key0(info, r), nil
	}
	by, err := Property(info, m.keyProperty)
	if err != nil {
		return "", err
	}
	k := *m
	k.key, k.keyProperty = by, ""
	return k.key0(info, r), nil
}

func (m *ThrottlesExceptionsMiddleware) key0(info *job.JobInfo, r job.Release) string {
	switch {
	case m.key != "" && m.key != "0":
		return m.prefix + m.key
	case m.byJob:
		return m.prefix + info.UUID
	case !r.AtLeast(12, 0, 0):
		sum := md5.Sum([]byte(info.Class))
		return m.prefix + hex.EncodeToString(sum[:])
	case r.AtLeast(12, 41, 0):
		display, _ := job.DisplayNameOf(info)
		return m.prefix + php.XXH128(display)
	}
	return m.prefix + php.XXH128(info.Class)
}

// backoff is the release after a counted exception, in seconds.
func (m *ThrottlesExceptionsMiddleware) backoff(err error) int64 {
	if m.backoffFunc != nil {
		return seconds(m.backoffFunc(err))
	}
	return m.retryAfter
}

// counts applies when, report, deleteWhen and failWhen to an exception of the rest:
// ok false and the error to return when it is not to be counted.
func (m *ThrottlesExceptionsMiddleware) counts(ctx context.Context, env *Env, err error) (bool, error) {
	if m.when != nil && !m.when(err) {
		return false, err
	}
	if m.report != nil && m.report(err) && env.Report != nil {
		env.Report(ctx, err)
	}
	for _, accept := range m.deleteWhen {
		if accept(err) {
			return false, deleted(m.name())
		}
	}
	for _, accept := range m.failWhen {
		if accept(err) {
			return false, failed(m.name(), err)
		}
	}
	return true, nil
}

// Handle is ThrottlesExceptions::handle (or the Redis variant's).
func (m *ThrottlesExceptionsMiddleware) Handle(ctx context.Context, info *job.JobInfo, next job.Next) error {
	env, err := envOf(ctx, m.Name())
	if err != nil {
		return err
	}
	if m.withRedis {
		return m.handleWithRedis(ctx, env, info, next)
	}
	limiter, err := newRateLimiter(env)
	if err != nil {
		return fmt.Errorf("%s: %w", m.name(), err)
	}
	key, err := m.Key(info, env.Release)
	if err != nil {
		return fmt.Errorf("%s: %w", m.name(), err)
	}
	too, err := limiter.tooManyAttempts(ctx, key, m.maxAttempts)
	if err != nil {
		return fmt.Errorf("%s: %w", m.name(), err)
	}
	if too {
		in, err := limiter.availableIn(ctx, key)
		if err != nil {
			return fmt.Errorf("%s: %w", m.name(), err)
		}
		return released(m.name(), in+3)
	}
	err = next(ctx)
	if err == nil || isDecision(err) {
		// clear() runs inside PHP's try block: its own failure is caught like an
		// exception of the job.
		cerr := limiter.clear(ctx, key)
		if cerr == nil {
			return err
		}
		err = fmt.Errorf("%s: %w", m.name(), cerr)
	}
	if ok, out := m.counts(ctx, env, err); !ok {
		return out
	}
	if _, herr := limiter.hit(ctx, key, m.decaySeconds); herr != nil {
		return fmt.Errorf("%s: %w (while throttling: %w)", m.name(), herr, err)
	}
	return released(m.name(), m.backoff(err))
}

func (m *ThrottlesExceptionsMiddleware) handleWithRedis(ctx context.Context, env *Env, info *job.JobInfo, next job.Next) error {
	dl, err := env.durationLimiter(m.connection)
	if err != nil {
		return fmt.Errorf("%s: %w", m.name(), err)
	}
	key, err := m.Key(info, env.Release)
	if err != nil {
		return fmt.Errorf("%s: %w", m.name(), err)
	}
	now := env.now()
	w, too, err := dl.TooManyAttempts(ctx, key, m.maxAttempts, m.decaySeconds, now)
	if err != nil {
		return fmt.Errorf("%s: %w", m.name(), err)
	}
	if too {
		return released(m.name(), w.DecaysAt-now.Unix())
	}
	err = next(ctx)
	if err == nil || isDecision(err) {
		cerr := dl.Clear(ctx, key)
		if cerr == nil {
			return err
		}
		err = fmt.Errorf("%s: %w", m.name(), cerr)
	}
	if ok, out := m.counts(ctx, env, err); !ok {
		return out
	}
	if _, aerr := dl.Acquire(ctx, key, m.maxAttempts, m.decaySeconds, env.now()); aerr != nil {
		return fmt.Errorf("%s: %w (while throttling: %w)", m.name(), aerr, err)
	}
	return released(m.name(), m.backoff(err))
}
