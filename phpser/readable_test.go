package phpser

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

func readable(t testing.TB, v *Value) string {
	t.Helper()
	b, err := MarshalReadable(v)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(b) {
		t.Fatalf("invalid JSON: %s", b)
	}
	return string(b)
}

func TestMarshalReadableForms(t *testing.T) {
	cases := map[string]string{
		"floats":                   `[0.1,1.0,-0.0,1.0e+100,1.5e-300,3.141592653589793,0.30000000000000004,-2.5e-5]`,
		"float_special":            `[{"@float":"INF"},{"@float":"-INF"},{"@float":"NAN"}]`,
		"int64_extremes":           `[9223372036854775807,-9223372036854775808,-1,4294967296]`,
		"strings_binary":           `["nul\u0000inside",{"@binary":"//4AAQ=="},"\u0000*\u0000notaprop"]`,
		"strings_backslash":        `["C:\\new\\table","\\x41\\n","it's","{\"msg\":\"line\\nbreak \\u00e9\"}","App\\Jobs\\xyz"]`,
		"array_sparse":             `{"0":"a","2":"c","1":"b"}`,
		"array_nested":             `{"a":{"b":{"c":{"d":[1,[2,[3]]]}}},"empty":[]}`,
		"array_mixed_keys":         `{"5":"five","k":"kay","-3":"neg","10":"numeric-string-key-becomes-int","007":"stays-string","list":[1,2]}`,
		"object_visibility":        `{"@class":"Fx\\Vis","pub":"pub-v","prot":"prot-v","priv":"priv-v"}`,
		"object_inherited_private": `{"@class":"Fx\\ChildOfPrivate","\u0000Fx\\ParentWithPrivate\u0000secret":"parent-secret","shared":"shared","\u0000Fx\\ChildOfPrivate\u0000secret":"child-secret","own":1}`,
		"ref_R_value":              `{"a":"shared","b":"shared","c":"plain"}`,
		"ref_cycle":                `{"@class":"Fx\\Node","name":"self","children":[],"parent":{"@recursion":"Fx\\Node"}}`,
		"enum_backed":              `{"status":{"@enum":"Fx\\Status:Active"}}`,
		"serializable_C":           `{"@class":"Fx\\LegacySerializable","@serialized":"{\"k\":\"v\",\"n\":1}"}`,
		"magic_serialize":          `{"@class":"Fx\\MagicSerialize","a":5,"0":"int-key","fake":"bee"}`,
	}
	for name, want := range cases {
		v, err := Decode(readFixture(t, name+".ser"))
		if err != nil {
			t.Fatal(err)
		}
		if got := readable(t, v); got != want {
			t.Errorf("%s:\n got %s\nwant %s", name, got, want)
		}
	}
	// Every golden case renders as valid JSON.
	for _, g := range loadGoldens(t) {
		v, _ := Decode(g.ser)
		readable(t, v)
	}
}

func TestMarshalReadableEdges(t *testing.T) {
	cases := []struct {
		v    *Value
		want string
	}{
		{NewArray(StrEntry("@class", Int(1)), StrEntry("@@x", Int(2)), StrEntry("a/b", String("é/ü\t<&>"))), `{"@@class":1,"@@@x":2,"a/b":"é/ü\t<&>"}`},
		{NewObject("X", PublicProp("@enum", Null())), `{"@class":"X","@@enum":null}`},
		{List(), `[]`},
		{NewArray(StrEntry("0", Int(1)), StrEntry("1", Int(2))), `[1,2]`},
		{NewArray(IntEntry(1, Int(1))), `{"1":1}`},
		{Float(1e25), `1.0e+25`},
		{Float(-1), `-1.0`},
		{Float(123456789012345680), `1.2345678901234568e+17`},
		{NewCustom("C", "\xff"), `{"@class":"C","@serialized":{"@binary":"/w=="}}`},
		{String("\x7f\u2028"), "\"\x7f\u2028\""},
		// A public property and a parent's private one with the same name: the private
		// one keeps its mangled name, whichever comes first.
		{NewObject("C", PrivateProp("P", "a", Int(1)), PublicProp("a", Int(2))), `{"@class":"C","\u0000P\u0000a":1,"a":2}`},
		{NewArray(IntEntry(0, NewHardRef(1))), `[{"@recursion":"array"}]`},
		{NewArray(StrEntry("\xff", Int(1)), StrEntry("\xfe", Int(2))), `{"@binary:/w==":1,"@binary:/g==":2}`},
		{NewObject("A\xe9", PublicProp("p", NewEnum("B\xe9", "C"))), `{"@class":{"@binary":"Qek="},"p":{"@enum":{"@binary":"Quk6Qw=="}}}`},
	}
	for _, c := range cases {
		// Hand-built references are resolved the way Decode resolves them.
		b, err := Encode(c.v)
		if err != nil {
			t.Fatal(err)
		}
		v, err := Decode(b)
		if err != nil {
			t.Fatalf("%q: %v", b, err)
		}
		if got := readable(t, v); got != c.want {
			t.Errorf("got  %s\nwant %s", got, c.want)
		}
	}
	if _, err := MarshalReadable(NewRef(1)); err == nil {
		t.Error("unresolved reference rendered")
	}
	indented, err := MarshalReadableIndent(List(Int(1)), "", "  ")
	if err != nil || string(indented) != "[\n  1\n]" {
		t.Errorf("indent: %q %v", indented, err)
	}
}

// lossless reports whether MarshalReadable keeps everything of v (see the list of what
// it loses on UnmarshalReadable).
func lossless(v *Value, inObject bool) bool {
	switch v.kind {
	case KindRef:
		return false
	case KindFloat:
		f := v.Float()
		return !math.IsNaN(f) && !math.IsInf(f, 0)
	case KindArray, KindObject:
		for _, e := range v.ents() {
			if e.Key.IsInt() && v.kind == KindObject {
				return false
			}
			if !e.Key.IsInt() {
				if strings.HasPrefix(e.Key.Str(), "\x00") {
					return false
				}
				if _, ok := canonicalInt(e.Key.Str()); ok && v.kind == KindArray {
					return false
				}
			}
			if !lossless(&e.Value, v.kind == KindObject) {
				return false
			}
		}
	}
	return true
}

func TestReadableRoundTrip(t *testing.T) {
	checked := 0
	var all []*Value
	for _, g := range loadGoldens(t) {
		v, _ := Decode(g.ser)
		all = append(all, v)
	}
	for _, name := range laravelCommands {
		v, _ := Decode(readLaravel(t, name+".ser"))
		all = append(all, v)
	}
	all = append(all,
		NewArray(StrEntry("@class", Int(1)), StrEntry("@@x", Int(2)), StrEntry("", Null()), StrEntry("007", Float(math.Copysign(0, -1)))),
		NewObject(`A\B`, PublicProp("@enum", String("\xff\xfe")), PublicProp("0x", Float(1e25)), PublicProp("", List())),
		List(NewCustom(`C\D`, "a:1:{}"), NewCustom("E", "\x00\xff"), NewEnum(`F\G`, "H"), Bool(false), Int(math.MinInt64)),
		NewArray(StrEntry("\xff", Int(1)), StrEntry("\xfe", Int(2)), StrEntry("@binary:x", Int(3)), StrEntry("\x80\x81", List())),
		NewObject("K\xe9", PublicProp("\xe9", Null()), PublicProp("\xe8", Null())),
		List(NewEnum("K\xe9", "C\xe9"), NewCustom("K\xe9", "d")),
	)
	for _, v := range all {
		if !lossless(v, false) {
			continue
		}
		checked++
		r := readable(t, v)
		back, err := UnmarshalReadable([]byte(r))
		if err != nil {
			t.Fatalf("UnmarshalReadable(%s): %v", r, err)
		}
		want, _ := Encode(stripNumberText(v))
		got, err := Encode(back)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("round trip of %s:\n got %q\nwant %q (%v)", r, got, want, err)
		}
	}
	if checked < 20 {
		t.Fatalf("only %d values checked", checked)
	}
}

func TestReadableLossy(t *testing.T) {
	// What the readable form drops, as documented: visibility, references, INF/NAN.
	v, _ := Decode(readFixture(t, "object_visibility.ser"))
	back, err := UnmarshalReadable([]byte(readable(t, v)))
	if err != nil {
		t.Fatal(err)
	}
	if _, vis, _ := back.Entries()[1].Key.Name(); vis != Public {
		t.Error("visibility came back")
	}
	v, _ = Decode(readFixture(t, "ref_R_value.ser"))
	back, _ = UnmarshalReadable([]byte(readable(t, v)))
	if back.Index(1).Kind() != KindString {
		t.Error("reference not expanded")
	}
	// INF, -INF and NAN come back as floats (laraq decode | laraq dispatch keeps them).
	for _, f := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		back, err = UnmarshalReadable([]byte(readable(t, Float(f))))
		if err != nil || back.Kind() != KindFloat || back.Float() != f && !(math.IsNaN(f) && math.IsNaN(back.Float())) {
			t.Errorf("%v read back as %v (%v)", f, back, err)
		}
	}
	if _, err := UnmarshalReadable([]byte(`{"@float":"1.5"}`)); err == nil {
		t.Error(`{"@float":"1.5"} accepted: finite floats are numbers`)
	}
}

func TestUnmarshalReadableForms(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"@class":"Fx\\Vis","pub":"pub-v","\u0000*\u0000prot":"prot-v","\u0000Fx\\Vis\u0000priv":"priv-v"}`, string(readFixture(t, "object_visibility.ser"))},
		{` { "10" : 1 , "-3": 2, "007": 3, "-0": 4, "9223372036854775808": 5, "@@class": 6 } `, `a:6:{i:10;i:1;i:-3;i:2;s:3:"007";i:3;s:2:"-0";i:4;s:19:"9223372036854775808";i:5;s:6:"@class";i:6;}`},
		{`[1, 1.0, 1e2, -0.0, 1E-2, -9223372036854775808, true, false, null, "a\/b\u00e9\ud83c\udfa7\ud800"]`, "a:10:{i:0;i:1;i:1;d:1;i:2;d:100;i:3;d:-0;i:4;d:0.01;i:5;i:-9223372036854775808;i:6;b:1;i:7;b:0;i:8;N;i:9;s:12:\"a/bé🎧\xef\xbf\xbd\";}"},
		{`{}`, `a:0:{}`},
		{`{"@enum":"App\\E:Case"}`, `E:10:"App\E:Case";`},
		{`{"@binary":"AP8="}`, "s:2:\"\x00\xff\";"},
		{`{"@class":"C","@serialized":"x:{}"}`, `C:1:"C":4:{x:{}}`},
		{`{"@class":"C","@serialized":{"@binary":"/w=="}}`, "C:1:\"C\":1:{\xff}"},
		{`{"@class":"A\\B","0":1,"@@x":2}`, `O:3:"A\B":2:{s:1:"0";i:1;s:2:"@x";i:2;}`},
	}
	for _, c := range cases {
		v, err := UnmarshalReadable([]byte(c.in))
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		got, err := Encode(v)
		if err != nil || string(got) != c.want {
			t.Errorf("%s:\n got %q\nwant %q (%v)", c.in, got, c.want, err)
		}
	}
}

func TestUnmarshalReadableErrors(t *testing.T) {
	cases := []struct {
		in, msg string
		off     int
	}{
		{``, "unexpected end of input", 0},
		{`{"a":1,}`, "expected a string key, found '}'", 7},
		{`[1 2]`, "expected ',' or ']', found '2'", 3},
		{`{"a" 1}`, "expected ':'", 5},
		{`01`, "unexpected data after the value", 1},
		{`1.`, "unexpected end of input, expected a digit", 2},
		{`-`, "expected a digit", 1},
		{`9223372036854775808`, "integer 9223372036854775808 out of int64 range", 0},
		{`1e999`, "float 1e999 out of range", 0},
		{`"a`, "unexpected end of input", 2},
		{"\"a\x01\"", "control character in string", 2},
		{`"\x"`, "invalid escape 'x'", 1},
		{`"\u12"`, "invalid \\u escape", 1},
		{`tru`, "expected a JSON value", 0},
		{`{"@class":"X","@foo":1}`, `unknown marker key "@foo"`, 14},
		{`{"@class":"X","a":1,"a":2}`, `duplicate property "a"`, 20},
		{`{"1":1,"01":2,"1":3}`, `duplicate array key "1"`, 14},
		{`{"@class":"bad class"}`, "invalid class name", 1},
		{`{"@class":1}`, "@class must be a string", 1},
		{`{"@enum":"NoCase"}`, "is not \"Class:Case\"", 1},
		{`{"@enum":"A:B","x":1}`, "@enum cannot be combined", 1},
		{`{"@binary":"!!"}`, "@binary is not base64", 1},
		{`{"@serialized":"x"}`, "@serialized needs @class", 1},
		{`{"@class":"C","@serialized":"x","y":1}`, "@serialized cannot be combined", 14},
		{`{"@class":"C","@enum":"A:B"}`, "@enum cannot be combined", 14},
		{`{"@recursion":"X"}`, "cannot be rebuilt", 1},
		{`{"@binary:!!":1}`, `key "@binary:!!" is not base64`, 1},
		{strings.Repeat("[", 4097) + "1" + strings.Repeat("]", 4097), "array nested 4097 levels deep, deeper than the limit of 4096", 4096},
		{strings.Repeat(`{"@class":"A","p":`, 4097) + "1" + strings.Repeat("}", 4097), "object nested 4097 levels deep", 4096 * 18},
		{strings.Repeat("[", 4098) + strings.Repeat("]", 4098), "JSON nested deeper than 4097 levels", 4097},
	}
	for _, c := range cases {
		_, err := UnmarshalReadable([]byte(c.in))
		var se *SyntaxError
		if !errors.As(err, &se) || !strings.Contains(se.Msg, c.msg) || se.Offset != c.off {
			t.Errorf("UnmarshalReadable(%.40q) = %v; want %q at %d", c.in, err, c.msg, c.off)
		}
	}
	// PHP's own limits (see TestDecodeDepthMatchesPHP): 4096 levels, an empty array
	// not counted.
	for _, ok := range []string{
		strings.Repeat("[", 4096) + "1" + strings.Repeat("]", 4096),
		strings.Repeat("[", 4097) + strings.Repeat("]", 4097),
		strings.Repeat("[", 4096) + `{"@enum":"A:B"}` + strings.Repeat("]", 4096),
		strings.Repeat(`{"@class":"A","p":`, 4096) + "{}" + strings.Repeat("}", 4096),
	} {
		v, err := UnmarshalReadable([]byte(ok))
		if err != nil {
			t.Errorf("UnmarshalReadable(%.40q...): %v", ok, err)
			continue
		}
		// What the readable form accepts, PHP accepts: Decode applies PHP's limit.
		b, err := Encode(v)
		if err == nil {
			_, err = Decode(b)
		}
		if err != nil {
			t.Errorf("%.40q...: %v", ok, err)
		}
	}
}
