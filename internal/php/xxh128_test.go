package php

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// xxhInputs covers every length class of XXH3-128 (0, 1–3, 4–8, 9–16, 17–128, 129–240, and
// the long path's partial and whole 1024-byte blocks) with random bytes, plus the names
// DebounceLock hashes.
func xxhInputs() []string {
	r := rand.New(rand.NewPCG(13, 6))
	var in []string
	for _, n := range []int{0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 95, 96, 97, 127, 128,
		129, 159, 160, 161, 191, 192, 223, 239, 240, 241, 255, 256, 320, 511, 1023, 1024, 1025, 1087, 1088, 2047,
		2048, 2049, 4096, 5000, 16385} {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		in = append(in, string(b))
	}
	return append(in, `App\Jobs\SendWelcomeEmail`, "Send welcome email to user 42", "ünïcødé ✓ 😀")
}

// Known answers of PHP 8's hash('xxh128', ...), so that the hash is checked without PHP.
func TestXXH128KnownAnswers(t *testing.T) {
	for in, want := range map[string]string{
		"":  "99aa06d3014798d86001c324468d497f",
		"a": "a96faf705af16834e6c632b61e964e1f",
	} {
		if got := XXH128(in); got != want {
			t.Errorf("XXH128(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestXXH128MatchesPHP compares XXH128 with PHP's hash('xxh128', ...) on every length class.
func TestXXH128MatchesPHP(t *testing.T) {
	testenv.NeedPHP(t)
	inputs := xxhInputs()
	var stdin bytes.Buffer
	for _, s := range inputs {
		stdin.WriteString(hex.EncodeToString([]byte(s)) + "\n")
	}
	cmd := exec.Command("php", "-r", `while (($l = fgets(STDIN)) !== false) { echo hash('xxh128', hex2bin(trim($l))), "\n"; }`)
	cmd.Stdin = &stdin
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	if n := bytes.Count(out, []byte("\n")); n != len(inputs) {
		t.Fatalf("php answered %d lines for %d inputs", n, len(inputs))
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for i := 0; sc.Scan(); i++ {
		want := strings.TrimSpace(sc.Text())
		if got := XXH128(inputs[i]); got != want {
			t.Errorf("length %d: XXH128 = %s, PHP hash('xxh128') = %s", len(inputs[i]), got, want)
		}
	}
}

func FuzzXXH128(f *testing.F) {
	for _, s := range xxhInputs()[:20] {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if h := XXH128(s); len(h) != 32 {
			t.Fatalf("XXH128 gave %q", h)
		}
	})
}
