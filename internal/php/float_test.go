package php

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

func TestAppendFloatKnown(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{0.1, "0.1"}, {1, "1"}, {math.Copysign(0, -1), "-0"}, {0, "0"}, {1e100, "1.0E+100"},
		{1.5e-300, "1.5E-300"}, {3.141592653589793, "3.141592653589793"},
		{0.30000000000000004, "0.30000000000000004"}, {-2.5e-5, "-2.5E-5"}, {0.0001, "0.0001"},
		{123456789012340, "123456789012340"}, {1e17, "1.0E+17"}, {1e16, "10000000000000000"},
		{math.Inf(1), "INF"}, {math.Inf(-1), "-INF"}, {math.NaN(), "NAN"}, {-1.5, "-1.5"},
		{12345678901234567890, "1.2345678901234567E+19"},
	}
	for _, c := range cases {
		if got := FormatFloat(c.f, 'E'); got != c.want {
			t.Errorf("FormatFloat(%v) = %q, want %q", c.f, got, c.want)
		}
	}
}

// TestAppendFloatAgainstPHP compares thousands of random floats with PHP's own serialize()
// and json_encode().
func TestAppendFloatAgainstPHP(t *testing.T) {
	testenv.Need(t, lookPHP(), "php-cli")
	r := rand.New(rand.NewPCG(1, 2))
	var in strings.Builder
	var vals []float64
	for i := 0; i < 3000; i++ {
		var f float64
		switch i % 4 {
		case 0:
			f = math.Float64frombits(r.Uint64())
		case 1:
			f = r.Float64() * math.Pow(10, float64(r.IntN(40)-20))
		case 2:
			f = float64(r.Int64N(1<<53)) / math.Pow(10, float64(r.IntN(8)))
		default:
			f = math.Pow(10, float64(r.IntN(60)-30)) * float64(r.IntN(9)+1)
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			continue
		}
		vals = append(vals, f)
		in.WriteString(fmt.Sprintf("%016x", math.Float64bits(f)))
		in.WriteByte('\n')
	}
	cmd := exec.Command("php", "-r", `while (($l = fgets(STDIN)) !== false) { $f = unpack("E", hex2bin(trim($l)))[1]; echo serialize($f), " ", json_encode($f), "\n"; }`)
	cmd.Stdin = strings.NewReader(in.String())
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for i := 0; sc.Scan(); i++ {
		f := vals[i]
		parts := strings.SplitN(sc.Text(), " ", 2)
		if want, got := parts[0], "d:"+FormatFloat(f, 'E')+";"; got != want {
			t.Errorf("serialize(%b): got %s, PHP %s", math.Float64bits(f), got, want)
		}
		if want, got := parts[1], FormatFloat(f, 'e'); got != want {
			t.Errorf("json_encode(%b): got %s, PHP %s", math.Float64bits(f), got, want)
		}
	}
}

func lookPHP() bool {
	_, err := exec.LookPath("php")
	return err == nil
}
