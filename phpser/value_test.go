package phpser

import (
	"encoding/base64"
	"os/exec"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

func TestTruthy(t *testing.T) {
	for in, want := range map[string]bool{
		`N;`: false, `b:0;`: false, `b:1;`: true, `i:0;`: false, `i:-1;`: true, `d:0;`: false, `d:-0;`: false,
		`d:0.5;`: true, `d:NAN;`: true, `s:0:"";`: false, `s:1:"0";`: false, `s:2:"00";`: true, `s:1:" ";`: true,
		`a:0:{}`: false, `a:1:{i:0;N;}`: true, `O:8:"stdClass":0:{}`: true,
	} {
		v, err := Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Truthy(); got != want {
			t.Errorf("%s: Truthy() = %v, want %v", in, got, want)
		}
	}
	if (*Value)(nil).Truthy() {
		t.Error("nil is truthy")
	}
}

// TestStringCastMatchesPHP compares StringCast with PHP's (string) of the same
// unserialized value ("Array" for an array, as concatenation gives it).
func TestStringCastMatchesPHP(t *testing.T) {
	testenv.NeedPHP(t)
	inputs := []string{`N;`, `b:0;`, `b:1;`, `i:0;`, `i:-42;`, `i:9223372036854775807;`, `d:0;`, `d:-0;`,
		`d:1.5;`, `d:0.1;`, `d:1.0E+25;`, `d:100000000000000000000;`, `d:1.0E-10;`, `d:0.30000000000000004;`,
		`d:123456789012345678;`, `d:INF;`, `d:-INF;`, `d:NAN;`, `s:0:"";`, `s:3:"abc";`, `a:0:{}`, `a:1:{i:0;i:1;}`}
	args := []string{"-r", `foreach (array_slice($argv, 1) as $a) { $v = unserialize(base64_decode($a));` +
		` echo base64_encode(is_array($v) ? 'Array' : (string) $v), "\n"; }`}
	for _, in := range inputs {
		args = append(args, base64.StdEncoding.EncodeToString([]byte(in)))
	}
	out, err := exec.Command("php", args...).Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(inputs) {
		t.Fatalf("php printed %d lines for %d inputs", len(lines), len(inputs))
	}
	for i, in := range inputs {
		want, _ := base64.StdEncoding.DecodeString(lines[i])
		v, err := Decode([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		got, ok := v.StringCast()
		if got != string(want) {
			t.Errorf("%s: StringCast() = %q, PHP (string) gives %q", in, got, want)
		}
		if ok != (v.Kind() != KindArray) {
			t.Errorf("%s: ok = %v", in, ok)
		}
	}
}
