package middleware

import (
	"context"
	"fmt"
	"strconv"

	"github.com/laraq/laraq/cache"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/phpser"
)

// rateLimiter is Laravel's Illuminate\Cache\RateLimiter over a cache store, through the
// rules of Illuminate\Cache\Repository: the same store calls in the same order, so that
// a Go worker makes the round trips a PHP worker makes and leaves the same keys, values
// and TTLs. Keys are cleaned (rdb.CleanRateLimiterKey) as PHP cleans them.
type rateLimiter struct {
	store cache.Store
	now   int64 // the attempt's clock, Unix seconds
	// doubleClean: before 9.14 tooManyAttempts read and reset the counter under the key
	// cleaned twice (it cleaned, then attempts() and resetAttempts() cleaned again),
	// which differs from the once-cleaned key hit() writes when the key holds "'" or an
	// entity with digits (½).
	doubleClean bool
}

func newRateLimiter(env *Env) (*rateLimiter, error) {
	store, err := env.limiterStore()
	if err != nil {
		return nil, err
	}
	return &rateLimiter{store: store, now: env.now().Unix(), doubleClean: !env.Release.AtLeast(9, 14, 0)}, nil
}

// add is Repository::add with a TTL: nothing for seconds <= 0, else the store's add.
func (l *rateLimiter) add(ctx context.Context, key, value string, seconds int64) (bool, error) {
	if seconds <= 0 {
		return false, nil
	}
	return l.store.Add(ctx, key, value, seconds)
}

// put is Repository::put with a TTL: forget for seconds <= 0, else the store's put.
func (l *rateLimiter) put(ctx context.Context, key, value string, seconds int64) error {
	if seconds <= 0 {
		return l.store.Forget(ctx, key)
	}
	return l.store.Put(ctx, key, value, seconds)
}

// get is Repository::get: the value as PHP sees it, nil when missing.
func (l *rateLimiter) get(ctx context.Context, key string) (*phpser.Value, error) {
	v, found, err := l.store.Get(ctx, key)
	if err != nil || !found {
		return nil, err
	}
	return storedValue(v), nil
}

// storedValue is what a store's unserialize gives PHP for a stored value: a raw number
// stays a numeric string (RedisStore), anything else is unserialized; what does not
// unserialize is false, as unserialize() returns.
func storedValue(v string) *phpser.Value {
	if php.IsNumeric(v) {
		return phpser.String(v)
	}
	val, err := phpser.DecodeString(v)
	if err != nil {
		return phpser.Bool(false)
	}
	return val
}

// tooManyAttempts is RateLimiter::tooManyAttempts: the hits are read; when they reach
// maxAttempts, a running window (":timer") makes it true, else the stale counter is
// forgotten.
func (l *rateLimiter) tooManyAttempts(ctx context.Context, key string, maxAttempts int64) (bool, error) {
	counter := rdb.CleanRateLimiterKey(key)
	if l.doubleClean {
		counter = rdb.CleanRateLimiterKey(counter)
	}
	hits, err := l.get(ctx, counter)
	if err != nil {
		return false, err
	}
	if hits == nil {
		hits = phpser.Int(0) // attempts(): get($key, 0)
	}
	reached, err := greaterOrEqual(hits, maxAttempts)
	if err != nil {
		return false, fmt.Errorf("rate limiter counter %s: %w", counter, err)
	}
	if !reached {
		return false, nil
	}
	timer, err := l.get(ctx, rdb.LimiterTimer(key))
	if err != nil {
		return false, err
	}
	if timer != nil && !timer.IsNull() {
		return true, nil
	}
	return false, l.store.Forget(ctx, counter)
}

// hit is RateLimiter::hit: the window opens (":timer" = its end, now + decay) unless it
// runs, the counter starts at 0 unless it exists, then counts one; a counter that
// existed but gave 1 (it had expired between the calls, or the store lost it) is written
// again with the window's lifetime.
func (l *rateLimiter) hit(ctx context.Context, key string, decay int64) (int64, error) {
	if _, err := l.add(ctx, rdb.LimiterTimer(key), serializeInt(l.now+decay), decay); err != nil {
		return 0, err
	}
	key = rdb.CleanRateLimiterKey(key)
	added, err := l.add(ctx, key, serializeInt(0), decay)
	if err != nil {
		return 0, err
	}
	hits, _, err := l.store.Increment(ctx, key, 1) // (int) false is 0
	if err != nil {
		return 0, err
	}
	if !added && hits == 1 {
		if err := l.put(ctx, key, serializeInt(1), decay); err != nil {
			return 0, err
		}
	}
	return hits, nil
}

// availableIn is RateLimiter::availableIn: seconds until the window ends, at least 0
// (0 without a window).
func (l *rateLimiter) availableIn(ctx context.Context, key string) (int64, error) {
	timerKey := rdb.LimiterTimer(key)
	timer, err := l.get(ctx, timerKey)
	if err != nil {
		return 0, err
	}
	at := int64(0)
	if timer != nil {
		n, ok := numberOf(timer)
		if !ok {
			return 0, fmt.Errorf("rate limiter window %s holds %s, not a time", timerKey, describe(timer))
		}
		at = int64(n)
	}
	return max(0, at-l.now), nil
}

// clear is RateLimiter::clear: counter and window are forgotten. In every release clear()
// cleans the key and resetAttempts() cleans it again, so for a key the second cleaning
// changes ("'" → &#039; → a#039;) the counter that stays behind is the real one.
func (l *rateLimiter) clear(ctx context.Context, key string) error {
	counter := rdb.CleanRateLimiterKey(rdb.CleanRateLimiterKey(key))
	if err := l.store.Forget(ctx, counter); err != nil {
		return err
	}
	return l.store.Forget(ctx, rdb.LimiterTimer(key))
}

func serializeInt(n int64) string { return "i:" + strconv.FormatInt(n, 10) + ";" }

// numberOf is a value in PHP arithmetic: ints, floats, numeric strings, bools and null;
// ok is false for what PHP 8 refuses (a non-numeric string, an array, an object).
func numberOf(v *phpser.Value) (float64, bool) {
	switch v.Kind() {
	case phpser.KindNull:
		return 0, true
	case phpser.KindBool:
		if v.Bool() {
			return 1, true
		}
		return 0, true
	case phpser.KindInt:
		return float64(v.Int()), true
	case phpser.KindFloat:
		return v.Float(), true
	case phpser.KindString:
		if php.IsNumeric(v.Str()) {
			f, err := strconv.ParseFloat(trimSpace(v.Str()), 64)
			return f, err == nil
		}
	}
	return 0, false
}

func trimSpace(s string) string {
	i, j := 0, len(s)
	for i < j && php.IsPCRESpace(s[i]) {
		i++
	}
	for j > i && php.IsPCRESpace(s[j-1]) {
		j--
	}
	return s[i:j]
}

// greaterOrEqual is PHP 8's $v >= $n for the counter read from a store: numbers and
// numeric strings compare as numbers, null and bools as bools, a non-numeric string with
// the integer's decimal form as strings, an array is greater.
func greaterOrEqual(v *phpser.Value, n int64) (bool, error) {
	switch v.Kind() {
	case phpser.KindNull:
		return !(n != 0), nil // false >= (bool) n
	case phpser.KindBool:
		return v.Bool() || n == 0, nil
	case phpser.KindArray:
		return true, nil
	case phpser.KindString:
		if !php.IsNumeric(v.Str()) {
			return v.Str() >= strconv.FormatInt(n, 10), nil
		}
	}
	f, ok := numberOf(v)
	if !ok {
		return false, fmt.Errorf("holds %s, not a count", describe(v))
	}
	return f >= float64(n), nil
}

func describe(v *phpser.Value) string {
	s := v.String()
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return v.Kind().String() + " " + s
}
