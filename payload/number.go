package payload

import (
	"math"
	"strconv"
)

// Integers in a payload arrive in more than one spelling. PHP writes plain decimals;
// the pop script's cjson rewrites every number with "%.14g", so 15+ digit integers come
// back as 1.2345678901234e+14; hand-written producers sometimes send numeric strings,
// which PHP coerces wherever the worker does arithmetic or comparisons. All of them are
// accepted as long as the value is a whole number that fits an int64.

// parseIntLiteral converts a JSON number literal to an int64. isInt says the literal
// has no fraction or exponent. The returned message is empty on success.
func parseIntLiteral(lit []byte, isInt bool) (int64, string) {
	if isInt {
		if v, ok := atoi64(lit); ok {
			return v, ""
		}
		return 0, string(lit) + " is out of the int64 range"
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil || math.IsInf(f, 0) {
		return 0, string(lit) + " is out of the int64 range"
	}
	return floatToInt(f, lit)
}

// floatToInt accepts integral floats within the int64 range.
func floatToInt(f float64, lit []byte) (int64, string) {
	if f != math.Trunc(f) {
		return 0, string(lit) + " is not an integer"
	}
	// 2^63 is exactly representable; everything below it converts exactly.
	if f >= 9223372036854775808.0 || f < -9223372036854775808.0 {
		return 0, string(lit) + " is out of the int64 range"
	}
	return int64(f), ""
}

// atoi64 parses an optionally negative decimal integer without allocating.
func atoi64(b []byte) (int64, bool) {
	neg := false
	if len(b) > 0 && b[0] == '-' {
		neg = true
		b = b[1:]
	}
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var u uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		u = u*10 + uint64(c-'0')
	}
	if neg {
		if u > 1<<63 {
			return 0, false
		}
		return int64(-u), true //nolint:gosec // range checked above
	}
	if u > math.MaxInt64 {
		return 0, false
	}
	return int64(u), true
}

// numericString reports whether b is a PHP 8 numeric string: optional surrounding
// whitespace, an optional sign, decimal digits with an optional fraction and exponent.
// Hex, "inf", "nan" and leading-numeric strings such as "3abc" are not numeric.
// It returns the trimmed text and whether that is written as a plain integer.
func numericString(b []byte) (trimmed []byte, isInt bool, ok bool) {
	isSpace := func(c byte) bool {
		return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
	}
	for len(b) > 0 && isSpace(b[0]) {
		b = b[1:]
	}
	for len(b) > 0 && isSpace(b[len(b)-1]) {
		b = b[:len(b)-1]
	}
	i := 0
	if i < len(b) && (b[i] == '+' || b[i] == '-') {
		i++
	}
	digits := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
		digits++
	}
	isInt = true
	if i < len(b) && b[i] == '.' {
		isInt = false
		i++
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
			digits++
		}
	}
	if digits == 0 {
		return nil, false, false
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		isInt = false
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		d := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		if i == d {
			return nil, false, false
		}
	}
	if i != len(b) {
		return nil, false, false
	}
	return b, isInt, true
}

// parseIntString converts a numeric string to an int64 the way the worker's arithmetic
// would see it; the message is empty on success.
func parseIntString(s []byte) (int64, string) {
	t, isInt, ok := numericString(s)
	if !ok {
		return 0, strconv.Quote(string(s)) + " is not a numeric string"
	}
	if isInt {
		if t[0] == '+' {
			t = t[1:]
		}
		if v, ok := atoi64(t); ok {
			return v, ""
		}
	}
	f, err := strconv.ParseFloat(string(t), 64)
	if err != nil && !isRangeErr(err) {
		return 0, strconv.Quote(string(s)) + " is not a numeric string"
	}
	if math.IsInf(f, 0) {
		return 0, strconv.Quote(string(s)) + " is out of the int64 range"
	}
	v, msg := floatToInt(f, nil)
	if msg != "" {
		return 0, strconv.Quote(string(s)) + msg
	}
	return v, ""
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
