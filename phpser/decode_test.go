package phpser

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

func mustDecode(t testing.TB, s string) *Value {
	t.Helper()
	v, err := DecodeString(s)
	if err != nil {
		t.Fatalf("Decode(%q): %v", s, err)
	}
	return v
}

func TestDecodeScalars(t *testing.T) {
	v := mustDecode(t, `a:9:{i:0;N;i:1;b:1;i:2;b:0;i:3;i:-9223372036854775808;i:4;i:9223372036854775807;i:5;d:-0;i:6;d:1.0E+25;i:7;d:NAN;i:8;s:9:"a"b;c\0\x";}`)
	e := v.Entries()
	if len(e) != 9 || v.Kind() != KindArray {
		t.Fatalf("got %d entries of %v", len(e), v.Kind())
	}
	if !e[0].Value.IsNull() || !e[1].Value.Bool() || e[2].Value.Bool() {
		t.Error("null/bool wrong")
	}
	if e[3].Value.Int() != math.MinInt64 || e[4].Value.Int() != math.MaxInt64 {
		t.Error("int64 extremes wrong")
	}
	if f := e[5].Value.Float(); f != 0 || !math.Signbit(f) {
		t.Errorf("-0 decoded as %v", f)
	}
	if e[6].Value.Float() != 1e25 || !math.IsNaN(e[7].Value.Float()) {
		t.Error("floats wrong")
	}
	if got := e[8].Value.Str(); got != `a"b;c\0\x` {
		t.Errorf("string = %q: bytes must be taken as they are, with no escapes", got)
	}
	if off, ok := e[8].Value.Offset(); !ok || off != strings.Index(`a:9:{i:0;N;i:1;b:1;i:2;b:0;i:3;i:-9223372036854775808;i:4;i:9223372036854775807;i:5;d:-0;i:6;d:1.0E+25;i:7;d:NAN;i:8;s:9:`, "s:9:") {
		t.Errorf("offset = %d %v", off, ok)
	}
}

func TestDecodeNonCanonicalKeepsSpelling(t *testing.T) {
	// PHP accepts these spellings; Encode gives back the same bytes.
	for _, s := range []string{`i:+5;`, `i:007;`, `i:-0;`, `d:.5;`, `d:5.;`, `d:+1.5e3;`, `d:0.10000000000000001;`, `d:1e400;`} {
		v := mustDecode(t, s)
		out, err := Encode(v)
		if err != nil || string(out) != s {
			t.Errorf("Encode(Decode(%q)) = %q, %v", s, out, err)
		}
	}
	if v := mustDecode(t, `i:007;`); v.Int() != 7 {
		t.Errorf("i:007; = %d", v.Int())
	}
	if v := mustDecode(t, `d:1e400;`); !math.IsInf(v.Float(), 1) {
		t.Errorf("d:1e400; = %v, PHP makes it INF", v.Float())
	}
}

func TestDecodeObjectsAndVisibility(t *testing.T) {
	v := mustDecode(t, "O:6:\"Fx\\Vis\":4:{s:3:\"pub\";i:1;s:7:\"\x00*\x00prot\";i:2;s:12:\"\x00Fx\\Vis\x00priv\";i:3;i:0;s:1:\"x\";}")
	if v.Class() != `Fx\Vis` || v.Len() != 4 {
		t.Fatalf("class %q len %d", v.Class(), v.Len())
	}
	want := []struct {
		name  string
		vis   Visibility
		class string
	}{{"pub", Public, ""}, {"prot", Protected, ""}, {"priv", Private, `Fx\Vis`}, {"0", Public, ""}}
	for i, w := range want {
		name, vis, class := v.Entries()[i].Key.Name()
		if name != w.name || vis != w.vis || class != w.class {
			t.Errorf("prop %d = %q %v %q, want %q %v %q", i, name, vis, class, w.name, w.vis, w.class)
		}
	}
	if !v.Entries()[3].Key.IsInt() {
		t.Error("__serialize int key lost")
	}
	for name, want := range map[string]int64{"pub": 1, "prot": 2, "priv": 3} {
		p, ok := v.Prop(name)
		if !ok || p.Int() != want {
			t.Errorf("Prop(%q) = %v %v", name, p, ok)
		}
	}
	if _, ok := v.Prop("nope"); ok {
		t.Error("Prop found a missing name")
	}
}

func TestDecodeCustomAndEnum(t *testing.T) {
	v := mustDecode(t, `a:2:{i:0;C:3:"A\B":5:{x}y;}}i:1;E:10:"App\S:Hi_2";}`)
	c := v.Index(0)
	if c.Kind() != KindCustom || c.Class() != `A\B` || c.CustomData() != "x}y;}"[:5] {
		t.Errorf("custom = %v %q %q", c.Kind(), c.Class(), c.CustomData())
	}
	e := v.Index(1)
	if e.Kind() != KindEnum || e.EnumClass() != `App\S` || e.EnumCase() != "Hi_2" || e.Class() != `App\S` {
		t.Errorf("enum = %q %q", e.EnumClass(), e.EnumCase())
	}
}

func TestDecodeReferences(t *testing.T) {
	// [$o, $o, &$s, &$s] with $o an object: PHP writes r: for the second object handle
	// and R: for the second reference, numbering values from 1 in stream order.
	// Values inside the object are numbered too: 1 array, 2 object, 3 its int, 4 r:2, 5 "x".
	v := mustDecode(t, `a:4:{i:0;O:8:"stdClass":1:{s:1:"a";i:1;}i:1;r:2;i:2;s:1:"x";i:3;R:5;}`)
	r := v.Index(1)
	if r.Kind() != KindRef || r.IsReference() || r.RefIndex() != 2 || r.Target() != v.Index(0) {
		t.Fatalf("r:2 resolved to %v", r.Target())
	}
	R := v.Index(3)
	if !R.IsReference() || R.Target() != v.Index(2) || R.Deref().Str() != "x" {
		t.Fatalf("R:5 resolved to %v", R.Target())
	}
	// r: takes a number itself (3 here), so the string is 4.
	v = mustDecode(t, `a:4:{i:0;O:8:"stdClass":0:{}i:1;r:2;i:2;s:1:"y";i:3;R:4;}`)
	if v.Index(3).Deref().Str() != "y" {
		t.Fatalf("numbering after r: is off: %v", v.Index(3).Deref())
	}
	// A cycle is a pointer back up the tree.
	v = mustDecode(t, `O:4:"Node":1:{s:6:"parent";r:1;}`)
	if p, _ := v.Prop("parent"); p.Target() != v {
		t.Fatal("cycle does not point at the root")
	}
	// PHP accepts R: to the array being built.
	v = mustDecode(t, `a:1:{i:0;R:1;}`)
	if v.Index(0).Target() != v {
		t.Fatal("R:1 inside its own array")
	}
}

func TestDecodeErrors(t *testing.T) {
	cases := []struct {
		in   string
		msg  string
		off  int
		none bool
	}{
		{in: ``, msg: "unexpected end of input"},
		{in: `N`, msg: "unexpected end of input, expected ';'", off: 1},
		{in: `b:7;`, msg: "expected '0' or '1', found '7'", off: 2},
		{in: `b:01;`, msg: "expected ';', found '1'", off: 3},
		{in: `i:;`, msg: "expected a digit", off: 2},
		{in: `i:99999999999999999999;`, msg: "out of int64 range", off: 2},
		{in: `i:9223372036854775808;`, msg: "out of int64 range", off: 2},
		{in: `i:5`, msg: "unexpected end of input, expected ';'", off: 3},
		{in: `d:;`, msg: "expected a digit", off: 2},
		{in: `d:1e;`, msg: "expected an exponent digit", off: 4},
		{in: `d:+INF;`, msg: "expected a digit", off: 3},
		{in: `d:-NAN;`, msg: "expected a digit", off: 3},
		{in: `s:-1:"";`, msg: "negative length", off: 2},
		{in: `s:2000000000:"abc";`, msg: "length 2000000000 exceeds", off: 2},
		{in: `s:3:"ab";`, msg: "expected '\"' after 3 bytes", off: 8},
		{in: `s:3:"abc"`, msg: "unexpected end of input, expected ';'", off: 9},
		{in: `a:-1:{}`, msg: "negative length", off: 2},
		{in: `a:2000000000:{}`, msg: "array of 2000000000 elements exceeds the 3 bytes left", off: 2},
		{in: `a:1:{i:0;a:200000000:{}}`, msg: "array of 200000000 elements exceeds", off: 11},
		{in: `a:2:{i:0;N;}`, msg: "array of 2 elements exceeds the 9 bytes left", off: 2},
		{in: `O:8:"stdClass":100:{}`, msg: "object of 100 properties exceeds the 3 bytes left", off: 15},
		{in: `a:1:{i:0;r:99999999999999999999999;}`, msg: "r:99999999999999999999999 refers to no earlier value", off: 9},
		{in: `a:1:{}`, msg: "array of 1 elements exceeds the 3 bytes left", off: 2},
		{in: `a:1:{      }`, msg: "expected a key (i: or s:), found ' '", off: 5},
		{in: `a:1:{i:0;i:1;i:1;i:2;}`, msg: "expected '}' after 1 elements, found 'i'", off: 13},
		{in: `a:1:{i:0;i:1;`, msg: "unexpected end of input, expected '}'", off: 13},
		{in: `a:1:{d:1.5;i:1;}`, msg: "expected a key", off: 5},
		{in: `a:1:{N;i:1;}`, msg: "expected a key", off: 5},
		{in: `a:0:{}x`, msg: "unexpected data after the value", off: 6},
		{in: `a:0:{};`, msg: "unexpected data after the value", off: 6},
		{in: `O:0:"":0:{}`, msg: "invalid class name", off: 5},
		{in: `O:9:"std-Class":0:{}`, msg: "invalid class name", off: 5},
		{in: `O:8:"stdClass":1:{}`, msg: "object of 1 properties exceeds the 3 bytes left", off: 15},
		{in: `O:8:"stdClass":1:{      }`, msg: "expected a key", off: 18},
		{in: `O:8:"stdClass":0:{`, msg: "unexpected end of input", off: 18},
		{in: `C:3:"A\B":5:{abc}`, msg: "length 5 exceeds the 4 bytes left", off: 10},
		{in: `C:3:"A\B":3:{abcd}`, msg: "expected '}' after 3 bytes", off: 16},
		{in: `E:3:"Foo";`, msg: "invalid enum name", off: 0},
		{in: `E:4:"Foo:";`, msg: "invalid enum name", off: 0},
		{in: `r:1;`, msg: "r:1 refers to no earlier value", off: 0},
		{in: `a:1:{i:0;r:0;}`, msg: "r:0 refers to no earlier value", off: 9},
		{in: `a:1:{i:0;r:3;}`, msg: "r:3 refers to no earlier value", off: 9},
		{in: `a:1:{i:0;R:2;}`, msg: "R:2 refers to no earlier value", off: 9},
		{in: `a:1:{i:0;r:1;}`, msg: "r:1 refers to a array, not an object", off: 9},
		{in: `a:2:{i:0;i:5;i:1;r:2;}`, msg: "r:2 refers to a int, not an object", off: 17},
		{in: `a:1:{r:1;i:0;}`, msg: "expected a key", off: 5},
		{in: `x:1;`, msg: "unknown value type 'x'", off: 0},
		{in: `S:1:"a";`, msg: "unknown value type 'S'", off: 0},
	}
	for _, c := range cases {
		v, err := DecodeString(c.in)
		if c.in == "" {
			v, err = Decode(nil)
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("Decode(%q) = %v, %v; want a SyntaxError", c.in, v, err)
			continue
		}
		if !strings.Contains(se.Msg, c.msg) || se.Offset != c.off {
			t.Errorf("Decode(%q) error %q at %d; want %q at %d", c.in, se.Msg, se.Offset, c.msg, c.off)
		}
		if !strings.HasPrefix(err.Error(), "phpser: ") || !strings.HasSuffix(err.Error(), " at offset "+itoa(se.Offset)) {
			t.Errorf("Error() = %q", err.Error())
		}
	}
}

func itoa(n int) string { return string(IntKey(int64(n)).String()) }

func TestDecodeEveryTruncationFails(t *testing.T) {
	for _, g := range loadGoldens(t) {
		for i := 0; i < len(g.ser); i++ {
			if v, err := Decode(g.ser[:i]); err == nil {
				t.Fatalf("%s: prefix of %d bytes accepted: %v", g.name, i, v)
			}
		}
	}
}

func TestDecodeMutationsNeverPanic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, g := range loadGoldens(t) {
		for n := 0; n < 500; n++ {
			b := bytes.Clone(g.ser)
			for k := r.IntN(3) + 1; k > 0; k-- {
				b[r.IntN(len(b))] = byte(r.IntN(256))
			}
			v, err := Decode(b)
			if err != nil {
				continue
			}
			// Whatever is accepted must survive the rest of the pipeline.
			out, err := Encode(v)
			if err != nil {
				t.Fatalf("%q decoded but does not encode: %v", b, err)
			}
			if v2, err := Decode(out); err != nil || !Equal(v, v2) {
				t.Fatalf("%q: re-decode differs (%v)", b, err)
			}
			_, _ = MarshalReadable(v)
			var x any
			_ = v.Decode(&x)
		}
	}
}

// The list-then-map backtracking that makes some decoders exponential costs nothing
// in a single-pass decoder; this would take hours if it were exponential.
func TestDecodeNoBacktracking(t *testing.T) {
	s := "i:1;"
	for i := 0; i < 24; i++ {
		s = `a:2:{i:0;` + s + `s:1:"x";i:1;}`
	}
	if _, err := DecodeString(s); err != nil {
		t.Fatal(err)
	}
}

func TestDecodeCopiesInput(t *testing.T) {
	data := []byte(`a:1:{s:3:"key";s:5:"value";}`)
	v, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	for i := range data {
		data[i] = 'X'
	}
	if v.Entries()[0].Key.Str() != "key" || v.Index(0).Str() != "value" {
		t.Fatal("decoded tree shares the caller's buffer")
	}
}

func TestDecodeLargeArray(t *testing.T) {
	// More entries than the arena's first chunk and the direct-decode limit.
	var b strings.Builder
	n := 20000
	b.WriteString("a:" + itoa(n) + ":{")
	for i := 0; i < n; i++ {
		b.WriteString("i:" + itoa(i) + ";a:2:{i:0;s:1:\"x\";i:1;i:" + itoa(i) + ";}")
	}
	b.WriteString("}")
	v := mustDecode(t, b.String())
	if v.Len() != n || v.Index(n-1).Index(1).Int() != int64(n-1) {
		t.Fatalf("len %d", v.Len())
	}
	out, _ := Encode(v)
	if string(out) != b.String() {
		t.Fatal("large array does not re-encode exactly")
	}
}

// Opis (and Laravel ≤8) closures are C: objects whose unserialize() unserializes the
// data again; PHP numbers the values inside, so r:9 below (written by PHP 8.2) is the
// stdClass after a closure holding six values.
func TestDecodeNestedSerializableNumbering(t *testing.T) {
	inner := `a:5:{s:3:"use";a:0:{}s:8:"function";s:0:"";s:5:"scope";N;s:4:"this";N;s:4:"self";s:32:"00000000000000040000000000000000";}`
	for _, data := range []string{inner, "@c2lnbmF0dXJl." + inner} {
		closure, _ := Encode(NewCustom(`Opis\Closure\SerializableClosure`, data))
		in := `a:3:{i:0;` + string(closure) + `i:1;O:8:"stdClass":1:{s:1:"a";i:1;}i:2;r:9;}`
		v := mustDecode(t, in)
		if v.Index(2).Target() != v.Index(1) {
			t.Fatalf("%s: r:9 resolved to %v", in, v.Index(2).Target())
		}
		// A reference into the closure's own values cannot be followed.
		bad := `a:3:{i:0;` + string(closure) + `i:1;O:8:"stdClass":1:{s:1:"a";i:1;}i:2;R:4;}`
		if _, err := DecodeString(bad); err == nil || !strings.Contains(err.Error(), "inside the data of a C: object") {
			t.Errorf("R:4 into the closure: %v", err)
		}
	}
	// Data that is not serialized (a UUID, JSON) takes no numbers.
	v := mustDecode(t, `a:3:{i:0;C:16:"Ramsey\Uuid\Uuid":36:{8a32225e-4b2f-4756-b127-01ddfb4f16a0}i:1;O:8:"stdClass":0:{}i:2;r:3;}`)
	if v.Index(2).Target() != v.Index(1) {
		t.Fatal("UUID data counted")
	}
}

// Floats of up to 15 digits without an exponent take a fast path in the decoder; its
// value must be ParseFloat's, bit for bit, and the spelling must come back on Encode.
func TestDecodeShortFloatsMatchParseFloat(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	spellings := []string{"0", "-0", "+0", "0.0", "-0.0", ".5", "5.", "-.25", "000.100", "999999999999999",
		"0.000000000000001", "123456789.012345", "-1.5", "0.1", "0.75", "1", "+7.25"}
	for range 20000 {
		digits := 1 + r.IntN(15)
		b := make([]byte, 0, 20)
		switch r.IntN(3) {
		case 0:
			b = append(b, '-')
		case 1:
			b = append(b, '+')
		}
		dot := r.IntN(digits + 1)
		for j := range digits {
			if j == dot {
				b = append(b, '.')
			}
			b = append(b, byte('0'+r.IntN(10)))
		}
		spellings = append(spellings, string(b))
	}
	for _, sp := range spellings {
		want, err := strconv.ParseFloat(sp, 64)
		if err != nil {
			t.Fatal(sp, err)
		}
		in := "d:" + sp + ";"
		v, err := DecodeString(in)
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		if math.Float64bits(v.Float()) != math.Float64bits(want) {
			t.Fatalf("%s: got %v (%b), ParseFloat %v (%b)", in, v.Float(), math.Float64bits(v.Float()), want, math.Float64bits(want))
		}
		if out, err := Encode(v); err != nil || string(out) != in {
			t.Fatalf("%s: Encode gives %q, %v", in, out, err)
		}
	}
}
