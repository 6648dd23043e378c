package php

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"os/exec"
	"strconv"
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

// appendFloatGCVT is AppendFloat without its fast path: php_gcvt's layout applied to
// strconv's shortest digits, for every magnitude.
func appendFloatGCVT(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) || f == 0 {
		return FormatFloat(f, 'E')
	}
	e := strconv.FormatFloat(math.Abs(f), 'e', -1, 64)
	mant, exp, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	x, _ := strconv.Atoi(exp)
	decpt := x + 1
	sign := ""
	if f < 0 {
		sign = "-"
	}
	switch {
	case decpt < -3 || decpt > 17:
		return FormatFloat(f, 'E')
	case decpt <= 0:
		return sign + "0." + strings.Repeat("0", -decpt) + digits
	case decpt >= len(digits):
		return sign + digits + strings.Repeat("0", decpt-len(digits))
	}
	return sign + digits[:decpt] + "." + digits[decpt:]
}

// The fast path for 1e-3 <= |f| < 1e15 writes what the general layout writes, at the
// edges of that range and across it.
func TestAppendFloatFastPathMatchesLayout(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	vals := []float64{1e-3, math.Nextafter(1e-3, 0), math.Nextafter(1e-3, 1), 1e15, math.Nextafter(1e15, 0),
		999999999999999.9, 0.0015, 123.456, 1, 10, 100, 0.1, 0.75, -1.5, 1e14, 99999999999999.99}
	for i := 0; i < 200000; i++ {
		f := r.Float64() * math.Pow(10, float64(r.IntN(22)-5))
		if i%3 == 0 {
			f = float64(r.Int64N(1e15)) / math.Pow(10, float64(r.IntN(18)))
		}
		if i%2 == 0 {
			f = -f
		}
		vals = append(vals, f)
	}
	for _, f := range vals {
		if got, want := FormatFloat(f, 'E'), appendFloatGCVT(f); got != want {
			t.Fatalf("%b (%v): got %s, want %s", math.Float64bits(f), f, got, want)
		}
	}
}
