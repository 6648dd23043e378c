package payload

import (
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// jsonStringCorpus is every single byte, every byte pair, the code point edges, broken
// sequences and random strings: what PHP's string escaping is checked on.
func jsonStringCorpus(pairs bool) []string {
	var out []string
	for b := 0; b < 256; b++ {
		out = append(out, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z/")
	}
	if pairs {
		for a := 0; a < 256; a++ {
			for b := 0; b < 256; b++ {
				out = append(out, string([]byte{byte(a), byte(b)}))
			}
		}
	}
	// Three-byte and four-byte leads with every second byte.
	for lead := 0xe0; lead <= 0xf7; lead++ {
		for b := 0; b < 256; b++ {
			out = append(out, string([]byte{byte(lead), byte(b), 0x80}), string([]byte{byte(lead), byte(b), 0xbf, 0xbf}))
		}
	}
	for _, r := range []rune{0, 0x1f, 0x20, 0x7f, 0x80, 0xff, 0x7ff, 0x800, 0xfff, 0x1000, 0xd7ff, 0xe000, 0xfeff,
		0xfffd, 0xfffe, 0xffff, 0x10000, 0x1f600, 0xfffff, 0x100000, 0x10ffff, 0x2027, 0x2028, 0x2029, 0x202a} {
		out = append(out, string(r), "x"+string(r)+"y"+string(r))
	}
	out = append(out,
		"", `"`, `\`, "/", "</script>", "<>&'", `O:8:"App\Jobs":1:{s:6:"`+"\x00*\x00job"+`";N;}`,
		"\xc0\x80", "\xe0\x80\x80", "\xed\xa0\x80", "\xed\xbf\xbf", "\xf4\x90\x80\x80", "\xf8\x88\x80\x80\x80",
		"\xe2\x82", "\xf0\x9f\x98", "é\xff", "😀\u2028\u2029é\x00\x1f\x7f",
	)
	rng := rand.New(rand.NewPCG(1, 2))
	ranges := [][2]rune{{0, 0x7f}, {0x80, 0x7ff}, {0x800, 0xd7ff}, {0xe000, 0xffff}, {0x10000, 0x10ffff}, {0x2028, 0x2029}}
	for i := 0; i < 3000; i++ {
		var sb strings.Builder
		for n := rng.IntN(24); n > 0; n-- {
			rg := ranges[rng.IntN(len(ranges))]
			sb.WriteRune(rg[0] + rune(rng.Int32N(rg[1]-rg[0]+1)))
		}
		out = append(out, sb.String())
	}
	for i := 0; i < 2000; i++ {
		b := make([]byte, rng.IntN(12))
		for j := range b {
			b[j] = byte(rng.Uint32())
		}
		out = append(out, string(b))
	}
	return out
}

func TestAppendJSONStringMatchesPHP(t *testing.T) {
	flagSets := []JSONFlags{0, JSONUnescapedUnicode, JSONUnescapedSlashes, JSONUnescapedSlashes | JSONUnescapedUnicode,
		JSONUnescapedUnicode | JSONUnescapedLineTerminators}
	for _, flags := range flagSets {
		t.Run("flags="+strconv.Itoa(phpFlags(flags)), func(t *testing.T) {
			corpus := jsonStringCorpus(flags == 0 || flags == JSONUnescapedUnicode)
			php := phpEncodeStrings(t, flags, corpus)
			bad, utf8errs := 0, 0
			for i, s := range corpus {
				got, err := AppendJSONString(nil, s, flags)
				if d := sameAsPHP(got, err, php[i]); d != "" {
					if bad++; bad <= 10 {
						t.Errorf("%q: %s", s, d)
					}
					continue
				}
				if err != nil {
					var ee *EncodeError
					if !errors.As(err, &ee) || ee.Code != php[i].code || ee.Code != JSONErrorUTF8 {
						t.Errorf("%q: error %v, PHP %s", s, err, php[i].err)
					}
					utf8errs++
				}
			}
			if bad > 0 {
				t.Fatalf("%d of %d strings differ from PHP", bad, len(corpus))
			}
			if utf8errs == 0 || utf8errs == len(corpus) {
				t.Fatalf("corpus has %d invalid strings of %d: not a meaningful check", utf8errs, len(corpus))
			}
			t.Logf("%d strings identical to PHP, %d refused by both as malformed UTF-8", len(corpus), utf8errs)
		})
	}
}

// The error offset points at the first bad byte.
func TestAppendJSONStringErrorOffset(t *testing.T) {
	_, err := AppendJSONString(nil, "abcé\xffdef", JSONUnescapedUnicode)
	var ee *EncodeError
	if !errors.As(err, &ee) || ee.Offset != 5 || ee.Code != JSONErrorUTF8 {
		t.Fatalf("err %v", err)
	}
	if !strings.Contains(err.Error(), "error code 5") {
		t.Errorf("text %q", err)
	}
}

func TestAppendJSONFloat(t *testing.T) {
	for _, c := range []struct {
		f    float64
		want string
	}{{1, "1"}, {0.1, "0.1"}, {math.Copysign(0, -1), "-0"}, {1e25, "1.0e+25"}, {123456789012340, "123456789012340"},
		{1e16, "10000000000000000"}, {1e17, "1.0e+17"}, {1.5e-7, "1.5e-7"}, {0.0001, "0.0001"}, {0.00001, "1.0e-5"}} {
		got, err := AppendJSONFloat(nil, c.f)
		if err != nil || string(got) != c.want {
			t.Errorf("%v: %s %v, want %s", c.f, got, err, c.want)
		}
	}
	for _, f := range []float64{math.Inf(1), math.Inf(-1), math.NaN()} {
		if _, err := AppendJSONFloat(nil, f); err == nil || err.(*EncodeError).Code != JSONErrorInfOrNaN {
			t.Errorf("%v: %v", f, err)
		}
	}
}
