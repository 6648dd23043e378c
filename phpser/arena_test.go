package phpser

import (
	"reflect"
	"testing"
)

type keepsByUnmarshaler struct{ v *Value }

func (k *keepsByUnmarshaler) UnmarshalPHP(v *Value) error { k.v = v; return nil }

type recursiveNode struct {
	Name string          `php:"name"`
	Kids []recursiveNode `php:"kids"`
}

type recursiveKeeper struct {
	Kids []recursiveKeeper `php:"kids"`
	Raw  *Value            `php:"raw"`
}

// Only types that may hold a piece of the tree make Unmarshal decode into fresh memory.
func TestKeepsTree(t *testing.T) {
	for _, c := range []struct {
		v    any
		want bool
	}{
		{new(fixturePodcast), false}, {new(any), false}, {new(Map), false}, {new(map[string][]any), false},
		{new(recursiveNode), false}, {new(Object), false},
		{new(*Value), true}, {new(Value), true}, {new([]Entry), true}, {new(map[string]Value), true},
		{new(keepsByUnmarshaler), true}, {new([]*keepsByUnmarshaler), true}, {new(recursiveKeeper), true},
		{new(struct {
			A   int
			Raw []Entry `php:",rest"`
		}), true},
	} {
		if got := keepsTree(reflect.TypeOf(c.v).Elem()); got != c.want {
			t.Errorf("keepsTree(%T) = %v, want %v", c.v, got, c.want)
		}
	}
}

// A value that keeps a node is decoded into memory of its own: later Unmarshals, which
// reuse their decoder's entries, leave it intact.
func TestUnmarshalKeepsNodesIntact(t *testing.T) {
	var kept struct {
		Raw *Value `php:"raw"`
		K   keepsByUnmarshaler
	}
	if err := Unmarshal([]byte(`a:2:{s:3:"raw";a:1:{i:0;s:3:"abc";}s:1:"K";O:1:"X":1:{s:1:"y";i:7;}}`), &kept); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		var x any
		if err := Unmarshal([]byte(`a:2:{s:3:"raw";a:1:{i:5;s:3:"zzz";}s:1:"K";O:1:"Q":1:{s:1:"w";d:2.5;}}`), &x); err != nil {
			t.Fatal(err)
		}
	}
	if e := kept.Raw.Index(0); e == nil || e.Str() != "abc" {
		t.Errorf("kept *Value now %v", kept.Raw)
	}
	if y, ok := kept.K.v.Prop("y"); !ok || y.Int() != 7 || kept.K.v.Class() != "X" {
		t.Errorf("node kept by an Unmarshaler now %v", kept.K.v)
	}
}

// countEntries counts the entries of a decoded tree, the root's slot included.
func countEntries(v *Value) int {
	n := 1
	for _, e := range v.ents() {
		n += countEntries(&e.Value)
	}
	return n
}

// The arena is sized from the input's ';' and '{': a payload without either inside its
// strings takes about what its entries need (size classes aside), even when the first
// chunk's estimate falls short, and one that carries a serialized command as a string
// is not sized for the command's entries as well.
func TestArenaSize(t *testing.T) {
	for _, c := range []struct {
		data  string
		slack int // entries beyond the tree's that the chunks may hold
	}{
		{string(readFixture(t, "array_nested.ser")), 2},
		{string(readFixture(t, "object_nested.ser")), 4},
		{`a:2:{i:0;a:3:{i:0;a:0:{}i:1;a:1:{i:0;N;}i:2;a:0:{}}i:1;N;}`, 4},
		{string(readFixture(t, "laravel_job.ser")), 16},
	} {
		d := new(decoder)
		v, err := Decoder{}.decodeWith(d, c.data)
		if err != nil {
			t.Fatal(err)
		}
		if n := countEntries(v); d.allocated > n+c.slack {
			t.Errorf("%.40s...: %d entries in chunks of %d", c.data, n, d.allocated)
		}
	}
}
