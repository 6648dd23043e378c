package php

import "math"

// Round is PHP 8.0–8.3's round($value, $places) (PHP_ROUND_HALF_UP): the value is
// first rounded to the 15 significant digits a double holds ("pre-rounding"), then to
// places decimals, half away from zero, so round(1.005, 2) is 1.01 as in PHP although
// 1.005 is stored as 1.00499999999999989…. Horizon's Stopwatch rounds runtimes this way.
func Round(value float64, places int) float64 {
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
