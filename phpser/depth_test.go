package phpser

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// nestOf builds one value nested as kinds says, outermost first: 'a' an array of one
// element, 'o' a stdClass with one property; inner is the innermost value.
func nestOf(kinds, inner string) string {
	var b strings.Builder
	for _, k := range kinds {
		if k == 'a' {
			b.WriteString("a:1:{i:0;")
		} else {
			b.WriteString(`O:8:"stdClass":1:{s:1:"p";`)
		}
	}
	b.WriteString(inner)
	b.WriteString(strings.Repeat("}", len(kinds)))
	return b.String()
}

// depthCase is an input near PHP's unserialize_max_depth and whether PHP 8.2 accepts it
// (TestDecodeDepthMatchesPHP asks PHP itself).
type depthCase struct {
	name string
	in   string
	ok   bool
	off  int // where Decode's error points when !ok: the container one level too deep
}

func depthCases() []depthCase {
	a, o := strings.Repeat("a", 4096), strings.Repeat("o", 4096)
	mix := strings.Repeat("ao", 2048)
	const aLen, oLen = len("a:1:{i:0;"), len(`O:8:"stdClass":1:{s:1:"p";`)
	obj := `O:8:"stdClass":0:{}`
	return []depthCase{
		{"4096 arrays", nestOf(a, "i:1;"), true, 0},
		{"4097 arrays", nestOf(a+"a", "i:1;"), false, 4096 * aLen},
		{"4096 arrays and an empty one", nestOf(a, "a:0:{}"), true, 0},
		{"4097 arrays and an empty one", nestOf(a+"a", "a:0:{}"), false, 4096 * aLen},
		{"4096 arrays and an empty object", nestOf(a, obj), false, 4096 * aLen},
		{"4095 arrays and an empty object", nestOf(a[1:], obj), true, 0},
		{"4096 objects", nestOf(o, "N;"), true, 0},
		{"4097 objects", nestOf(o+"o", "N;"), false, 4096 * oLen},
		{"4096 objects and an empty array", nestOf(o, "a:0:{}"), true, 0},
		{"4096 mixed", nestOf(mix, "i:1;"), true, 0},
		{"4097 mixed, an object last", nestOf(mix+"o", "i:1;"), false, 2048 * (aLen + oLen)},
		{"4097 mixed, an array last", nestOf(mix+"a", "i:1;"), false, 2048 * (aLen + oLen)},
		{"4096 arrays around an enum", nestOf(a, `E:14:"Fx\Suit:Hearts";`), true, 0},
		{"4096 arrays around a C: object", nestOf(a, `C:21:"Fx\LegacySerializable":15:{{"k":"v","n":1}}`), true, 0},
		{"4096 levels and an r: inside", "a:2:{i:0;" + obj + "i:1;" + nestOf(a[1:], "r:2;") + "}", true, 0},
		{"4097 levels and an r: inside", "a:2:{i:0;" + obj + "i:1;" + nestOf(a, "r:2;") + "}", false, len("a:2:{i:0;"+obj+"i:1;") + 4095*aLen},
		{"4096 levels and an R: inside", "a:2:{i:0;i:5;i:1;" + nestOf(a[1:], "R:2;") + "}", true, 0},
		{"4096 levels twice side by side", "a:2:{i:0;" + nestOf(a[1:], "i:1;") + "i:1;" + nestOf(a[1:], "i:2;") + "}", true, 0},
		{"4097 elements in the deepest array", nestOf(a, "a:2:{i:0;i:1;i:1;i:2;}"), false, 4096 * aLen},
	}
}

// TestDecodeDepthMatchesPHP: Decode accepts and refuses exactly what PHP 8.2's
// unserialize() does around its default unserialize_max_depth of 4096: objects and
// non-empty arrays are levels; empty arrays, enums, C: data and references are not.
func TestDecodeDepthMatchesPHP(t *testing.T) {
	cases := depthCases()
	for _, c := range cases {
		_, err := DecodeString(c.in)
		if c.ok {
			if err != nil {
				t.Errorf("%s: Decode refused what PHP accepts: %v", c.name, err)
			}
			continue
		}
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%s: Decode accepted what PHP refuses (%v)", c.name, err)
			continue
		}
		if se.Offset != c.off || !strings.Contains(se.Msg, "nested 4097 levels deep, deeper than the limit of 4096") {
			t.Errorf("%s: error %q, want the depth and offset %d", c.name, err, c.off)
		}
	}

	testenv.NeedPHP(t)
	dir := t.TempDir()
	args := []string{testenv.Testdata("phpser", "depth.php")}
	for i, c := range cases {
		p := filepath.Join(dir, fmt.Sprintf("%02d.ser", i))
		if err := os.WriteFile(p, []byte(c.in), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	out, err := exec.Command("php", args...).CombinedOutput()
	if err != nil {
		t.Fatalf("php depth.php: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(cases) {
		t.Fatalf("php printed %d lines for %d inputs:\n%s", len(lines), len(cases), out)
	}
	for i, c := range cases {
		if phpOK := lines[i] == "ok"; phpOK != c.ok {
			t.Errorf("%s: PHP says %q, the case says ok=%v", c.name, lines[i], c.ok)
		}
		if !c.ok && !strings.Contains(lines[i], "Maximum depth of 4096 exceeded") {
			t.Errorf("%s: PHP refused it for another reason: %s", c.name, lines[i])
		}
	}
}

func TestDecodeDepthLimit(t *testing.T) {
	nest := func(n int) string {
		return strings.Repeat("a:1:{i:0;", n) + "N;" + strings.Repeat("}", n)
	}
	if DefaultMaxDepth != 4096 {
		t.Fatalf("DefaultMaxDepth = %d, PHP's unserialize_max_depth is 4096", DefaultMaxDepth)
	}
	if _, err := (Decoder{MaxDepth: 10}).DecodeString(nest(11)); err == nil || !strings.Contains(err.Error(), "array nested 11 levels deep, deeper than the limit of 10") {
		t.Fatalf("MaxDepth 10 not applied: %v", err)
	}
	if _, err := (Decoder{MaxDepth: 10}).DecodeString(nest(10)); err != nil {
		t.Fatalf("MaxDepth 10: %v", err)
	}
	if _, err := (Decoder{MaxDepth: 5000}).DecodeString(nest(5000)); err != nil {
		t.Fatalf("MaxDepth 5000: %v", err)
	}
	// The ceiling holds whatever MaxDepth says.
	if _, err := (Decoder{MaxDepth: 1 << 30}).DecodeString(nest(MaxDepthCeiling + 1)); err == nil || !strings.Contains(err.Error(), "limit of 65536") {
		t.Fatalf("MaxDepthCeiling not applied: %v", err)
	}
	// Five million levels is refused quickly and without exhausting the stack.
	big := strings.Repeat("a:1:{i:0;", 5_000_000)
	if _, err := DecodeString(big); err == nil {
		t.Fatal("5M levels accepted")
	}
}

// TestDepth4096EveryWalk runs every walk of the package over values PHP accepts at its
// depth limit, and over deeper ones built by hand: each must work at 4096 and refuse,
// not crash, beyond.
func TestDepth4096EveryWalk(t *testing.T) {
	for _, c := range depthCases() {
		if !c.ok {
			continue
		}
		v, err := DecodeString(c.in)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Encode(v)
		if err != nil || !bytes.Equal(out, []byte(c.in)) {
			t.Errorf("%s: Encode: %v", c.name, err)
		}
		if !Equal(v, v) || v.Deref() != v || !v.Truthy() {
			t.Errorf("%s: Equal/Deref/Truthy", c.name)
		}
		var x any
		if err := v.Decode(&x); err != nil {
			t.Errorf("%s: Decode into any: %v", c.name, err)
			continue
		}
		if strings.Contains(c.name, "C:") || strings.Contains(c.name, "r:") || strings.Contains(c.name, "R:") {
			continue // Custom and expanded references are not written back as they were
		}
		b, err := Marshal(x)
		if err != nil {
			t.Errorf("%s: Marshal of the decoded any: %v", c.name, err)
		} else if v2, err := Decode(b); err != nil || (!strings.Contains(c.name, "objects") && !strings.Contains(c.name, "mixed") && !strings.Contains(c.name, "object") && !Equal(v, v2)) {
			t.Errorf("%s: Marshal wrote what does not decode back: %v", c.name, err)
		}
		r, err := MarshalReadable(v)
		if err != nil {
			t.Errorf("%s: MarshalReadable: %v", c.name, err)
			continue
		}
		back, err := UnmarshalReadable(r)
		if err != nil {
			t.Errorf("%s: UnmarshalReadable: %v", c.name, err)
			continue
		}
		if b, err := Encode(back); err != nil {
			t.Errorf("%s: Encode of the readable form: %v", c.name, err)
		} else if _, err := Decode(b); err != nil {
			t.Errorf("%s: the readable form encodes to what Decode refuses: %v", c.name, err)
		}
	}

	// Built by hand: 4097 levels are not written for PHP, and a tree deeper than
	// MaxDepthCeiling (which Decode never builds) is refused, not walked to a crash.
	deep := func(n int) *Value {
		v := Int(1)
		for i := 0; i < n; i++ {
			v = List(v)
		}
		return v
	}
	if _, err := Marshal(deep(4096)); err != nil {
		t.Errorf("Marshal of 4096 levels: %v", err)
	}
	if _, err := Marshal(deep(4097)); err == nil || !strings.Contains(err.Error(), "nested 4097 levels deep") {
		t.Errorf("Marshal of 4097 levels: %v", err)
	}
	if _, err := Encode(deep(MaxDepthCeiling)); err != nil {
		t.Errorf("Encode at the ceiling: %v", err)
	}
	if _, err := Encode(deep(MaxDepthCeiling + 1)); err == nil || !strings.Contains(err.Error(), "limit of 65536") {
		t.Errorf("Encode past the ceiling: %v", err)
	}
	if Equal(deep(MaxDepthCeiling+2), deep(MaxDepthCeiling+2)) {
		t.Error("Equal walked past the ceiling")
	}

	// Go values nest as deep as PHP allows, and no deeper.
	type node struct {
		Next *node `php:"next"`
	}
	var head *node
	for i := 0; i < 4096; i++ {
		head = &node{Next: head}
	}
	b, err := Marshal(head)
	if err != nil {
		t.Fatalf("Marshal of 4096 nested structs: %v", err)
	}
	var back *node
	if err := Unmarshal(b, &back); err != nil {
		t.Fatalf("Unmarshal of 4096 nested structs: %v", err)
	}
	if _, err := Marshal(&node{Next: head}); err == nil || !strings.Contains(err.Error(), "next.(4064 more levels).next") {
		t.Errorf("Marshal of 4097 nested structs: %v", err)
	}
}

// TestRefsBeyondTheTreeDepth: a reference expands into a copy of its target, so mapping
// can nest deeper than the tree; references are followed from anywhere PHP allows
// them, and the expansion stays bounded.
func TestRefsBeyondTheTreeDepth(t *testing.T) {
	a := strings.Repeat("a", 4095)
	obj := nestOf(strings.Repeat("o", 4095), "i:7;")
	// Element 0 is an object 4095 levels deep; element 1 reaches it again through an
	// r: at the bottom of 4095 arrays.
	in := "a:2:{i:0;" + obj + "i:1;" + nestOf(a, "r:2;") + "}"
	v, err := DecodeString(in)
	if err != nil {
		t.Fatal(err)
	}
	var x2 any
	if err := v.Decode(&x2); err != nil {
		t.Fatalf("a reference PHP resolves was not followed: %v", err)
	}
	if _, err := MarshalReadable(v); err != nil {
		t.Fatalf("MarshalReadable: %v", err)
	}
	// A chain of references: Z's bottom reaches Y, whose bottom reaches X. PHP shares
	// each target and accepts this (no more than 4096 levels anywhere in the stream);
	// mapping copies the targets and would nest three trees deep, so it stops at the
	// second reference, with an error that says so.
	x := nestOf(strings.Repeat("o", 4095), "N;")      // slots 2..4097
	y := nestOf(strings.Repeat("o", 4094), "r:2;")    // slots 4098..8192
	z := nestOf(strings.Repeat("a", 4094), "r:4098;") // after y
	in = "a:3:{i:0;" + x + "i:1;" + y + "i:2;" + z + "}"
	if v, err = DecodeString(in); err != nil {
		t.Fatal(err)
	}
	err = v.Decode(&x2)
	var te *UnmarshalTypeError
	if !errors.As(err, &te) || !strings.Contains(te.Msg, "reference is 8189 levels deep; references are followed only up to 4096") || te.Offset != len("a:3:{i:0;"+x+"i:1;")+4094*len(`O:8:"stdClass":1:{s:1:"p";`) {
		t.Errorf("chained references: %v", err)
	}
	if _, err := MarshalReadable(v); err == nil || !strings.Contains(err.Error(), "references are followed only up to 4096") {
		t.Errorf("MarshalReadable of chained references: %v", err)
	}
}
