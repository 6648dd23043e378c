package payload

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
	"unicode/utf8"

	laravelpayloads "github.com/laraq/laraq/testdata/laravel-payloads"
)

// fuzzSeeds are the real payloads of testdata/laravel-payloads (including the cut-off
// S3-partial) and a few tolerant shapes.
func fuzzSeeds(f *testing.F) {
	ids := laravelpayloads.IDs()
	if len(ids) < 15 {
		f.Fatalf("only %d payloads found: %v", len(ids), ids)
	}
	for _, id := range ids {
		f.Add(sample(f, id))
	}
	for _, s := range []string{
		`{"backoff":[1,"5",1e1],"retryUntil":1.2345678901234e+14,"tags":{"a":"x"},"pushedAt":1.5,"id":78751}`,
		`{"job":"X@y","data":{"command":"O:1:\"A\":0:{}","commandName":"A","batchId":null},"attempts":"2"}`,
		`{"failOnTimeout":[0],"maxTries":" 3 ","delay":7,"timeoutAt":5,"\u006aob":"\ud83d\ude00"}`,
		`{"a":{"b":[[[]]]},"a":1}`, `[]`, `{`, `{"x":"\ud800"}`, "{\"x\":\"\xff\"}",
	} {
		f.Add([]byte(s))
	}
}

func FuzzParse(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, err := Parse(raw)
		if err != nil {
			var pe *Error
			if !errors.As(err, &pe) || pe.Offset < 0 || pe.Offset > len(raw) || pe.Msg == "" {
				t.Fatalf("bad error %#v for %q", err, raw)
			}
			return
		}
		if len(raw) == 0 || &e.Raw[0] != &raw[0] || len(e.Raw) != len(raw) {
			t.Fatal("Raw is not the input")
		}
		if !json.Valid(raw) {
			t.Fatalf("Parse accepted invalid JSON %q", raw)
		}
		// Field values are consecutive, non-overlapping sub-slices of raw.
		end := 0
		for _, fl := range e.Fields {
			if len(fl.Value) == 0 {
				t.Fatalf("empty value for %q", fl.Key)
			}
			start := cap(raw) - cap(fl.Value)
			if start < end || start+len(fl.Value) > len(raw) || !bytes.Equal(raw[start:start+len(fl.Value)], fl.Value) {
				t.Fatalf("field %q value is not a sub-slice in order", fl.Key)
			}
			end = start + len(fl.Value)
			if !json.Valid(fl.Value) {
				t.Fatalf("field %q value %q is not JSON", fl.Key, fl.Value)
			}
			if got, ok := e.Get(fl.Key); !ok || len(got) == 0 {
				t.Fatalf("Get(%q) failed", fl.Key)
			}
		}
		if e.Data != nil && !json.Valid(e.Data) {
			t.Fatalf("data %q", e.Data)
		}
		_ = e.Name()
		_ = e.BackoffSpec()
		_ = e.Runnable()
		_ = e.IsObjectJob()
	})
}

func FuzzDecodeValue(f *testing.F) {
	fuzzSeeds(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		_ = CheckPushRaw(raw)
		retried, rerr := ResetForRetry(raw)
		v, err := DecodeValue(raw)
		if err != nil {
			if rerr == nil {
				t.Fatalf("ResetForRetry accepted what DecodeValue refused: %q", raw)
			}
			return
		}
		if !json.Valid(raw) || !utf8.Valid(raw) {
			t.Fatalf("DecodeValue accepted %q", raw)
		}
		for _, flags := range []JSONFlags{0, JSONUnescapedUnicode} {
			out, err := v.AppendJSON(nil, flags)
			if err != nil {
				if !v.hasInf() {
					t.Fatalf("encode failed without Inf: %v", err)
				}
				return
			}
			if !json.Valid(out) || !utf8.Valid(out) {
				t.Fatalf("wrote invalid JSON %q", out)
			}
			// Two PHP passes reach a fixed point (only -0.0 changes on the second).
			v2, err := DecodeValue(out)
			if err != nil {
				t.Fatalf("cannot re-read own output %q: %v", out, err)
			}
			out2, _ := v2.AppendJSON(nil, flags)
			v3, _ := DecodeValue(out2)
			out3, _ := v3.AppendJSON(nil, flags)
			if !bytes.Equal(out2, out3) {
				t.Fatalf("no fixed point: %q → %q → %q", out, out2, out3)
			}
			if flags == 0 && rerr == nil && v.Get("attempts") == nil && !bytes.Equal(retried, out2) {
				t.Fatalf("ResetForRetry %q != two passes %q", retried, out2)
			}
		}
	})
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range jsonStringCorpus(false)[:600] {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, flags := range []JSONFlags{0, JSONUnescapedUnicode, JSONUnescapedSlashes | JSONUnescapedUnicode | JSONUnescapedLineTerminators} {
			out, err := AppendJSONString(nil, s, flags)
			if !utf8.ValidString(s) {
				if err == nil {
					t.Fatalf("accepted invalid UTF-8 %q", s)
				}
				continue
			}
			var back string
			if err != nil || json.Unmarshal(out, &back) != nil || back != s {
				t.Fatalf("%q → %q (%v) → %q", s, out, err, back)
			}
		}
	})
}
