package payload

import (
	"fmt"
	"math"
	"strconv"
)

// ResetForRetry returns the payload `php artisan queue:retry` pushes for a failed job
// (RetryCommand in Laravel 8): the stored payload is decoded with json_decode($s, true),
// attempts is set to 0 when it is set and not null, and the result is written with plain
// json_encode (no flags: \uXXXX escapes, \/), then decoded and encoded once more, as the
// command does in two steps. So the job keeps its uuid, id, key order (a scrambled
// reserved copy stays scrambled), and every {} becomes [].
//
// RetryCommand's second step also replaces retryUntil with a fresh value when the
// unserialized command object has a retryUntil() method. That needs the PHP class, so
// ResetForRetry leaves retryUntil as stored; a caller that knows the job's policy can set
// it with DecodeValue/Set/AppendJSON.
//
// Where PHP's json_decode would fail (invalid JSON or UTF-8, over 511 nested arrays) or
// json_encode would (a number beyond the double range), queue:retry pushes the string
// "null" — a job no worker can run; ResetForRetry returns an error instead.
func ResetForRetry(raw []byte) ([]byte, error) {
	v, err := DecodeValue(raw)
	if err != nil {
		return nil, fmt.Errorf("queue:retry: stored payload is not valid for PHP's json_decode: %w", err)
	}
	if a := v.Get("attempts"); a != nil && a.Kind != KindNull {
		*a = Value{Kind: KindInt, Int: 0}
	}
	out, err := v.AppendJSON(make([]byte, 0, len(raw)+len(raw)/8), 0)
	if err != nil {
		return nil, fmt.Errorf("queue:retry: %w", err)
	}
	// The second json_decode/json_encode pass is not a no-op: a float -0.0 is written as
	// "-0" by the first pass and read back as the integer 0.
	v, err = DecodeValue(out)
	if err != nil {
		return nil, fmt.Errorf("queue:retry: re-reading the reset payload: %w", err)
	}
	return v.AppendJSON(out[:0:0], 0)
}

// CheckPushRaw refuses a payload that would be lost or unreadable if pushed raw onto a
// Laravel Redis queue. The pop script LPOPs the job and then decodes it with cjson and
// computes attempts + 1; if that fails the job is already gone from the list and never
// reaches :reserved (silently: phpredis returns false). So the payload must be a JSON
// object, with attempts present and numeric (a number, or a numeric string, which Lua
// coerces), no number beyond the double range (cjson cannot re-encode it) and no
// unpaired surrogate escape. It must also be something PHP's json_decode reads, or a
// PHP worker that pops it cannot run it: valid UTF-8, at most 511 nested arrays/objects.
func CheckPushRaw(raw []byte) error {
	s := scanner{buf: raw}
	s.ws()
	if s.pos >= len(raw) || raw[s.pos] != '{' {
		return &Error{Offset: s.pos, Msg: fmt.Sprintf("a queued payload must be a JSON object, found %s "+
			"(the pop script could not read its attempts and the job would be lost)", s.describe())}
	}
	v, err := DecodeValue(raw)
	if err != nil {
		return fmt.Errorf("%w (a PHP worker could not decode the payload)", err)
	}
	if path, ok := v.infPath(); ok {
		return &Error{Offset: -1, Path: path, Msg: "number beyond the double range: " +
			"the pop script's cjson cannot re-encode it and the job would be lost"}
	}
	a := v.Get("attempts")
	if a == nil {
		return &Error{Path: "attempts", Offset: -1, Msg: "missing: the pop script does arithmetic on attempts, " +
			"fails after its LPOP and the job would be lost; push \"attempts\":0"}
	}
	switch a.Kind {
	case KindInt, KindFloat:
		return nil
	case KindString:
		if t, _, ok := numericString([]byte(a.Str)); ok {
			if f, err := strconv.ParseFloat(string(t), 64); err == nil && !math.IsInf(f, 0) {
				return nil
			}
		}
	}
	return &Error{Path: "attempts", Offset: -1, Msg: fmt.Sprintf("%s is not numeric: the pop script's "+
		"attempts + 1 would fail after its LPOP and the job would be lost", describeKind(a))}
}

func describeKind(v *Value) string {
	switch v.Kind {
	case KindNull:
		return "null"
	case KindBool:
		return "a boolean"
	case KindString:
		return fmt.Sprintf("the string %q", v.Str)
	case KindArray:
		return "an array"
	}
	return "the value"
}
