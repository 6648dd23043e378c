package phpser

import (
	"math"
	"reflect"
	"strings"
	"testing"
)

// fastKinds has a field of every kind Marshal writes straight from memory, next to
// fields that take the general path.
type fastKinds struct {
	I8    int8            `php:"i8"`
	I16   int16           `php:"i16"`
	I32   int32           `php:"i32"`
	I     int             `php:"i"`
	F32   float32         `php:"f32"`
	F     float64         `php:"f"`
	B     bool            `php:"b"`
	S     string          `php:"s,protected"`
	PS    *string         `php:"ps"`
	PNil  *string         `php:"pnil"`
	PI    *int16          `php:"pi"`
	PB    *bool           `php:"pb"`
	Ints  []int64         `php:"ints"`
	None  []string        `php:"none"`
	Strs  []string        `php:"strs,private"`
	Bools []bool          `php:"bools"`
	Fl    []float32       `php:"fl"`
	Raw   []byte          `php:"raw"`
	Suit  suit            `php:"suit"`
	Opt   string          `php:"opt,omitempty"`
	Model ModelIdentifier `php:"model"`
	fastEmbedded
}

type fastEmbedded struct {
	Deep int    `php:"deep"`
	Name string `php:"name"`
}

func (fastKinds) PHPClass() string { return `Fx\Fast` }

func newFastKinds() fastKinds {
	s, n, yes := "ptr \"x\"", int16(-300), true
	return fastKinds{
		I8: -128, I16: 32767, I32: -7, I: math.MinInt64 + 1, F32: 0.1, F: -1.5e300, B: true,
		S: "é;\x00", PS: &s, PI: &n, PB: &yes, Ints: []int64{0, -1, math.MaxInt64},
		Strs: []string{"a", ""}, Bools: []bool{false, true}, Fl: []float32{float32(math.Inf(1)), 2.5},
		Raw: []byte("r"), Suit: "Hearts", Model: ModelIdentifier{Class: "M", ID: int64(1)},
		fastEmbedded: fastEmbedded{Deep: 99, Name: "emb"},
	}
}

// A struct inside an `any` is not addressable, so each field there takes the general
// encoder of its type: what the memory-reading path writes must be the same bytes.
func TestMarshalFastFieldsMatchGeneralPath(t *testing.T) {
	v := newFastKinds()
	general, err := Marshal([]any{v})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSuffix(strings.TrimPrefix(string(general), "a:1:{i:0;"), "}")
	for name, in := range map[string]any{"value": v, "pointer": &v, "list": []fastKinds{v}} {
		out, err := Marshal(in)
		if err != nil {
			t.Fatal(name, err)
		}
		got := string(out)
		if name == "list" {
			got = strings.TrimSuffix(strings.TrimPrefix(got, "a:1:{i:0;"), "}")
		}
		if got != want {
			t.Errorf("%s:\ngot  %q\nwant %q", name, got, want)
		}
	}
	for _, frag := range []string{`s:2:"i8";i:-128;`, `s:2:"ps";s:7:"ptr "x"";`, `s:4:"pnil";N;`,
		`s:3:"f32";d:0.10000000149011612;`, `s:2:"fl";a:2:{i:0;d:INF;i:1;d:2.5;}`, `s:4:"none";a:0:{}`,
		"s:13:\"\x00Fx\\Fast\x00strs\";a:2:{i:0;s:1:\"a\";i:1;s:0:\"\";}", `s:4:"deep";i:99;`} {
		if !strings.Contains(want, frag) {
			t.Errorf("missing %q in %q", frag, want)
		}
	}
}

// counting writes itself with a pointer receiver that changes it.
type counting struct{ N int }

func (c *counting) MarshalPHP() (*Value, error) {
	c.N++
	return Int(int64(c.N)), nil
}

type holdsCounting struct {
	A counting `php:"a"`
	B string   `php:"b"`
}

// A struct passed by value is read where the interface keeps it only when nothing
// can write to it; a pointer-receiver MarshalPHP gets a copy, every time.
func TestMarshalByValueNeverWritesTheInterfaceCopy(t *testing.T) {
	var in any = holdsCounting{B: "x"}
	for range 3 {
		out, err := Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if want := `a:2:{s:1:"a";i:1;s:1:"b";s:1:"x";}`; string(out) != want {
			t.Fatalf("got %q, want %q", out, want)
		}
	}
	if in.(holdsCounting).A.N != 0 {
		t.Errorf("the interface's value was written: %+v", in)
	}
	if encodesReadOnly(reflect.TypeFor[holdsCounting]()) || !encodesReadOnly(reflect.TypeFor[fastKinds]()) {
		t.Error("encodesReadOnly misjudges the types")
	}
}

// Marshal makes room for what the type wrote last time, so the output is allocated
// once, not once per size class it grows through.
func TestMarshalSizesItsBuffer(t *testing.T) {
	v := newFastKinds()
	want, err := Marshal(&v)
	if err != nil {
		t.Fatal(err)
	}
	var out []byte
	allocs := testing.AllocsPerRun(20, func() { out, _ = Marshal(&v) })
	if string(out) != string(want) || cap(out) > 2*len(out) {
		t.Errorf("len %d cap %d", len(out), cap(out))
	}
	if allocs > 3 {
		t.Errorf("%v allocations per Marshal", allocs)
	}
}
