package database

import (
	"strconv"
	"testing"
)

// FuzzSerializedNumber: any stored value is read without a panic; a serialized int
// reads as itself, and what is not PHP's int, float or string never as a number.
func FuzzSerializedNumber(f *testing.F) {
	for _, s := range []string{"i:5;", "i:-3;", "d:2.5;", `s:1:"7";`, `s:3:" 8 ";`, "b:1;", "N;", "", "i:;", `s:0:"";`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		n, ok := serializedNumber(v)
		if !ok {
			return
		}
		switch v[0] {
		case 'i':
			if want, err := strconv.ParseInt(v[2:len(v)-1], 10, 64); err != nil || n != want {
				t.Fatalf("%q read as %d", v, n)
			}
		case 'd', 's':
		default:
			t.Fatalf("%q read as the number %d", v, n)
		}
	})
}

func TestSerializedNumber(t *testing.T) {
	for v, want := range map[string]int64{"i:5;": 5, "i:-3;": -3, "d:2.9;": 2, `s:1:"7";`: 7} {
		if n, ok := serializedNumber(v); !ok || n != want {
			t.Errorf("%q: %d %v, want %d", v, n, ok, want)
		}
	}
	for _, v := range []string{"b:1;", "N;", `s:1:"x";`, "a:0:{}", "i:x;"} {
		if _, ok := serializedNumber(v); ok {
			t.Errorf("%q read as a number", v)
		}
	}
}
