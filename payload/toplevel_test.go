package payload

import (
	"bytes"
	"encoding/json"
	"testing"
)

func TestSetTopLevelStrings(t *testing.T) {
	tp := StringMember{"traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}
	ts := StringMember{"tracestate", "congo=t61rcWkgMzE,rojo/x=00f067aa0ba902b7"}
	for _, tc := range []struct {
		name, in, want string
		set            []StringMember
	}{
		{"before id", `{"uuid":"u","data":{"id":1},"createdAt":1,"id":"i","attempts":0,"delay":null}`,
			`{"uuid":"u","data":{"id":1},"createdAt":1,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","tracestate":"congo=t61rcWkgMzE,rojo\/x=00f067aa0ba902b7","id":"i","attempts":0,"delay":null}`,
			[]StringMember{tp, ts}},
		{"replaced in place", `{"uuid":"u","traceparent":"old","id":"i","attempts":0}`,
			`{"uuid":"u","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01","id":"i","attempts":0}`,
			[]StringMember{tp}},
		{"no id: at the end", `{"job":"X@y", "data":[] }`,
			`{"job":"X@y", "data":[],"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" }`,
			[]StringMember{tp}},
		{"nothing to set", `{"id":"i"}`, `{"id":"i"}`, nil},
	} {
		got, err := SetTopLevelStrings([]byte(tc.in), "id", tc.set...)
		if err != nil || string(got) != tc.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", tc.name, got, err, tc.want)
		}
		if err == nil && !json.Valid(got) {
			t.Errorf("%s: not JSON: %s", tc.name, got)
		}
	}
	in := []byte(`{"id":"i"}`)
	if _, err := SetTopLevelStrings([]byte(`[1]`), "id", tp); err == nil {
		t.Error("a list accepted")
	}
	if _, err := SetTopLevelStrings([]byte(`{"id":"i"} x`), "id", tp); err == nil {
		t.Error("trailing bytes accepted")
	}
	if got, _ := SetTopLevelStrings(in, "id"); !bytes.Equal(got, in) {
		t.Error("changed without members to set")
	}
}

func TestTopLevelString(t *testing.T) {
	raw := []byte(`{"data":{"traceparent":"inner"},"traceparent":"a\/b","n":1,"traceparent":"last"}`)
	if v, ok, err := TopLevelString(raw, "traceparent"); err != nil || !ok || v != "last" {
		t.Errorf("= %q %v %v", v, ok, err)
	}
	if _, ok, _ := TopLevelString(raw, "n"); ok {
		t.Error("a number taken for a string")
	}
	if _, ok, _ := TopLevelString([]byte(`{"data":{"tracestate":"x"}}`), "tracestate"); ok {
		t.Error("a nested member taken for a top-level one")
	}
}

func FuzzSetTopLevelStrings(f *testing.F) {
	for _, s := range []string{`{"uuid":"u","id":"i","attempts":0}`, `{"traceparent":"x","id":1}`, `{}`, `{"a":"\u00e9"}`, `[]`} {
		f.Add([]byte(s), "00-abc", "k=v")
	}
	f.Fuzz(func(t *testing.T, raw []byte, tp, ts string) {
		out, err := SetTopLevelStrings(raw, "id", StringMember{"traceparent", tp}, StringMember{"tracestate", ts})
		if err != nil {
			return
		}
		var m map[string]any
		if json.Unmarshal(out, &m) != nil {
			if json.Valid(raw) {
				t.Fatalf("valid %q became invalid %q", raw, out)
			}
			return
		}
		if got, ok, _ := TopLevelString(out, "traceparent"); !ok || got != tp {
			t.Fatalf("traceparent %q not set in %q", tp, out)
		}
	})
}
