package job

import (
	"bytes"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// contextCases are context values as payloads carry them, reserved (cjson) copies and
// hand-made oddities included.
var contextCases = []string{
	`{"data":{"tenant":"s:4:\"acme\";","user":"i:7;"},"hidden":{"secret":"s:2:\"s3\";"}}`,
	`{"data":[],"hidden":{"k":"i:1;"}}`,
	`{"hidden":{},"data":{"a":"b:1;"}}`,
	`{"data":{"5":"i:1;","x":"i:2;","7":"i:3;"},"hidden":[]}`,
	`{"data":{"0":"i:1;","1":"i:2;"},"hidden":[]}`,
	`{"data":{"1":"i:1;","0":"i:2;"},"hidden":[]}`,
	`{"data":["i:1;","i:2;"]}`,
	`{"data":[],"hidden":[]}`,
	`{"data":{"path":"s:3:\"a\/b\";","\u00e9t\u00e9":"s:2:\"\u00e9\";","nul":"s:3:\"a\u0000b\";"},"hidden":[]}`,
	`{"data":{"a":"i:1;","b":"i:3;","a":"i:2;"},"hidden":[]}`,
	`{"data":{"05":"i:1;","-0":"i:2;","-3":"i:3;","9223372036854775808":"i:4;"},"hidden":[]}`,
	`null`,
	`{"data":null,"hidden":{"laravel_unique_job_key":"s:3:\"k:1\";"}}`,
	`{"other":1}`,
	`["x"]`,
}

// What a 11+ worker carries from one job into the next (hydrate, then dehydrate, then
// json_encode) is what laraq carries, for each release.
func TestLogContextMatchesLaravel(t *testing.T) {
	for _, major := range []int{11, 12, 13} {
		t.Run(testenv.MajorName(major), func(t *testing.T) {
			testenv.NeedPeer(t, major)
			out := testenv.PHPEnv{Major: major}.Run(t, []byte(strings.Join(contextCases, "\n")+"\n"), "ops_context.php")
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(lines) != len(contextCases) {
				t.Fatalf("PHP answered %d lines for %d cases:\n%s", len(lines), len(contextCases), out)
			}
			for i, c := range contextCases {
				lc, err := parseLogContext([]byte(c))
				if err != nil {
					t.Errorf("%s: %v", c, err)
					continue
				}
				got := "null"
				if !lc.empty() {
					b, err := lc.appendJSON(nil)
					if err != nil {
						t.Fatal(err)
					}
					got = string(b)
				}
				if got != lines[i] {
					t.Errorf("context %s:\n got  %s\n want %s (Laravel %s)", c, got, lines[i], testenv.Peer(t, major).Tag)
				}
			}
		})
	}
}

// Values a worker cannot hydrate are refused with the place they are at.
func TestLogContextRefusesWhatPHPCannotHydrate(t *testing.T) {
	for _, c := range []string{`{"data":{"a":1}}`, `{"data":"x"}`, `{"hidden":{"k":["s"]}}`, `{"data":{"a":"i:1;"`} {
		if _, err := parseLogContext([]byte(c)); err == nil {
			t.Errorf("%s accepted", c)
		}
	}
}

func FuzzLogContext(f *testing.F) {
	for _, c := range contextCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		lc, err := parseLogContext(raw)
		if err != nil || lc.empty() {
			return
		}
		b, err := lc.appendJSON(nil)
		if err != nil {
			return // not UTF-8: json_encode fails too
		}
		again, err := parseLogContext(b)
		if err != nil {
			t.Fatalf("%s → %s: %v", raw, b, err)
		}
		b2, _ := again.appendJSON(nil)
		if !bytes.Equal(b, b2) {
			t.Fatalf("not stable: %s → %s → %s", raw, b, b2)
		}
	})
}
