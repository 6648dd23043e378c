package phpser

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	laravelpayloads "github.com/laraq/laraq/testdata/laravel-payloads"
)

// Fuzz targets; seeded with the golden and captured Laravel cases. Run each for a
// bounded time, e.g.:
//
//	go test ./phpser -run '^$' -fuzz '^FuzzDecode$' -fuzztime 30s

func seedSerialized(f *testing.F) {
	for _, g := range loadGoldens(f) {
		f.Add(g.ser)
	}
	for _, name := range laravelCommands {
		f.Add(readLaravel(f, name+".ser"))
	}
	f.Add([]byte(`O:20:"App\Jobs\SendInvoice":2:{s:7:"orderId";i:7;s:5:"tries";i:5;}`))
	closure := `C:32:"Opis\Closure\SerializableClosure":122:{a:5:{s:3:"use";a:0:{}s:8:"function";s:0:"";s:5:"scope";N;s:4:"this";N;s:4:"self";s:32:"00000000000000040000000000000000";}}`
	f.Add([]byte(`a:3:{i:0;` + closure + `i:1;O:8:"stdClass":1:{s:1:"a";i:1;}i:2;r:9;}`))
	for _, s := range []string{`a:1:{i:0;R:1;}`, `O:4:"Node":1:{s:6:"parent";r:1;}`, `i:+5;`, `d:.5;`, `b:7;`, `a:1:{}`} {
		f.Add([]byte(s))
	}
	// PHP's depth limit: 4096 levels pass, 4097 do not, an empty array is no level.
	for _, c := range depthCases() {
		if strings.HasPrefix(c.name, "4096 arrays") || strings.HasPrefix(c.name, "4097 arrays") {
			f.Add([]byte(c.in))
		}
	}
}

// FuzzDecode: Decode never panics, and whatever it accepts encodes back to the same
// bytes or, for spellings Encode normalises (s:01:, i:+1; as a key), to bytes that
// decode to the same tree and are a fixed point; it also renders readably.
func FuzzDecode(f *testing.F) {
	seedSerialized(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			if v != nil {
				t.Fatal("value and error")
			}
			return
		}
		out, err := Encode(v)
		if err != nil {
			t.Fatalf("decoded but does not encode: %v", err)
		}
		if !bytes.Equal(out, data) {
			v2, err := Decode(out)
			if err != nil || !Equal(v, v2) {
				t.Fatalf("Encode(Decode(x)) decodes differently (%v)\n  x: %q\nout: %q", err, data, out)
			}
			if again, _ := Encode(v2); !bytes.Equal(again, out) {
				t.Fatalf("normalised form is not stable\n%q\n%q", out, again)
			}
		}
		if r, err := MarshalReadable(v); err == nil {
			// References are printed as copies of their targets, which may nest deeper
			// than PHP's limit that the readable parser keeps to.
			if _, err := UnmarshalReadable(r); err != nil && !bytes.Contains(r, []byte(`"@recursion"`)) &&
				!(bytes.ContainsAny(data, "rR") && strings.Contains(err.Error(), "nested")) {
				t.Fatalf("readable form %s does not parse: %v", r, err)
			}
		}
	})
}

// FuzzRoundTrip: decode -> encode -> decode gives the same tree, and the struct
// mapping and Marshal never panic on what Decode accepts.
func FuzzRoundTrip(f *testing.F) {
	seedSerialized(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Decode(data)
		if err != nil {
			return
		}
		out, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		v2, err := Decode(out)
		if err != nil || !Equal(v, v2) {
			t.Fatalf("decode-encode-decode differs (%v)\n%q\n%q", err, data, out)
		}
		var x any
		errX := v.Decode(&x)
		checkReusedUnmarshal(t, data, x, errX)
		if err := errX; err == nil {
			b, err := Marshal(x)
			// References are mapped as copies of their targets, which may nest deeper
			// than PHP's limit that Marshal keeps to.
			if err != nil && !(bytes.ContainsAny(data, "rR") && strings.Contains(err.Error(), "levels deep")) {
				t.Fatalf("Marshal of %#v: %v", x, err)
			}
			if _, err := Decode(b); err != nil && b != nil {
				t.Fatalf("Marshal wrote %q, which does not decode: %v", b, err)
			}
		}
		var job fixturePodcast
		errJob := v.Decode(&job)
		checkReusedUnmarshal(t, data, job, errJob)
		// Class defaults: filled in by Unmarshal, left out and filled in by Encoder.
		var inv invoiceJob
		if err := v.Decode(&inv); err == nil {
			for _, enc := range []Encoder{{OmitDefaults: true}, {ZeroMeansDefault: true}, {OmitDefaults: true, ZeroMeansDefault: true}} {
				b, err := enc.Marshal(&inv)
				if err != nil {
					t.Fatalf("%+v.Marshal(%#v): %v", enc, inv, err)
				}
				var again invoiceJob
				if err := Unmarshal(b, &again); err != nil {
					t.Fatalf("%+v wrote %q, which does not unmarshal: %v", enc, b, err)
				}
			}
		}
	})
}

// checkReusedUnmarshal: Unmarshal, which maps from decoder entries it reuses (arena.go),
// gives what mapping Decode's tree gave (want, wantErr), and its result stays the same
// once those entries were cleared and used again by another Unmarshal.
func checkReusedUnmarshal[T any](t *testing.T, data []byte, want T, wantErr error) {
	t.Helper()
	var got T
	err := Unmarshal(data, &got)
	if (err == nil) != (wantErr == nil) || (err != nil && err.Error() != wantErr.Error()) {
		t.Fatalf("Unmarshal: %v, mapping the decoded tree: %v", err, wantErr)
	}
	if err != nil {
		return
	}
	if !sameMapped(got, want) {
		t.Fatalf("Unmarshal gave\n%#v\nmapping the decoded tree gave\n%#v", got, want)
	}
	var other T
	_ = Unmarshal([]byte(`a:2:{i:0;s:5:"zzzzz";s:5:"title";O:1:"X":1:{s:1:"y";d:1.5;}}`), &other)
	if !sameMapped(got, want) {
		t.Fatalf("an Unmarshal result changed when the decoder was used again:\n%#v", got)
	}
}

// sameMapped compares two mapped values: deeply, or, where NaN makes that fail, by
// what Marshal writes of them.
func sameMapped(a, b any) bool {
	if reflect.DeepEqual(a, b) {
		return true
	}
	ma, errA := Marshal(a)
	mb, errB := Marshal(b)
	return errA == nil && errB == nil && bytes.Equal(ma, mb)
}

// FuzzUnmarshalReadable: the readable-form parser never panics, what it accepts
// encodes, and a value read back from its own readable form is stable.
func FuzzUnmarshalReadable(f *testing.F) {
	for _, g := range loadGoldens(f) {
		v, _ := Decode(g.ser)
		if r, err := MarshalReadable(v); err == nil {
			f.Add(r)
		}
	}
	// Whole Laravel payloads are JSON too: the parser must refuse or read them, never panic.
	for _, id := range laravelpayloads.IDs() {
		b, err := laravelpayloads.Read(id)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{`{"@class":"A","\u0000*\u0000p":1}`, `{"@enum":"A:B"}`, `{"@binary":"AA=="}`, `[1.0,-0.0,"INF"]`, `{"@@x":{"10":[]}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := UnmarshalReadable(data)
		if err != nil {
			return
		}
		b, err := Encode(v)
		if err != nil {
			t.Fatalf("readable %q gave a value that does not encode: %v", data, err)
		}
		if _, err := Decode(b); err != nil {
			t.Fatalf("%q encodes to %q, which does not decode: %v", data, b, err)
		}
		// Visibility and special floats settle after one pass; from then on the form
		// is a fixed point.
		r1, err := MarshalReadable(v)
		if err != nil {
			t.Fatal(err)
		}
		v2, err := UnmarshalReadable(r1)
		if err != nil {
			t.Fatalf("own output %s does not parse: %v", r1, err)
		}
		r2, _ := MarshalReadable(v2)
		v3, err := UnmarshalReadable(r2)
		if err != nil {
			t.Fatal(err)
		}
		e2, _ := Encode(v2)
		e3, _ := Encode(v3)
		if !bytes.Equal(e2, e3) {
			t.Fatalf("not stable:\n%s\n%s", r1, r2)
		}
	})
}

// FuzzDefaultLiteral: the default= literal of a php tag never panics the parser; one
// it accepts for a Go type encodes to bytes PHP's grammar accepts, and a field of that
// type holds it: decoded into the field and marshalled again it is identical to itself,
// which is what lets Encoder.OmitDefaults leave a defaulted property out.
func FuzzDefaultLiteral(f *testing.F) {
	for _, s := range []string{`3`, `-42`, `1.5`, `1.0`, `1e3`, `null`, `true`, `""`, `"en"`, `"Hearts"`, `[]`, `{}`,
		`[1,2,3]`, `[1.5,"a",null]`, `{"a":1,"b":[true,null],"7":"seven"}`, `{"-1":"m","5":"f"}`, `{"1":1,"01":2}`,
		`9223372036854775807`, `9223372036854775808`, `[[[]]]`, `"a\u0000b"`, ` 3 `, `3 4`, `[1,`} {
		f.Add(s)
	}
	types := []reflect.Type{
		reflect.TypeFor[int](), reflect.TypeFor[int8](), reflect.TypeFor[uint32](), reflect.TypeFor[float64](),
		reflect.TypeFor[float32](), reflect.TypeFor[bool](), reflect.TypeFor[string](), reflect.TypeFor[*int](),
		reflect.TypeFor[[]byte](), reflect.TypeFor[suit](), reflect.TypeFor[[]any](), reflect.TypeFor[[]float64](),
		reflect.TypeFor[[2]string](), reflect.TypeFor[map[string]int](), reflect.TypeFor[map[int8]*string](),
		reflect.TypeFor[Map](), reflect.TypeFor[*[]string](), reflect.TypeFor[any](), reflect.TypeFor[*Value](),
	}
	f.Fuzz(func(t *testing.T, lit string) {
		for _, typ := range types {
			v, err := parseDefault(typ, lit)
			if err != nil {
				if v != nil {
					t.Fatal("value and error")
				}
				continue
			}
			b, err := Encode(v)
			if err != nil {
				t.Fatalf("%v default=%s: %v", typ, lit, err)
			}
			if _, err := Decode(b); err != nil {
				t.Fatalf("%v default=%s encodes to %q, which does not decode: %v", typ, lit, b, err)
			}
			if typ == reflect.TypeFor[any]() {
				continue // an `any` takes a PHP array as a Go map, which Marshal writes sorted
			}
			field := reflect.New(typ)
			if err := v.Decode(field.Interface()); err != nil {
				t.Fatalf("%v default=%s (%q) does not decode into the field: %v", typ, lit, b, err)
			}
			out, err := Marshal(field.Elem().Interface())
			if err != nil || !identicalBytes(out, b, v) {
				t.Fatalf("%v default=%s: the field holds %q, not %q (%v)", typ, lit, out, b, err)
			}
		}
	})
}
