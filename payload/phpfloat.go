package payload

import (
	"math"
	"strconv"
	"strings"
)

// PHPFloatString formats f the way PHP converts a float to a string with its default
// precision ini setting of 14 (echo, string concatenation, str_replace): at most 14
// significant digits, trailing zeros dropped, exponent form "1.0E+25" when the decimal
// exponent is below -4 or above 14. Horizon's timestamps (microtime(true)) and runtimes
// take this form: 1729411372.3932 has four decimals because ten digits come first.
func PHPFloatString(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NAN"
	case math.IsInf(f, 1):
		return "INF"
	case math.IsInf(f, -1):
		return "-INF"
	case f == 0:
		if math.Signbit(f) {
			return "-0"
		}
		return "0"
	}
	// 14 significant digits, correctly rounded, as zend_gcvt asks zend_dtoa (mode 2).
	e := strconv.FormatFloat(f, 'e', 13, 64) // [-]d.ddddddddddddde±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	mant, exp, _ := strings.Cut(e, "e")
	x, _ := strconv.Atoi(exp)
	digits := []byte(mant[:1] + mant[2:])
	for len(digits) > 1 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
	}
	decpt := x + 1 // position of the decimal point after the first digits
	var b []byte
	if neg {
		b = append(b, '-')
	}
	switch {
	case decpt < -3 || decpt > 14:
		b = append(b, digits[0], '.')
		if len(digits) == 1 {
			b = append(b, '0')
		} else {
			b = append(b, digits[1:]...)
		}
		b = append(b, 'E')
		if x < 0 {
			b = append(b, '-')
			x = -x
		} else {
			b = append(b, '+')
		}
		b = strconv.AppendInt(b, int64(x), 10)
	case decpt <= 0:
		b = append(b, '0', '.')
		for i := 0; i < -decpt; i++ {
			b = append(b, '0')
		}
		b = append(b, digits...)
	case decpt >= len(digits):
		b = append(b, digits...)
		for i := len(digits); i < decpt; i++ {
			b = append(b, '0')
		}
	default:
		b = append(b, digits[:decpt]...)
		b = append(b, '.')
		b = append(b, digits[decpt:]...)
	}
	return string(b)
}

// PHPRound is PHP 8.0–8.3's round($value, $places) (PHP_ROUND_HALF_UP): the value is
// first rounded to the 15 significant digits a double holds ("pre-rounding"), then to
// places decimals, half away from zero, so round(1.005, 2) is 1.01 as in PHP although
// 1.005 is stored as 1.00499999999999989…. Horizon's Stopwatch rounds runtimes this way.
func PHPRound(value float64, places int) float64 {
	if math.IsNaN(value) || math.IsInf(value, 0) || value == 0 {
		return value
	}
	precisionPlaces := 14 - int(math.Floor(math.Log10(math.Abs(value))))
	f1 := math.Pow10(absInt(places))
	var tmp float64
	if precisionPlaces > places && precisionPlaces-15 < places {
		tmp = roundHalfUp(roundScale(value, precisionPlaces))
		use := places - precisionPlaces
		if use < -60 {
			use = -60
		}
		tmp /= math.Pow10(absInt(use))
	} else {
		tmp = roundScale(value, places)
		if math.Abs(tmp) >= 1e15 {
			return value
		}
	}
	tmp = roundHalfUp(tmp)
	if places > 0 {
		tmp /= f1
	} else {
		tmp *= f1
	}
	return tmp
}

func roundScale(v float64, places int) float64 {
	f := math.Pow10(absInt(places))
	if places >= 0 {
		return v * f
	}
	return v / f
}

// roundHalfUp is php_round_helper for PHP_ROUND_HALF_UP: half away from zero.
func roundHalfUp(v float64) float64 {
	if v >= 0 {
		return math.Floor(v + 0.5)
	}
	return math.Ceil(v - 0.5)
}

func absInt(n int) int {
	if n < 0 {
		return -n
	}
	return n
}
