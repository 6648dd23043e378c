package php

import (
	"encoding/json"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

var intvalCases = []string{
	"0", "7", "+7", "-5", "  -0012", " 12abc", "1.9", "-1.9", ".5", "5.", "-.5e1", "1e3", "1e3abc", "1.5e3", "1e", "1e+", "1E-2",
	"99999999999999999999", "-99999999999999999999", "1e20", "-1e20", "9223372036854775807", "9223372036854775808",
	"0x1A", "abc", "", " ", "\t\n3", "--1", "+-1", "1_000", "١٢",
}

// TestIntvalMatchesPHP compares Intval with PHP's (int) cast of the same strings.
func TestIntvalMatchesPHP(t *testing.T) {
	testenv.NeedPHP(t)
	in, _ := json.Marshal(intvalCases)
	out, err := exec.Command("php", "-r", `foreach (json_decode($argv[1]) as $s) { echo (int) $s, "\n"; }`, string(in)).Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(intvalCases) {
		t.Fatalf("php printed %d lines for %d cases", len(lines), len(intvalCases))
	}
	for i, s := range intvalCases {
		want, err := strconv.ParseInt(lines[i], 10, 64)
		if err != nil {
			t.Fatalf("php line %q: %v", lines[i], err)
		}
		if got := Intval(s); got != want {
			t.Errorf("Intval(%q) = %d, PHP (int) gives %d", s, got, want)
		}
	}
}

func FuzzIntval(f *testing.F) {
	for _, s := range intvalCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n := Intval(s)
		if IsNumeric(s) && !strings.ContainsAny(s, ".eE") {
			if want, err := strconv.ParseInt(strings.Trim(s, " \t\n\r\v\f"), 10, 64); err == nil && n != want {
				t.Fatalf("Intval(%q) = %d, want %d", s, n, want)
			}
		}
	})
}

func TestIsNumeric(t *testing.T) {
	for s, want := range map[string]bool{
		"1": true, "-1.5": true, ".5": true, "5.": true, "1e3": true, " 1 ": true, "+0": true,
		"": false, "e3": false, "1e": false, "0x1A": false, "1 2": false, ".": false, "-": false,
	} {
		if got := IsNumeric(s); got != want {
			t.Errorf("IsNumeric(%q) = %v, want %v", s, got, want)
		}
	}
}
