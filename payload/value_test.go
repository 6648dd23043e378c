package payload

import (
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// randomJSON writes a random JSON document exercising what PHP's decode/encode pair
// changes: numeric-looking keys, repeated keys, empty containers, every number
// spelling, escapes and non-ASCII text.
func randomJSON(rng *rand.Rand, depth int) string {
	var sb strings.Builder
	ws := func() {
		if rng.IntN(6) == 0 {
			sb.WriteString([]string{" ", "\n", "\t", "\r\n  "}[rng.IntN(4)])
		}
	}
	var value func(d int)
	str := func() {
		parts := []string{"a", "é", `\u00e9`, `\/`, "/", `\"`, `\\`, `\n`, `\u0000`, `\u001f`, "\u007f", "😀", `\ud83d\ude00`,
			"\u2028", `\u2029`, "0", "1", "-1", "01", "attempts", "", " ", `\t`}
		sb.WriteByte('"')
		for n := rng.IntN(4); n > 0; n-- {
			sb.WriteString(parts[rng.IntN(len(parts))])
		}
		sb.WriteByte('"')
	}
	value = func(d int) {
		ws()
		switch k := rng.IntN(10); {
		case k < 2 && d > 0:
			sb.WriteByte('[')
			for i, n := 0, rng.IntN(4); i < n; i++ {
				if i > 0 {
					sb.WriteByte(',')
				}
				value(d - 1)
			}
			ws()
			sb.WriteByte(']')
		case k < 4 && d > 0:
			sb.WriteByte('{')
			keyset := [][]string{{"0", "1", "2", "3"}, {"a", "b", "a", "0"}, {"1", "0"}, {"attempts", "data", "-0", "00", "-1", "9223372036854775808"}}
			ks := keyset[rng.IntN(len(keyset))]
			for i, n := 0, rng.IntN(5); i < n; i++ {
				if i > 0 {
					sb.WriteByte(',')
				}
				ws()
				if rng.IntN(8) == 0 {
					str()
				} else {
					sb.WriteString(strconv.Quote(ks[min(i, len(ks)-1)]))
				}
				ws()
				sb.WriteByte(':')
				value(d - 1)
			}
			ws()
			sb.WriteByte('}')
		case k < 6:
			nums := []string{"0", "-0", "-0.0", "0.0", "1", "-1", "1.0", "1.5", "0.1", "1e2", "1E+2", "1e-7", "1.2345678901234e+14",
				"123456789012345", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
				"18446744073709551616", "1e308", "2.5e-308", "4.9e-324", "1e-400", "0.30000000000000004", "100000000000000000000"}
			sb.WriteString(nums[rng.IntN(len(nums))])
		case k < 9:
			str()
		default:
			sb.WriteString([]string{"true", "false", "null"}[rng.IntN(3)])
		}
		ws()
	}
	value(depth)
	return sb.String()
}

func valueCorpus(t *testing.T) []string {
	docs := []string{
		`{}`, `[]`, `[{}]`, `{"a":{}}`, `{"0":"a","1":"b"}`, `{"1":"a","0":"b"}`, `{"0":"a","2":"b"}`, `{"00":1}`, `{"-0":1}`,
		`{"a":1,"b":2,"a":3}`, `{"0":1,"0":2}`, `{"1":1,"0":2,"1":3}`, `[1,2,3]`, `{"":1}`, `{"\u0000":1}`, `{"a\/b":"\/"}`,
		`-0`, `-0.0`, `0.0`, `1.0`, `1e2`, `1.2345678901234e+14`, `9223372036854775807`, `9223372036854775808`,
		`-9223372036854775808`, `-9223372036854775809`, `1e400`, `[1e400]`, `-1e400`, `1e-400`, `0.1`, `3.14159`,
		`"\u00e9"`, `"é"`, `"\ud83d\ude00"`, `"\u2028"`, `"\/"`, `"a\u0000b"`, `"\u001f\u007f"`, `true`, `false`, `null`,
		` [1] `, "\t{\n}\r\n",
		// Not JSON to PHP.
		``, ` `, `TRUE`, `Null`, `01`, `-`, `1.`, `.5`, `+1`, `[1,]`, `{,}`, `{"a"}`, `{"a":1,}`, `[1] x`, `"\ud800"`, `"\udc00"`,
		`"\ud800\u0041"`, "\"\xff\"", "\"\xc0\x80\"", "\"a\nb\"", `"\a"`, `"\u00"`, "\xef\xbb\xbf[]", `[1 2]`, `{"a" 1}`, `nul`,
		`[` + strings.Repeat("[", 510) + strings.Repeat("]", 510) + `]`,
		`[` + strings.Repeat("[", 511) + strings.Repeat("]", 511) + `]`,
		`[` + strings.Repeat("[", 512) + strings.Repeat("]", 512) + `]`,
		strings.Repeat(`{"a":`, 512) + `1` + strings.Repeat(`}`, 512),
		strings.Repeat(`{"a":`, 513) + `1` + strings.Repeat(`}`, 513),
	}
	for _, name := range sampleIDs(t) {
		docs = append(docs, string(sample(t, name)))
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 4000; i++ {
		docs = append(docs, randomJSON(rng, 1+rng.IntN(4)))
	}
	// A wide object, to exercise the keyed duplicate lookup.
	var wide strings.Builder
	wide.WriteString("{")
	for i := 0; i < 60; i++ {
		wide.WriteString(`"k` + strconv.Itoa(i%40) + `":` + strconv.Itoa(i) + ",")
	}
	wide.WriteString(`"z":0}`)
	docs = append(docs, wide.String())
	return docs
}

func TestValueRoundTripMatchesPHP(t *testing.T) {
	docs := valueCorpus(t)
	for _, flags := range []JSONFlags{0, JSONUnescapedUnicode} {
		t.Run("flags="+strconv.Itoa(phpFlags(flags)), func(t *testing.T) {
			php := phpRoundTrip(t, flags, docs)
			bad, decodeErrs, encodeErrs := 0, 0, 0
			for i, doc := range docs {
				v, err := DecodeValue([]byte(doc))
				var got []byte
				if err == nil {
					got, err = v.AppendJSON(nil, flags)
					if err != nil {
						encodeErrs++
						if !strings.Contains(php[i].err, "encode:") {
							t.Errorf("%.80q: Go encode error %v, PHP %q", doc, err, php[i].err)
						}
					}
				} else {
					decodeErrs++
					var pe *Error
					if !errors.As(err, &pe) || !strings.Contains(php[i].err, "decode:") {
						t.Errorf("%.80q: Go decode error %v, PHP %q", doc, err, php[i].err)
					}
				}
				if d := sameAsPHP(got, err, php[i]); d != "" {
					if bad++; bad <= 10 {
						t.Errorf("%.200q: %s", doc, d)
					}
				}
			}
			if bad > 0 {
				t.Fatalf("%d of %d documents differ from PHP", bad, len(docs))
			}
			if decodeErrs < 25 || encodeErrs < 3 {
				t.Fatalf("corpus too tame: %d decode and %d encode failures", decodeErrs, encodeErrs)
			}
			t.Logf("%d documents identical to PHP (%d refused by both at decode, %d at encode)", len(docs), decodeErrs, encodeErrs)
		})
	}
}

func TestValueGetSet(t *testing.T) {
	v, err := DecodeValue([]byte(`{"attempts":3,"data":{"0":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if a := v.Get("attempts"); a == nil || a.Kind != KindInt || a.Int != 3 {
		t.Fatalf("attempts %+v", a)
	}
	if !v.Get("data").IsList() || v.IsList() {
		t.Error("list detection")
	}
	v.Set("attempts", Value{Kind: KindInt})
	v.Set("new", Value{Kind: KindString, Str: "é/"})
	got, _ := v.AppendJSON(nil, 0)
	if string(got) != `{"attempts":0,"data":["x"],"new":"\u00e9\/"}` {
		t.Errorf("got %s", got)
	}
	s := Value{Kind: KindString}
	if s.Set("a", Value{}) || s.Get("a") != nil {
		t.Error("Set on a string")
	}
	var n Value
	if !n.Set("a", Value{Kind: KindBool, Bool: true}) || n.Kind != KindArray {
		t.Error("Set on null")
	}
}

func TestValueEncodeErrorPath(t *testing.T) {
	v := Value{Kind: KindArray, Items: []Item{{Key: "data", Value: Value{Kind: KindArray, Items: []Item{{Key: "s", Value: Value{Kind: KindString, Str: "a\xffb"}}}}}}}
	_, err := v.AppendJSON(nil, 0)
	var ee *EncodeError
	if !errors.As(err, &ee) || ee.Path != "data.s" || ee.Code != JSONErrorUTF8 || ee.Offset != 1 {
		t.Fatalf("err %v", err)
	}
}
