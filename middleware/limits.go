package middleware

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/php"
)

// Limit is one rate limit (Illuminate\Cache\RateLimiting\Limit): at most MaxAttempts per
// window of DecaySeconds, counted per Key (by()).
type Limit struct {
	Key          string
	MaxAttempts  int64
	DecaySeconds int64
}

// PerSecond is Limit::perSecond($max) (11.x+): maxAttempts per second.
func PerSecond(maxAttempts int64) Limit { return Limit{MaxAttempts: maxAttempts, DecaySeconds: 1} }

// PerMinute is Limit::perMinute($max).
func PerMinute(maxAttempts int64) Limit { return Limit{MaxAttempts: maxAttempts, DecaySeconds: 60} }

// PerMinutes is Limit::perMinutes($decayMinutes, $max).
func PerMinutes(decayMinutes, maxAttempts int64) Limit {
	return Limit{MaxAttempts: maxAttempts, DecaySeconds: 60 * decayMinutes}
}

// PerHour is Limit::perHour($max).
func PerHour(maxAttempts int64) Limit { return Limit{MaxAttempts: maxAttempts, DecaySeconds: 3600} }

// PerDay is Limit::perDay($max).
func PerDay(maxAttempts int64) Limit { return Limit{MaxAttempts: maxAttempts, DecaySeconds: 86400} }

// Every is a limit of maxAttempts per window of decay (whole seconds), for the
// windows the constructors above do not name (perHour($max, 6), perSecond($max, 10)).
func Every(decay time.Duration, maxAttempts int64) Limit {
	return Limit{MaxAttempts: maxAttempts, DecaySeconds: int64(decay / time.Second)}
}

// By is Limit::by($key): the limit counts per key. A PHP key that is no string is
// concatenated in PHP's string form (an int in decimal, true as "1", null as "").
func (l Limit) By(key string) Limit {
	l.Key = key
	return l
}

// fallbackKey is Limit::fallbackKey() (11.29+), the key a limit gets when another limit
// of the same limiter has the same key: "KEY:attempts:MAX:decay:DECAY", without "KEY:"
// when the key is falsy. 11.29–11.34 had the condition the wrong way round: a truthy key
// gave no prefix and a falsy one the prefix ":".
func (l Limit) fallbackKey(r job.Release) string {
	prefix := ""
	truthy := l.Key != "" && l.Key != "0"
	if r.AtLeast(11, 35, 0) == truthy {
		prefix = l.Key + ":"
	}
	return prefix + "attempts:" + strconv.FormatInt(l.MaxAttempts, 10) + ":decay:" + strconv.FormatInt(l.DecaySeconds, 10)
}

// LimiterFunc computes a named limiter's limits for one job, as the closure given to
// RateLimiter::for does from the command (info.Bind or info.Value read it): none
// (Limit::none()) means unlimited.
type LimiterFunc func(info *job.JobInfo) []Limit

// limitsFunc is a limiter as the Limiters keep it: a limiter read from a spec (its key
// a property of the command) can fail on a command that lacks it.
type limitsFunc func(info *job.JobInfo) ([]Limit, error)

// Limiters are the named rate limiters of an application (RateLimiter::for in a service
// provider). A Go worker declares each limiter its PHP classes use, by the same name and
// with the same limits, so that both count on the same keys.
type Limiters struct {
	mu sync.RWMutex
	m  map[string]limitsFunc
}

// NewLimiters returns an empty set.
func NewLimiters() *Limiters { return &Limiters{m: map[string]limitsFunc{}} }

// For defines the limiter name, like RateLimiter::for($name, $callback); a later
// definition of the same name replaces it, as in PHP.
func (l *Limiters) For(name string, fn LimiterFunc) *Limiters {
	if fn == nil {
		panic("middleware: Limiters.For(" + name + ") with a nil function")
	}
	return l.set(name, func(info *job.JobInfo) ([]Limit, error) { return fn(info), nil })
}

func (l *Limiters) set(name string, fn limitsFunc) *Limiters {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.m[name] = fn
	return l
}

// Has reports whether the limiter name is defined.
func (l *Limiters) Has(name string) bool { return l.lookup(name) != nil }

func (l *Limiters) lookup(name string) limitsFunc {
	if l == nil {
		return nil
	}
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.m[name]
}

// UndefinedLimiterError: a RateLimited middleware names a limiter the Go worker does not
// define. PHP runs such a job unlimited (RateLimiter::limiter() is null); a Go worker
// cannot tell "PHP does not define it either" from "the Go side forgot it", and running a
// job at full speed the fleet means to limit is the worse mistake, so it refuses: the
// attempt ends with this error and the job is retried by Laravel's rules.
type UndefinedLimiterError struct{ Name string }

func (e *UndefinedLimiterError) Error() string {
	return fmt.Sprintf("rate limiter [%s] is not defined in this Go worker (define it with Limiters.For, as RateLimiter::for does in PHP)", e.Name)
}

// withFallbackKeys replaces the keys limits share (loosely equal, as Collection's
// duplicates('key') and contains() compare) with each limit's fallbackKey, as
// RateLimiter::limiter() does from 11.29.
func withFallbackKeys(limits []Limit, r job.Release) []Limit {
	if !r.AtLeast(11, 29, 0) || len(limits) < 2 {
		return limits
	}
	var dups []string
	for i := 1; i < len(limits); i++ {
		for j := 0; j < i; j++ {
			if looseEqualStrings(limits[i].Key, limits[j].Key) {
				dups = append(dups, limits[i].Key)
				break
			}
		}
	}
	if len(dups) == 0 {
		return limits
	}
	out := make([]Limit, len(limits))
	copy(out, limits)
	for i, l := range out {
		for _, d := range dups {
			if looseEqualStrings(l.Key, d) {
				out[i].Key = l.fallbackKey(r)
				break
			}
		}
	}
	return out
}

// looseEqualStrings is PHP 8's "a" == "b" for two strings: numerically when both are
// numeric ("1" == "01", "1e1" == "10"), else byte for byte.
func looseEqualStrings(a, b string) bool {
	if a == b {
		return true
	}
	if php.IsNumeric(a) && php.IsNumeric(b) {
		fa, ea := strconv.ParseFloat(trimSpace(a), 64)
		fb, eb := strconv.ParseFloat(trimSpace(b), 64)
		return ea == nil && eb == nil && fa == fb
	}
	return false
}
