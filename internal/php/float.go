package php

// Floats as PHP 7.1+ prints them with serialize_precision=-1: the shortest digits that
// round-trip (zend_dtoa mode 0), laid out by php_gcvt with 17 as the precision.
// serialize() uses 'E' as the exponent letter (`d:1.0E+25;`), json_encode uses 'e'
// (`1.0e+25`). Both phpser and the JSON envelope writer need exactly these bytes.

import (
	"math"
	"strconv"
)

// AppendFloat appends f as PHP prints it; exp is 'E' for serialize() and 'e' for
// json_encode(). INF, -INF and NAN are written as PHP's serialize() writes them.
func AppendFloat(dst []byte, f float64, exp byte) []byte {
	switch {
	case math.IsNaN(f):
		return append(dst, "NAN"...)
	case math.IsInf(f, 1):
		return append(dst, "INF"...)
	case math.IsInf(f, -1):
		return append(dst, "-INF"...)
	}
	// Between 1e-3 and 1e15 the decimal point always falls where php_gcvt writes the
	// plain layout (exponent -3 to 17), and strconv's 'f' with the shortest digits
	// writes exactly that, without the digits being formatted twice below.
	if a := math.Abs(f); a >= 1e-3 && a < 1e15 {
		return strconv.AppendFloat(dst, f, 'f', -1, 64)
	}
	if math.Signbit(f) {
		dst = append(dst, '-')
		f = -f
	}
	if f == 0 {
		return append(dst, '0')
	}
	// Shortest round-trip digits and the decimal exponent, as zend_dtoa(mode 0) gives them.
	var scratch [32]byte
	e := strconv.AppendFloat(scratch[:0], f, 'e', -1, 64) // d.ddddde±XX
	var digits [24]byte
	nd := 0
	i := 0
	for ; i < len(e) && e[i] != 'e'; i++ {
		if e[i] != '.' {
			digits[nd] = e[i]
			nd++
		}
	}
	x, _ := strconv.Atoi(string(e[i+1:]))
	decpt := x + 1 // position of the decimal point relative to the first digit
	const precision = 17

	if (decpt < 0 && decpt < -3) || (decpt >= 0 && decpt > precision) {
		// Exponential form: d.ddd[E]±x, with ".0" when there is a single digit.
		dst = append(dst, digits[0], '.')
		if nd == 1 {
			dst = append(dst, '0')
		} else {
			dst = append(dst, digits[1:nd]...)
		}
		dst = append(dst, exp)
		decpt--
		if decpt < 0 {
			dst = append(dst, '-')
			decpt = -decpt
		} else {
			dst = append(dst, '+')
		}
		return strconv.AppendInt(dst, int64(decpt), 10)
	}
	if decpt <= 0 {
		// 0.000ddd
		dst = append(dst, '0', '.')
		for ; decpt < 0; decpt++ {
			dst = append(dst, '0')
		}
		return append(dst, digits[:nd]...)
	}
	// ddd[.ddd], padding with zeros up to the decimal point.
	for j := 0; j < decpt; j++ {
		if j < nd {
			dst = append(dst, digits[j])
		} else {
			dst = append(dst, '0')
		}
	}
	if decpt < nd {
		dst = append(dst, '.')
		dst = append(dst, digits[decpt:nd]...)
	}
	return dst
}

// FormatFloat is AppendFloat into a new string.
func FormatFloat(f float64, exp byte) string {
	return string(AppendFloat(nil, f, exp))
}
