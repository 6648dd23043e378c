package php

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"math"
	"math/rand"
	"os/exec"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// phpFloatProgram prints, for each big-endian hex double on stdin, (string) $v and
// (string) round($v, 2): the forms of Horizon's timestamps and runtimes.
const phpFloatProgram = `while (($h = fgets(STDIN)) !== false) {
	$v = unpack("E", hex2bin(trim($h)))[1];
	echo (string) $v, " ", (string) round($v, 2), "\n";
}`

// hzFloatSamples are the values the PHP comparison covers: runtimes in milliseconds with
// microsecond resolution, microtime(true) values and their negations, exact halves
// (x.xx5, where PHP's pre-rounding matters), and extremes of both notations.
func hzFloatSamples() []float64 {
	rng := rand.New(rand.NewSource(7))
	var vals []float64
	for i := 0; i < 20000; i++ {
		vals = append(vals, float64(rng.Int63n(1e8))/1000)
	}
	for i := 0; i < 4000; i++ {
		t := 1.7e9 + float64(rng.Int63n(3e8)) + float64(rng.Int63n(1e6))/1e6
		vals = append(vals, t, -t)
	}
	for i := 0; i < 3000; i++ {
		vals = append(vals, float64(i)/1000+0.005, float64(i)/200)
	}
	for i := 0; i < 3000; i++ {
		vals = append(vals, rng.Float64()*math.Pow10(rng.Intn(24)-6))
	}
	return append(vals, 1.005, 2.675, 1.115, 0.285, 1e25, 1.5e25, 0.00001, 0.0001, 123456789012345,
		12345678901234, 1e14, 1e15, 99999999999999.99, 0.1+0.2, 5e-324, math.MaxFloat64, -0.5, 0.5)
}

func TestFloatStringAndRoundMatchPHP(t *testing.T) {
	if _, err := exec.LookPath("php"); err != nil {
		testenv.Need(t, false, "php: %v", err)
	}
	vals := hzFloatSamples()
	var in bytes.Buffer
	for _, v := range vals {
		var b [8]byte
		binary.BigEndian.PutUint64(b[:], math.Float64bits(v))
		in.WriteString(hex.EncodeToString(b[:]) + "\n")
	}
	cmd := exec.Command("php", "-r", phpFloatProgram)
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	i, bad := 0, 0
	for ; sc.Scan(); i++ {
		str, rounded, _ := strings.Cut(sc.Text(), " ")
		v := vals[i]
		if got := FloatString(v); got != str {
			bad++
			t.Errorf("(string) %v: got %s, PHP %s", v, got, str)
		}
		if got := FloatString(Round(v, 2)); got != rounded {
			bad++
			t.Errorf("round(%v, 2): got %s, PHP %s", v, got, rounded)
		}
		if bad > 20 {
			t.Fatal("too many differences")
		}
	}
	if i != len(vals) {
		t.Fatalf("PHP printed %d lines for %d values", i, len(vals))
	}
}

func TestFloatStringExamples(t *testing.T) {
	for v, want := range map[float64]string{
		1729411372.3932: "1729411372.3932", 1729411372.39325: "1729411372.3932", 1729411372.39335: "1729411372.3933", -1729411372.5: "-1729411372.5",
		1729411372: "1729411372", 12.35: "12.35", 1e25: "1.0E+25", 0.00001: "1.0E-5", 0.0001: "0.0001",
	} {
		if got := FloatString(v); got != want {
			t.Errorf("FloatString(%v) = %s, want %s", v, got, want)
		}
	}
	if got := FloatString(Round(1.005, 2)); got != "1.01" {
		t.Errorf("round(1.005, 2) = %s, want PHP's 1.01", got)
	}
}
