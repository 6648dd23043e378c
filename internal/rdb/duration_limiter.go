package rdb

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/php"
)

var (
	//go:embed duration_acquire.lua
	durationAcquireSrc string
	//go:embed duration_check.lua
	durationCheckSrc string

	durationAcquireScript = redis.NewScript(durationAcquireSrc)
	durationCheckScript   = redis.NewScript(durationCheckSrc)
)

// DurationLimiter is Laravel's Redis DurationLimiter (Illuminate\Redis\Limiters) on one
// Redis connection: at most maxLocks attempts per window of decay seconds, counted in a
// hash named PREFIX + name on that connection (the connection's prefix only: the Redis
// variants of the job middleware bypass the cache store). RateLimitedWithRedis and
// ThrottlesExceptionsWithRedis use the application's default connection ('default', the
// queue's own in the skeleton) or, from 12.51, the one their connection() names.
type DurationLimiter struct {
	client redis.UniversalClient
	prefix string
}

// NewDurationLimiter returns the limiter on client (owned by the caller) under the
// connection's prefix.
func NewDurationLimiter(client redis.UniversalClient, prefix string) (*DurationLimiter, error) {
	if client == nil {
		return nil, errors.New("rdb: nil duration limiter redis client")
	}
	return &DurationLimiter{client: client, prefix: prefix}, nil
}

// Key is the Redis key of the limiter named name.
func (d *DurationLimiter) Key(name string) string { return d.prefix + name }

// DurationWindow is what one call tells of a limiter's window.
type DurationWindow struct {
	// Acquired says Acquire took a slot (always false from TooManyAttempts).
	Acquired bool
	// DecaysAt is the window's end in Unix seconds (PHP's $decaysAt); 0 from
	// TooManyAttempts when there is no window.
	DecaysAt int64
	// Remaining is maxLocks minus the attempts counted in the window: never below 0
	// after Acquire (PHP's max(0, …)), possibly negative after TooManyAttempts.
	Remaining int64
}

// Acquire counts one attempt as DurationLimiter::acquire() does (duration_acquire.lua):
// inside the current window it increments the count, refused or not; otherwise it opens a
// window of decay seconds at now. now is the caller's clock, sent as PHP sends
// microtime(true) and time().
func (d *DurationLimiter) Acquire(ctx context.Context, name string, maxLocks, decay int64, now time.Time) (DurationWindow, error) {
	key := d.Key(name)
	res, err := durationAcquireScript.Run(ctx, d.client, []string{key}, durationArgs(now, decay, maxLocks)...).Slice()
	if err != nil {
		return DurationWindow{}, fmt.Errorf("rdb: duration limiter %s: %w", key, err)
	}
	if len(res) != 3 {
		return DurationWindow{}, fmt.Errorf("rdb: duration limiter %s: reply %v", key, res)
	}
	w := DurationWindow{Acquired: res[0] != nil}
	if w.DecaysAt, err = replyInt(res[1]); err == nil {
		w.Remaining, err = replyInt(res[2])
	}
	if err != nil {
		return DurationWindow{}, fmt.Errorf("rdb: duration limiter %s: %w", key, err)
	}
	w.Remaining = max(w.Remaining, 0)
	return w, nil
}

// TooManyAttempts reads the window as DurationLimiter::tooManyAttempts() does
// (duration_check.lua), without counting: too is true when no slot is left.
func (d *DurationLimiter) TooManyAttempts(ctx context.Context, name string, maxLocks, decay int64, now time.Time) (w DurationWindow, too bool, err error) {
	key := d.Key(name)
	res, err := durationCheckScript.Run(ctx, d.client, []string{key}, durationArgs(now, decay, maxLocks)...).Slice()
	if err != nil {
		return DurationWindow{}, false, fmt.Errorf("rdb: duration limiter %s: %w", key, err)
	}
	if len(res) != 2 {
		return DurationWindow{}, false, fmt.Errorf("rdb: duration limiter %s: reply %v", key, res)
	}
	if w.DecaysAt, err = replyInt(res[0]); err == nil {
		w.Remaining, err = replyInt(res[1])
	}
	if err != nil {
		return DurationWindow{}, false, fmt.Errorf("rdb: duration limiter %s: %w", key, err)
	}
	return w, w.Remaining <= 0, nil
}

// Clear deletes the window (DurationLimiter::clear(): DEL).
func (d *DurationLimiter) Clear(ctx context.Context, name string) error {
	key := d.Key(name)
	if err := d.client.Del(ctx, key).Err(); err != nil {
		return fmt.Errorf("rdb: clear duration limiter %s: %w", key, err)
	}
	return nil
}

// durationArgs are the ARGV of both scripts: microtime(true) in PHP's string form
// (precision 14, as phpredis sends a float: "1700000000.1234"), time(), decay, maxLocks.
func durationArgs(now time.Time, decay, maxLocks int64) []any {
	micro := float64(now.UnixMicro()) / 1e6
	return []any{php.FloatString(micro), now.Unix(), decay, maxLocks}
}

// replyInt reads an integer reply element, or a string one holding an integer (the
// window's end comes back as the stored string).
func replyInt(v any) (int64, error) {
	switch v := v.(type) {
	case int64:
		return v, nil
	case string:
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			f, ferr := strconv.ParseFloat(v, 64)
			if ferr != nil {
				return 0, fmt.Errorf("value %q is not a number", truncate(v, 32))
			}
			return int64(f), nil
		}
		return n, nil
	}
	return 0, fmt.Errorf("reply element %v (%T) is not a number", v, v)
}

// LoadMiddlewareScripts sends the scripts of the job middleware's Redis operations (the
// cache store's add, the lock release, the DurationLimiter's two) to the server with
// SCRIPT LOAD, so that their first calls need no NOSCRIPT round trip.
func LoadMiddlewareScripts(ctx context.Context, c redis.Scripter) error {
	for _, s := range []*redis.Script{cacheAddScript, lockReleaseScript, durationAcquireScript, durationCheckScript} {
		if err := s.Load(ctx, c).Err(); err != nil {
			return fmt.Errorf("rdb: load script: %w", err)
		}
	}
	return nil
}
