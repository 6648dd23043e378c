package middleware

import (
	"fmt"
	"math"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/phpser"
)

// The classes of Illuminate\Queue\Middleware, as ->through([...]) serializes them into a
// command's middleware property (Queueable) and CallQueuedHandler runs them after those
// of the class's middleware() method.
const (
	ClassWithoutOverlapping           = `Illuminate\Queue\Middleware\WithoutOverlapping`
	ClassRateLimited                  = `Illuminate\Queue\Middleware\RateLimited`
	ClassRateLimitedWithRedis         = `Illuminate\Queue\Middleware\RateLimitedWithRedis`
	ClassThrottlesExceptions          = `Illuminate\Queue\Middleware\ThrottlesExceptions`
	ClassThrottlesExceptionsWithRedis = `Illuminate\Queue\Middleware\ThrottlesExceptionsWithRedis`
	ClassSkip                         = `Illuminate\Queue\Middleware\Skip`
	ClassSkipIfBatchCancelled         = `Illuminate\Queue\Middleware\SkipIfBatchCancelled`
	ClassFailOnException              = `Illuminate\Queue\Middleware\FailOnException`
	ClassRelease                      = `Illuminate\Queue\Middleware\Release`
)

// DecodeFunc turns one serialized middleware object into its Go form.
type DecodeFunc func(obj *phpser.Value) (job.Middleware, error)

// Decoders map middleware classes to their decoders. Laravel's own are in
// LaravelDecoders; an application adds its own middleware classes by name.
type Decoders map[string]DecodeFunc

// LaravelDecoders returns the decoders of Laravel's middleware classes. FailOnException
// is among them only to say why it cannot come from a payload: its callback is a Closure,
// which PHP cannot serialize.
func LaravelDecoders() Decoders {
	return Decoders{
		ClassWithoutOverlapping:           decodeWithoutOverlapping,
		ClassRateLimited:                  decodeRateLimited,
		ClassRateLimitedWithRedis:         decodeRateLimited,
		ClassThrottlesExceptions:          decodeThrottlesExceptions,
		ClassThrottlesExceptionsWithRedis: decodeThrottlesExceptions,
		ClassSkip:                         decodeSkip,
		ClassSkipIfBatchCancelled:         func(*phpser.Value) (job.Middleware, error) { return SkipIfBatchCancelled(), nil },
		ClassRelease:                      decodeRelease,
		ClassFailOnException: func(*phpser.Value) (job.Middleware, error) {
			return nil, fmt.Errorf("its callback is a Closure, which a payload cannot carry")
		},
	}
}

// UnknownMiddlewareError: a command carries a middleware object no decoder knows. The
// worker fails the job with it rather than run the job without the guard PHP would have
// applied.
type UnknownMiddlewareError struct{ Class string }

func (e *UnknownMiddlewareError) Error() string {
	return fmt.Sprintf("the job's middleware property holds a %s, which this Go worker cannot run (register a decoder for the class)", e.Class)
}

// MiddlewareDecodeError: a middleware object of a known class could not be read.
type MiddlewareDecodeError struct {
	Class string
	Index int // position in the middleware property
	Err   error
}

func (e *MiddlewareDecodeError) Error() string {
	return fmt.Sprintf("middleware #%d (%s) of the job: %v", e.Index, e.Class, e.Err)
}

func (e *MiddlewareDecodeError) Unwrap() error { return e.Err }

// Through reads a command's middleware property (what ->through([...]) set) into Go
// middleware, in order. A command without the property (9.4+ SerializesModels leaves a
// default [] out) has none. Any object no decoder knows is an *UnknownMiddlewareError,
// any it cannot read a *MiddlewareDecodeError.
func (d Decoders) Through(command *phpser.Value) ([]job.Middleware, error) {
	prop, ok := command.Prop("middleware")
	if !ok || prop.Deref().IsNull() {
		return nil, nil
	}
	list := prop.Deref()
	if list.Kind() != phpser.KindArray {
		return nil, &MiddlewareDecodeError{Class: list.Kind().String(), Index: -1, Err: fmt.Errorf("the middleware property is a %s, not an array", list.Kind())}
	}
	out := make([]job.Middleware, 0, list.Len())
	for i, e := range list.Entries() {
		obj := e.Value.Deref()
		if obj.Kind() != phpser.KindObject {
			return nil, &MiddlewareDecodeError{Class: obj.Kind().String(), Index: i, Err: fmt.Errorf("not an object")}
		}
		decode := d[obj.Class()]
		if decode == nil {
			return nil, &UnknownMiddlewareError{Class: obj.Class()}
		}
		m, err := decode(obj)
		if err != nil {
			return nil, &MiddlewareDecodeError{Class: obj.Class(), Index: i, Err: err}
		}
		out = append(out, m)
	}
	return out, nil
}

// fields reads an object's properties by plain name, with a clear error for a wrong type.
type fields struct{ obj *phpser.Value }

func (f fields) get(name string) *phpser.Value {
	if v, ok := f.obj.Prop(name); ok {
		return v.Deref()
	}
	return nil
}

func (f fields) str(name, def string) (string, error) {
	v := f.get(name)
	if v == nil {
		return def, nil
	}
	s, ok := v.StringCast()
	if !ok {
		return "", fmt.Errorf("%s is a %s, which PHP cannot use as a string", name, v.Kind())
	}
	return s, nil
}

func (f fields) boolean(name string, def bool) bool {
	v := f.get(name)
	if v == nil {
		return def
	}
	return v.Truthy()
}

// intOrDate reads an int (a float is truncated, as PHP's int casts do), or a DateTime
// (releaseAfter may be one) as at; null is true for null or a missing property.
func (f fields) intOrDate(name string) (n int64, at time.Time, null bool, err error) {
	v := f.get(name)
	if v == nil || v.IsNull() {
		return 0, time.Time{}, true, nil
	}
	switch v.Kind() {
	case phpser.KindInt:
		return v.Int(), time.Time{}, false, nil
	case phpser.KindFloat:
		if math.IsNaN(v.Float()) || math.IsInf(v.Float(), 0) {
			break
		}
		return int64(v.Float()), time.Time{}, false, nil
	case phpser.KindObject:
		t, err := phpser.TimeOf(v)
		if err != nil {
			return 0, time.Time{}, false, fmt.Errorf("%s: %w", name, err)
		}
		return 0, t, false, nil
	}
	return 0, time.Time{}, false, fmt.Errorf("%s is %s, not a number", name, describe(v))
}

// noCallback requires a callback property to be empty: PHP cannot serialize a Closure, so
// a payload never holds one, and a Go worker could not run it anyway.
func (f fields) noCallback(name string) error {
	v := f.get(name)
	if v == nil || v.IsNull() || (v.Kind() == phpser.KindArray && v.Len() == 0) {
		return nil
	}
	return fmt.Errorf("%s holds a PHP callback (%s), which a Go worker cannot run", name, describe(v))
}

func decodeWithoutOverlapping(obj *phpser.Value) (job.Middleware, error) {
	f := fields{obj}
	key, err := f.str("key", "")
	if err != nil {
		return nil, err
	}
	prefix, err := f.str("prefix", "laravel-queue-overlap:")
	if err != nil {
		return nil, err
	}
	m := WithoutOverlapping(key).WithPrefix(prefix)
	after, at, null, err := f.intOrDate("releaseAfter")
	if err != nil {
		return nil, err
	}
	switch {
	case null:
		m.DontRelease()
	case !at.IsZero():
		m.releaseAt = at
	default:
		m.releaseAfter = after
	}
	if m.expiresAfter, _, _, err = f.intOrDate("expiresAfter"); err != nil {
		return nil, err
	}
	m.shared = f.boolean("shareKey", false)
	return m, nil
}

func decodeRateLimited(obj *phpser.Value) (job.Middleware, error) {
	f := fields{obj}
	name, err := f.str("limiterName", "")
	if err != nil {
		return nil, err
	}
	m := RateLimited(name)
	m.withRedis = obj.Class() == ClassRateLimitedWithRedis
	m.shouldRelease = f.boolean("shouldRelease", true)
	// releaseAfter is serialized from 13.18 (12.13–13.17 lose it on the way).
	after, at, null, err := f.intOrDate("releaseAfter")
	if err != nil {
		return nil, err
	}
	if !null {
		m.releaseAfter, m.releaseAt = after, at
	}
	if m.connection, err = f.str("connectionName", ""); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeThrottlesExceptions(obj *phpser.Value) (job.Middleware, error) {
	f := fields{obj}
	for _, cb := range []string{"whenCallback", "reportCallback", "deleteWhenCallbacks", "failWhenCallbacks"} {
		if err := f.noCallback(cb); err != nil {
			return nil, err
		}
	}
	m := &ThrottlesExceptionsMiddleware{withRedis: obj.Class() == ClassThrottlesExceptionsWithRedis}
	maxAttempts, _, null, err := f.intOrDate("maxAttempts")
	if err != nil {
		return nil, err
	}
	if null {
		maxAttempts = DefaultThrottleAttempts
	}
	m.maxAttempts = maxAttempts
	// decayMinutes up to 10.x, decaySeconds from 11.0.
	if v := f.get("decaySeconds"); v != nil {
		m.decaySeconds, _, _, err = f.intOrDate("decaySeconds")
	} else if v := f.get("decayMinutes"); v != nil {
		var minutes int64
		minutes, _, _, err = f.intOrDate("decayMinutes")
		m.decaySeconds = 60 * minutes
	} else {
		m.decaySeconds = seconds(DefaultThrottleDecay)
	}
	if err != nil {
		return nil, err
	}
	// retryAfterMinutes times 60 is the release after a counted exception; a fraction of a
	// minute is kept to the second (PHP releases $minutes * 60, a float then).
	if v := f.get("retryAfterMinutes"); v != nil && !v.IsNull() {
		n, ok := numberOf(v)
		if !ok || v.Kind() == phpser.KindString {
			return nil, fmt.Errorf("retryAfterMinutes is %s, not minutes", describe(v))
		}
		m.retryAfter = int64(n * 60)
	}
	if k := f.get("key"); k != nil && !k.IsNull() {
		if m.key, err = f.str("key", ""); err != nil {
			return nil, err
		}
	}
	m.byJob = f.boolean("byJob", false)
	if m.prefix, err = f.str("prefix", "laravel_throttles_exceptions:"); err != nil {
		return nil, err
	}
	if m.connection, err = f.str("connectionName", ""); err != nil {
		return nil, err
	}
	return m, nil
}

func decodeSkip(obj *phpser.Value) (job.Middleware, error) {
	return &SkipMiddleware{skip: fields{obj}.boolean("skip", false)}, nil
}

func decodeRelease(obj *phpser.Value) (job.Middleware, error) {
	f := fields{obj}
	after, _, _, err := f.intOrDate("releaseAfter")
	if err != nil {
		return nil, err
	}
	return &ReleaseMiddleware{release: f.boolean("release", false), releaseAfter: after}, nil
}
