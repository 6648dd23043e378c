package phpser

import (
	"math"
	"testing"
	"unsafe"
)

// Key packs the int-ness of a key into its number (key 0 being s "0", n 1); every key
// must still read back as itself and compare equal only to itself.
func TestKeyRepresentation(t *testing.T) {
	keys := []Key{IntKey(0), IntKey(1), IntKey(-1), IntKey(math.MinInt64), IntKey(math.MaxInt64),
		StrKey(""), StrKey("0"), StrKey("1"), StrKey("\x00*\x00p"), {}}
	for i, k := range keys {
		isInt := i < 5
		if k.IsInt() != isInt {
			t.Errorf("%#v: IsInt() = %v", k, k.IsInt())
		}
		if isInt {
			want := []int64{0, 1, -1, math.MinInt64, math.MaxInt64}[i]
			if k.Int() != want || k.Str() != "" || IntKey(k.Int()) != k {
				t.Errorf("int key %d reads back as Int %d Str %q", want, k.Int(), k.Str())
			}
		} else if k.Int() != 0 || StrKey(k.Str()) != k {
			t.Errorf("string key %q reads back as Int %d Str %q", k.Str(), k.Int(), k.Str())
		}
		for j, o := range keys[:len(keys)-1] {
			if (k == o) != (i == j) && !(i == len(keys)-1 && j == 5) {
				t.Errorf("%#v == %#v is %v", k, o, k == o)
			}
		}
	}
	// The decoder writes both kinds into the same memory: they stay apart.
	v, err := DecodeString(`a:4:{i:0;i:1;s:1:"0";i:2;s:0:"";i:3;i:1;i:4;}`)
	if err != nil {
		t.Fatal(err)
	}
	ents := v.Entries()
	if !ents[0].Key.IsInt() || ents[0].Key.Int() != 0 || ents[1].Key.IsInt() || ents[1].Key.Str() != "0" ||
		ents[2].Key != StrKey("") || ents[3].Key != IntKey(1) || ents[0].Key == ents[1].Key {
		t.Errorf("decoded keys: %#v", ents)
	}
	if out, err := Encode(v); err != nil || string(out) != `a:4:{i:0;i:1;s:1:"0";i:2;s:0:"";i:3;i:1;i:4;}` {
		t.Errorf("Encode = %q, %v", out, err)
	}
	// The point of the packing: an entry is 64 bytes, a cache line.
	if s := unsafe.Sizeof(Entry{}); s != 64 {
		t.Errorf("Entry is %d bytes", s)
	}
}
