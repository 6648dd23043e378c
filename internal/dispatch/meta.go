package dispatch

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// The envelope's job metadata comes from the command object the way the release's
// Queue::createObjectPayload reads it: `$job->tries ?? null` and friends run in the
// Queue class, outside the job's scope, so only public properties count (a protected
// $tries is invisible there and gives null), and a null value counts as absent (??,
// isset). The object is the one PHP holds at dispatch, every property at its class
// default unless set (a 9.4+ SerializesModels payload leaves those out, but the Queue
// reads the object, not the payload). Values are written as PHP holds them: an int
// property gives a JSON int, a string property a JSON string, and so on. Methods and
// 13.x attributes are read as jobMethods describes.

// meta holds the envelope keys createObjectPayload derives from the command, as the
// JSON values PHP writes for them (nil: null).
type meta struct {
	maxTries, maxExceptions, timeout, retryUntil *payload.Value
	failOnTimeout                                payload.Value
	backoff                                      *payload.Value
	retryDelay                                   *payload.Value // 5.8–7.x's delay
	batchID                                      *string
	deleteWhenMissingModels                      bool
}

// deriveMeta reads the metadata of cmd, the object as PHP holds it, on release rel.
func deriveMeta(cmd *phpser.Value, m jobMethods, rel job.Release, now time.Time) (meta, error) {
	var md meta
	attrs := rel.AtLeast(13, 0, 0)
	prop := func(name string) *phpser.Value { return m.read(cmd, name, attrs) }
	orMethod := func(v *phpser.Value, method func() *phpser.Value) *phpser.Value {
		if v == nil && method != nil {
			if x := method(); !x.IsNull() {
				return x
			}
		}
		return v
	}
	if !rel.AtLeast(8, 0, 0) {
		return deriveMeta57(cmd, m, now, prop)
	}
	tries := prop("tries")
	switch {
	case attrs && m.tries != nil:
		tries = m.tries() // getJobTries: the method wins on 13.x
	case rel.AtLeast(10, 39, 0):
		tries = orMethod(tries, m.tries)
	}
	backoff := prop("backoff")
	if attrs && m.backoff != nil {
		backoff = m.backoff()
	} else {
		backoff = orMethod(backoff, m.backoff)
	}
	// retryUntil has no attribute: `$job->retryUntil ?? $job->retryUntil()` everywhere.
	retryUntil, _ := cmd.Visible("retryUntil")
	retryUntil = orMethod(retryUntil, m.retryUntil)

	var err error
	if err = md.counts(tries, prop); err != nil {
		return md, err
	}
	if v, err := metaJSON(prop("failOnTimeout"), "failOnTimeout"); err != nil {
		return md, err
	} else if v != nil {
		md.failOnTimeout = *v
	}
	if md.retryUntil, err = dateOr(retryUntil, "retryUntil", timestamp); err != nil {
		return md, err
	}
	if backoff != nil && !backoff.IsNull() {
		s, err := joinBackoff(backoff, now)
		if err != nil {
			return md, err
		}
		md.backoff = &payload.Value{Kind: payload.KindString, Str: s}
	}
	if v, ok := cmd.Visible("batchId"); ok && v.Kind() == phpser.KindString {
		s := v.Str()
		md.batchID = &s
	}
	if v := prop("deleteWhenMissingModels"); v != nil {
		md.deleteWhenMissingModels = v.Truthy()
	}
	return md, nil
}

// deriveMeta57 is createObjectPayload of 5.8–7.x: tries, maxExceptions (7.x) and timeout
// as later, but no backoff, failOnTimeout or retryUntil. getJobRetryDelay gives delay:
// `$job->retryAfter ?? $job->retryAfter()`, a date as the seconds until it (never
// negative); getJobExpiration gives timeoutAt: `$job->timeoutAt ?? $job->retryUntil()`
// (a retryUntil property is not read), a date as its timestamp. Either is null when the
// class has neither the property set nor the method.
func deriveMeta57(cmd *phpser.Value, m jobMethods, now time.Time, prop func(string) *phpser.Value) (meta, error) {
	var md meta
	if err := md.counts(prop("tries"), prop); err != nil {
		return md, err
	}
	orMethod := func(name string, method func() *phpser.Value) *phpser.Value {
		if v, set := cmd.Visible(name); set {
			return v
		}
		if method != nil {
			return method()
		}
		return nil
	}
	secondsUntil := func(t time.Time) int64 { return max(0, t.Unix()-now.Unix()) }
	var err error
	if md.retryDelay, err = dateOr(orMethod("retryAfter", m.retryAfter), "retryAfter", secondsUntil); err != nil {
		return md, err
	}
	md.retryUntil, err = dateOr(orMethod("timeoutAt", m.retryUntil), "timeoutAt", timestamp)
	return md, err
}

// counts sets maxTries (from tries), maxExceptions and timeout: `$job->tries ?? null`
// and friends, on every release. failOnTimeout starts false, as `?? false` gives it.
func (md *meta) counts(tries *phpser.Value, prop func(string) *phpser.Value) error {
	var err error
	if md.maxTries, err = metaJSON(tries, "tries"); err != nil {
		return err
	}
	if md.maxExceptions, err = metaJSON(prop("maxExceptions"), "maxExceptions"); err != nil {
		return err
	}
	md.timeout, err = metaJSON(prop("timeout"), "timeout")
	md.failOnTimeout = payload.Value{Kind: payload.KindBool}
	return err
}

func timestamp(t time.Time) int64 { return t.Unix() }

// dateOr is a metadata value that may be a date (retryUntil, timeoutAt, retryAfter): a
// DateTimeInterface becomes the int seconds of(date) gives, anything else its JSON
// value; nil stays absent.
func dateOr(v *phpser.Value, name string, of func(time.Time) int64) (*payload.Value, error) {
	if v == nil {
		return nil, nil
	}
	if t, err := phpser.TimeOf(v); err == nil {
		return &payload.Value{Kind: payload.KindInt, Int: of(t)}, nil
	}
	return metaJSON(v, name)
}

// metaJSON is the JSON value of a metadata value (nil: absent).
func metaJSON(v *phpser.Value, name string) (*payload.Value, error) {
	if v == nil {
		return nil, nil
	}
	jv, err := jsonValue(v, name)
	if err != nil {
		return nil, err
	}
	return &jv, nil
}

// joinBackoff is getJobBackoff: Arr::wrap the value, turn dates into seconds from now,
// implode with ",". implode converts each item to a PHP string.
func joinBackoff(v *phpser.Value, now time.Time) (string, error) {
	items := []*phpser.Value{v}
	if v.Kind() == phpser.KindArray {
		items = items[:0]
		for _, e := range v.Entries() {
			items = append(items, e.Value.Deref())
		}
	}
	parts := make([]string, len(items))
	for i, it := range items {
		if it.Kind() == phpser.KindObject {
			t, err := phpser.TimeOf(it)
			if err != nil {
				return "", fmt.Errorf("backoff[%d]: a %s object is neither a number nor a date", i, it.Class())
			}
			parts[i] = strconv.FormatInt(max(0, t.Unix()-now.Unix()), 10)
			continue
		}
		s, err := phpString(it)
		if err != nil {
			return "", fmt.Errorf("backoff[%d]: %v", i, err)
		}
		parts[i] = s
	}
	return strings.Join(parts, ","), nil
}

// phpString is PHP's (string) conversion of a scalar, as implode applies it.
func phpString(v *phpser.Value) (string, error) {
	s, ok := v.StringCast()
	if !ok {
		return "", fmt.Errorf("a PHP %s cannot be converted to a string", v.Kind())
	}
	return s, nil
}

// jsonValue is the JSON value json_encode writes for a PHP value found in a property.
func jsonValue(v *phpser.Value, path string) (payload.Value, error) {
	v = v.Deref()
	switch v.Kind() {
	case phpser.KindNull:
		return payload.Value{Kind: payload.KindNull}, nil
	case phpser.KindBool:
		return payload.Value{Kind: payload.KindBool, Bool: v.Bool()}, nil
	case phpser.KindInt:
		return payload.Value{Kind: payload.KindInt, Int: v.Int()}, nil
	case phpser.KindFloat:
		return payload.Value{Kind: payload.KindFloat, Float: v.Float()}, nil
	case phpser.KindString:
		return payload.Value{Kind: payload.KindString, Str: v.Str()}, nil
	case phpser.KindArray:
		out := payload.Value{Kind: payload.KindArray}
		for _, e := range v.Entries() {
			k := e.Key.Str()
			if e.Key.IsInt() {
				k = strconv.FormatInt(e.Key.Int(), 10)
			}
			x, err := jsonValue(&e.Value, path+"["+k+"]")
			if err != nil {
				return payload.Value{}, err
			}
			out.Items = append(out.Items, payload.Item{Key: k, Value: x})
		}
		return out, nil
	}
	return payload.Value{}, fmt.Errorf("%s: laraq cannot write a PHP %s into the payload's job metadata", path, v.Kind())
}

// availableAt is InteractsWithTime::availableAt for a delay property value: a date gives
// its timestamp, a number (or numeric string) of seconds gives (int) (now + seconds).
func availableAt(v *phpser.Value, now time.Time) (at int64, seconds int64, err error) {
	v = v.Deref()
	switch v.Kind() {
	case phpser.KindInt:
		return now.Unix() + v.Int(), v.Int(), nil
	case phpser.KindFloat:
		f := v.Float()
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return 0, 0, errors.New("delay is not a finite number")
		}
		return int64(float64(now.Unix()) + f), int64(f), nil
	case phpser.KindString:
		s := strings.TrimSpace(v.Str())
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return now.Unix() + n, n, nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil && !math.IsInf(f, 0) && !math.IsNaN(f) {
			return int64(float64(now.Unix()) + f), int64(f), nil
		}
		return 0, 0, fmt.Errorf("delay %q is not a number of seconds", v.Str())
	case phpser.KindBool:
		if v.Bool() {
			return now.Unix() + 1, 1, nil
		}
		return now.Unix(), 0, nil
	case phpser.KindObject:
		t, err := phpser.TimeOf(v)
		if err != nil {
			return 0, 0, fmt.Errorf("delay: a %s object is neither a number of seconds nor a date (DateInterval is not supported)", v.Class())
		}
		return t.Unix(), max(0, t.Unix()-now.Unix()), nil
	}
	return 0, 0, fmt.Errorf("delay: a PHP %s is not a number of seconds", v.Kind())
}

// jobMethods is what a command's class computes beside its properties: its methods,
// its attributes, and the declared defaults of its properties (plain name → value),
// which 13.x compares a property with before preferring an attribute.
type jobMethods struct {
	tries      func() *phpser.Value
	backoff    func() *phpser.Value
	retryAfter func() *phpser.Value
	retryUntil func() *phpser.Value
	attrs      map[string]*phpser.Value // "tries", "backoff", ... → the attribute's value
	defaults   map[string]*phpser.Value
}

// read is `$job->name ?? null` of cmd, the object PHP holds; with attrs (13.x)
// getAttributeValue: the property when set and not identical to its class default, else
// the class's attribute, else the property.
func (m jobMethods) read(cmd *phpser.Value, name string, attrs bool) *phpser.Value {
	v, set := cmd.Visible(name)
	if !attrs {
		if set {
			return v
		}
		return nil
	}
	if set {
		if d, ok := m.defaults[name]; !ok || !phpser.Identical(v, d) {
			return v
		}
	}
	if a, ok := m.attrs[name]; ok {
		return a
	}
	if set {
		return v
	}
	return nil
}

// methodsOf collects the optional methods of a Go command value.
func methodsOf(obj any, defaults map[string]*phpser.Value) jobMethods {
	m := jobMethods{defaults: defaults}
	if j, ok := obj.(job.TriesMethod); ok {
		m.tries = func() *phpser.Value { return phpser.Int(int64(j.Tries())) }
	}
	if j, ok := obj.(job.BackoffMethod); ok {
		m.backoff = func() *phpser.Value { return intsValue(j.Backoff()) }
	}
	if j, ok := obj.(job.RetryAfterMethod); ok {
		m.retryAfter = func() *phpser.Value { return phpser.Int(int64(j.RetryAfter())) }
	}
	if j, ok := obj.(job.RetryUntilMethod); ok {
		m.retryUntil = func() *phpser.Value {
			t := j.RetryUntil()
			if t.IsZero() {
				return phpser.Null()
			}
			return phpser.Int(t.Unix())
		}
	}
	if j, ok := obj.(job.AttributedJob); ok {
		a := j.PHPAttributes()
		m.attrs = map[string]*phpser.Value{}
		if a.Tries != nil {
			m.attrs["tries"] = phpser.Int(int64(*a.Tries))
		}
		if a.Backoff != nil {
			m.attrs["backoff"] = intsValue(a.Backoff)
		}
		if a.Timeout != nil {
			m.attrs["timeout"] = phpser.Int(int64(*a.Timeout))
		}
		if a.MaxExceptions != nil {
			m.attrs["maxExceptions"] = phpser.Int(int64(*a.MaxExceptions))
		}
		// An attribute without arguments reads as true (extractAttributeValue).
		if a.FailOnTimeout {
			m.attrs["failOnTimeout"] = phpser.Bool(true)
		}
		if a.DeleteWhenMissingModels {
			m.attrs["deleteWhenMissingModels"] = phpser.Bool(true)
		}
	}
	return m
}

// intsValue is a Go []int as PHP's method or attribute returns it: nil is null, one
// element an int, more a list.
func intsValue(xs []int) *phpser.Value {
	switch {
	case xs == nil:
		return phpser.Null()
	case len(xs) == 1:
		return phpser.Int(int64(xs[0]))
	}
	items := make([]*phpser.Value, len(xs))
	for i, x := range xs {
		items[i] = phpser.Int(int64(x))
	}
	return phpser.List(items...)
}
