package phpser

import (
	"math"
	"testing"
)

// TestIdentical is PHP's ===: same type and value, 0.0 === -0.0, NAN !== NAN, arrays
// with the same keys in the same order ("1" and 1 are the same key), objects never.
func TestIdentical(t *testing.T) {
	arr := func(ents ...Entry) *Value { return NewArray(ents...) }
	for _, tc := range []struct {
		a, b *Value
		want bool
	}{
		{nil, Null(), true},
		{Int(3), Int(3), true},
		{Int(3), Float(3), false},
		{String("3"), Int(3), false},
		{Float(0), Float(math.Copysign(0, -1)), true},
		{Float(math.NaN()), Float(math.NaN()), false},
		{arr(IntEntry(0, Int(1))), arr(StrEntry("0", Int(1))), true},
		{arr(StrEntry("a", Int(1)), StrEntry("b", Int(2))), arr(StrEntry("b", Int(2)), StrEntry("a", Int(1))), false},
		{NewObject("A"), NewObject("A"), false},
		{NewEnum("E", "A"), NewEnum("E", "A"), true},
	} {
		if got := Identical(tc.a, tc.b); got != tc.want {
			t.Errorf("Identical(%v, %v) = %v", tc.a, tc.b, got)
		}
	}
}
