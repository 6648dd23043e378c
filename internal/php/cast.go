package php

import (
	"math"
	"strconv"
	"strings"
)

// Intval reads a string as PHP 8's (int) cast does: leading whitespace, then the longest
// numeric prefix (sign, digits, fraction, exponent); "12abc" gives 12, "1e3" 1000, "1.9"
// 1, anything without a leading number 0. Results beyond int64 saturate, as PHP does.
func Intval(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	intStart := i
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intDigits := i - intStart
	isFloat := false
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		if intDigits > 0 || j > i+1 {
			isFloat, i = true, j
		}
	}
	if intDigits == 0 && !isFloat {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k > j {
			isFloat, i = true, k
		}
	}
	num := s[:i]
	if !isFloat {
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil { // out of range: ParseInt saturates and says so
			return n
		}
		return n
	}
	f, _ := strconv.ParseFloat(num, 64)
	switch {
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

// IsNumeric mirrors PHP 8's is_numeric for strings: optional surrounding whitespace,
// optional sign, decimal digits with an optional fraction, optional exponent.
func IsNumeric(s string) bool {
	s = strings.Trim(s, " \t\n\r\v\f")
	if s == "" {
		return false
	}
	if s[0] == '+' || s[0] == '-' {
		s = s[1:]
	}
	digits := 0
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i, digits = i+1, digits+1
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i, digits = i+1, digits+1
		}
	}
	if digits == 0 {
		return false
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && s[k] >= '0' && s[k] <= '9' {
			k++
		}
		if k == j {
			return false
		}
		i = k
	}
	return i == len(s)
}

// FloatString is PHP's (string) cast of a float, which uses `precision` (14), not
// serialize_precision: "1.5", "0.1", "1.0E+25", "-INF", "NAN". implode() and string
// interpolation write floats this way.
func FloatString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NAN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	}
	s := strconv.FormatFloat(f, 'G', 14, 64)
	if mant, exp, ok := strings.Cut(s, "E"); ok {
		if !strings.Contains(mant, ".") {
			mant += ".0"
		}
		// Go writes at least two exponent digits ("E+07"); PHP writes them as they are.
		sign := exp[:1]
		digits := strings.TrimLeft(exp[1:], "0")
		s = mant + "E" + sign + digits
	}
	return s
}
