package php

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// TestXXH128AgainstPHP: every length from 0 to 1100 bytes (each code path of XXH3-128,
// the long one over several blocks) and some class-like names hash as PHP's
// hash('xxh128', ...) does.
func TestXXH128AgainstPHP(t *testing.T) {
	if _, err := exec.LookPath("php"); err != nil {
		testenv.Need(t, false, "php not in PATH")
	}
	rng := rand.New(rand.NewPCG(1, 2))
	var in []string
	for n := 0; n <= 1100; n++ {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		in = append(in, string(b))
	}
	in = append(in, `App\Listeners\SendShipmentNotice`, `App\Jobs\Matrix\UniqueJob`, "Grüße 😀")
	js, _ := json.Marshal(func() []string {
		out := make([]string, len(in))
		for i, s := range in {
			out[i] = hexOf(s)
		}
		return out
	}())
	cmd := exec.Command("php", "-r", `foreach (json_decode(stream_get_contents(STDIN)) as $h) echo hash('xxh128', hex2bin($h)), "\n";`)
	cmd.Stdin = bytes.NewReader(js)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(want) != len(in) {
		t.Fatalf("php gave %d hashes for %d inputs", len(want), len(in))
	}
	bad := 0
	for i, s := range in {
		if got := XXH128(s); got != want[i] && bad < 10 {
			bad++
			t.Errorf("XXH128 of %d bytes = %s, PHP says %s", len(s), got, want[i])
		}
	}
}

func hexOf(s string) string {
	const digits = "0123456789abcdef"
	b := make([]byte, 2*len(s))
	for i := 0; i < len(s); i++ {
		b[2*i], b[2*i+1] = digits[s[i]>>4], digits[s[i]&15]
	}
	return string(b)
}
