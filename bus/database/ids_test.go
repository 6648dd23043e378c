package database

import (
	"testing"

	"github.com/laraq/laraq/payload"
)

// TestFailedJobIDs: failed_job_ids as DatabaseBatchRepository rewrites it:
// json_encode(array_values(array_diff((array) json_decode($ids, true), [$id]))) and
// array_unique(array_merge(..., [$id])), PHP's default json_encode flags.
func TestFailedJobIDs(t *testing.T) {
	enc := func(vals []payload.Value) string {
		b, err := (&payload.Value{Kind: payload.KindArray, Items: listItems(vals)}).AppendJSON(nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	str := func(s string) payload.Value { return payload.Value{Kind: payload.KindString, Str: s} }
	for _, tc := range []struct{ in, remove, add, wantDiff, wantAdd string }{
		{`[]`, "a", "a", `[]`, `["a"]`},
		{`["a","b","a"]`, "a", "b", `["b"]`, `["a","b"]`},
		{`null`, "a", "a", `[]`, `["a"]`},
		{`not json`, "a", "a", `[]`, `["a"]`},
		{`{"x":"a","y":"c"}`, "a", "d", `["c"]`, `["a","c","d"]`},
		{`[1,"1"]`, "1", "2", `[]`, `[1,"2"]`},
		{`["a/b","é"]`, "x", "é", `["a\/b","\u00e9"]`, `["a\/b","\u00e9"]`},
	} {
		if got := enc(arrayDiff(decodeIDs(tc.in), tc.remove)); got != tc.wantDiff {
			t.Errorf("diff %s - %s = %s, want %s", tc.in, tc.remove, got, tc.wantDiff)
		}
		if got := enc(arrayUnique(append(decodeIDs(tc.in), str(tc.add)))); got != tc.wantAdd {
			t.Errorf("merge %s + %s = %s, want %s", tc.in, tc.add, got, tc.wantAdd)
		}
	}
}
