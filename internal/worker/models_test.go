package worker

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

var truthyCases = []string{`true`, `false`, `null`, `0`, `1`, `-0`, `0.0`, `0e3`, `2.5`, `""`, `"0"`, `"00"`, `" "`,
	`"false"`, `[]`, `{}`, `[0]`, `{"a":null}`, `"\u0030"`, `-1e-400`}

// jsonTruthy is what `if ($payload['key'] ?? false)` makes of the value PHP's json_decode
// gives.
func TestJSONTruthyMatchesPHP(t *testing.T) {
	testenv.NeedPHP(t)
	args := append([]string{"-r", `foreach (array_slice($argv, 1) as $j) { echo json_decode($j, true) ? "1" : "0"; }`, "--"}, truthyCases...)
	out, err := exec.Command("php", args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSpace(string(out))
	var got strings.Builder
	for _, c := range truthyCases {
		if jsonTruthy([]byte(c)) {
			got.WriteByte('1')
		} else {
			got.WriteByte('0')
		}
	}
	if got.String() != want {
		t.Fatalf("jsonTruthy of %q:\n got  %s\n want %s (PHP)", truthyCases, got.String(), want)
	}
}

func FuzzJSONTruthy(f *testing.F) {
	for _, c := range truthyCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		_ = jsonTruthy(raw) // never panics, whatever the payload holds
	})
}
