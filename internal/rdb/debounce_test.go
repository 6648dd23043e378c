package rdb

import (
	"bytes"
	"os/exec"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

var debounceValues = []string{`s:40:"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";`, `s:0:"";`, `s:3:"ab";`, `s:3:"abc"`, `s:-1:"";`,
	`s:+3:"abc";`, `s:3:"abc";x`, "N;", "b:1;", "b:0;", "i:5;", "12345", "1e3", " 7", "", "garbage", `s:2:"é";`}

// debounceValue reads a cached value as RedisStore::get does: what PHP's getCurrentOwner
// returns is null, a string, or something else, with the same string.
func TestDebounceValueMatchesPHP(t *testing.T) {
	testenv.NeedPHP(t)
	// RedisStore::unserialize: numeric values are kept, the rest goes through unserialize().
	args := append([]string{"-r", `foreach (array_slice($argv, 1) as $v) {
		$x = is_numeric($v) ? $v : @unserialize($v);
		echo is_null($x) ? "null" : (is_string($x) ? "string:" . bin2hex($x) : "other"), "\n"; }`, "--"}, debounceValues...)
	out, err := exec.Command("php", args...).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	if len(lines) != len(debounceValues) {
		t.Fatalf("php answered %d lines for %d values", len(lines), len(debounceValues))
	}
	for i, v := range debounceValues {
		got := debounceValue(v)
		want := string(lines[i])
		var have string
		switch {
		case !got.Set:
			have = "null"
		case got.IsString:
			have = "string:" + hexOf(got.Str)
		default:
			have = "other"
		}
		if have != want {
			t.Errorf("debounceValue(%q) = %s, PHP: %s", v, have, want)
		}
	}
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 0, 2*len(s))
	for i := 0; i < len(s); i++ {
		b = append(b, digits[s[i]>>4], digits[s[i]&15])
	}
	return string(b)
}

func FuzzDebounceValue(f *testing.F) {
	for _, v := range debounceValues {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got := debounceValue(v)
		if got.IsString && !got.Set {
			t.Fatalf("%q: a string that is not set", v)
		}
		if got.IsString && len(got.Str) > len(v) {
			t.Fatalf("%q: string longer than the value", v)
		}
	})
}
