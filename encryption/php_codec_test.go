package encryption_test

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/laraq/laraq/encryption"
)

// PHP's base64_decode and json_decode decide which payloads the Encrypter accepts, so
// the Go versions are held to PHP on edge cases and on a few thousand generated inputs
// (a fixed seed, so a failure reproduces).

func TestPHPBase64Decode(t *testing.T) {
	p := startPHP(t, peers[0])
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"A", "Q", "z", "9", "+", "/", "=", "==", " ", "\t", "\n", "\r", "\v", "\f", "!", "\x00", "é", "-", "_", "QUJD"}
	inputs := []string{"", "=", "QQ==", "QQ=", "QQ", "Q", "QUJD", "QUJD=", "QUJDRA", "QQ==QQ==", "Q Q = =", "QQ==\n", "QQ=\n=", "QQ===", "=QQ", "YWJj\r\nZGVm"}
	for range 3000 {
		var b strings.Builder
		for range rng.IntN(11) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		inputs = append(inputs, b.String())
	}
	for _, in := range inputs {
		for _, strict := range []bool{false, true} {
			r := p.call(map[string]any{"op": "base64", "value": b64([]byte(in)), "strict": strict})
			got, ok := encryption.PHPBase64Decode(in, strict)
			if ok != r.ok() || ok && !bytes.Equal(got, unb64(t, r.Value)) {
				t.Errorf("base64_decode(%q, strict=%v): PHP %v %x, Go %v %x", in, strict, r.ok(), unb64(t, r.Value), ok, got)
			}
		}
	}
}

func TestPHPJSONDecode(t *testing.T) {
	p := startPHP(t, peers[0])
	rng := rand.New(rand.NewPCG(3, 4))
	inputs := []string{
		``, ` `, `null`, `{}`, `[]`, `{"iv":"a"}`, `{"iv":"a","iv":null}`, `{"iv":null,"iv":"b"}`, `{"\u0069v":"x"}`,
		`{"iv":"\ud83d\ude00"}`, `{"iv":"\ud83d"}`, `{"iv":"\ude00"}`, `{"iv":"\ud83d\u0041"}`, `{"iv":"\u00e9\/\b\f\n\r\t\"\\"}`,
		`{"iv":"\x"}`, `{"iv":"\u12"}`, `{"iv":"\u12G4"}`, "{\"iv\":\"\xff\"}", "{\"iv\":\"\xc0\xaf\"}", "{\"iv\":\"\xed\xa0\x80\"}",
		"{\"iv\":\"\xf4\x90\x80\x80\"}", "{\"iv\":\"\x7f\"}", "{\"iv\":\"\x1f\"}", "{\"iv\":\"a\x00\"}", "{\"iv\":1}\x00",
		`{"tag":0}`, `{"tag":-0}`, `{"tag":0.0}`, `{"tag":0e10}`, `{"tag":1e-400}`, `{"tag":1e400}`, `{"tag":"0"}`, `{"tag":"00"}`,
		`{"tag":""}`, `{"tag":false}`, `{"tag":true}`, `{"tag":[]}`, `{"tag":{}}`, `{"tag":[0]}`, `{"tag":{"a":1}}`,
		`{"tag":01}`, `{"tag":1.}`, `{"tag":.5}`, `{"tag":+1}`, `{"tag":-}`, `{"tag":1e}`, `{"tag":1E+2}`, `{"tag":-12.5e-3}`,
		`{"tag":TRUE}`, `{"tag":nul}`, `{"tag":truex}`, `{"iv":"a",}`, `{,"iv":"a"}`, `{"iv" "a"}`, `{"iv":"a"} x`, ` {"iv":"a"} `,
		"\t\r\n{\"iv\":\"a\"}\n", "\ufeff{}", `{'iv':'a'}`, `{iv:"a"}`, `[{"iv":"a"}]`, `"iv"`, `12`, `{"a":[1,2,{"b":null}]}`,
		`{"iv":"a"`, `{"iv":`, `{"iv"`, `{"`, `{`, `[`, `[1,]`, `[1 2]`, `{"value":"v","mac":"m","tag":"t","iv":"i"}`,
		`{"iv":9223372036854775807}`, `{"iv":9223372036854775808}`, `{"iv":-1}`, `{"iv":1234567890123456}`,
		`{"x":` + strings.Repeat("[", 510) + strings.Repeat("]", 510) + `}`,
		`{"x":` + strings.Repeat("[", 511) + strings.Repeat("]", 511) + `}`,
		strings.Repeat("[", 511) + strings.Repeat("]", 511), strings.Repeat("[", 512) + strings.Repeat("]", 512),
		`{"x":` + strings.Repeat(`{"a":`, 510) + `1` + strings.Repeat("}", 510) + `}`,
		`{"x":` + strings.Repeat(`{"a":`, 511) + `1` + strings.Repeat("}", 511) + `}`,
	}
	tokens := []string{`{`, `}`, `[`, `]`, `,`, `:`, `"iv"`, `"tag"`, `"mac"`, `"value"`, `"x"`, `"\u0041"`, `"\ud800"`, `0`, `-0`,
		`1.5e3`, `true`, `false`, `null`, ` `, `"0"`, `""`, "\"\xe2\x82\xac\"", "\"\xe2\x82\"", `01`, `1e999`}
	for range 1500 {
		var b strings.Builder
		b.WriteString(`{"iv":`)
		for range rng.IntN(12) {
			b.WriteString(tokens[rng.IntN(len(tokens))])
		}
		inputs = append(inputs, b.String())
	}
	for _, in := range inputs {
		r := p.call(map[string]any{"op": "json", "value": b64([]byte(in))})
		got, err := encryption.DecodeEnvelope([]byte(in))
		if (err == nil) != r.ok() {
			t.Errorf("json_decode(%.80q): PHP ok=%v, Go %v", in, r.ok(), err)
			continue
		}
		if err != nil {
			continue
		}
		for name, want := range r.Fields {
			g := got[name]
			if g.Set != want.Set || g.String != want.String || g.Empty != want.Empty || g.Value != string(unb64(t, want.Value)) {
				t.Errorf("json_decode(%.80q)[%s]: PHP %+v, Go %+v", in, name, want, g)
			}
		}
	}
}
