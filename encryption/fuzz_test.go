package encryption_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/laraq/laraq/encryption"
)

// The payloads come from Redis, written by anyone who can reach it: decrypting must
// never panic, and every refusal must be a DecryptError carrying one of Laravel's
// messages and no key material.

type fuzzEncrypter struct {
	e   *encryption.Encrypter
	key []byte
}

// fuzzEncrypters are one Encrypter per cipher with the keys of golden.json (so that its
// payloads decrypt), under the newest rules, 8.83's, and 11.x's with a previous key.
func fuzzEncrypters(f *testing.F) ([]fuzzEncrypter, []golden) {
	f.Helper()
	gs := loadGolden(f)
	var out []fuzzEncrypter
	seen := map[string]bool{}
	for _, g := range gs {
		if seen[g.Cipher] {
			continue
		}
		seen[g.Cipher] = true
		key := unb64(f, g.Key)
		other := bytes.Repeat([]byte{7}, len(key))
		for _, cfg := range []encryption.Config{
			{Key: key, Cipher: g.Cipher},
			{Key: key, Cipher: g.Cipher, Laravel: "8.83"},
			{Key: other, Cipher: g.Cipher, Laravel: "11.56", PreviousKeys: [][]byte{key}},
		} {
			e, err := encryption.NewFromConfig(cfg)
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, fuzzEncrypter{e, key})
		}
	}
	return out, gs
}

func seedPayloads(f *testing.F, gs []golden) {
	for _, g := range gs {
		f.Add(g.Payload)
		raw := unb64(f, g.Payload)
		f.Add(b64(bytes.Replace(raw, []byte(`"tag":""`), []byte(`"tag":"AAAA"`), 1)))
		f.Add(b64(bytes.Replace(raw, []byte(`"mac":"`), []byte(`"mac":5,"x":"`), 1)))
		f.Add(g.Payload[:len(g.Payload)/2])
	}
	for _, s := range []string{"", "=", "eyJpdiI6", "not base64!", b64([]byte(`{"iv":[1],"value":{},"mac":null,"tag":[]}`)),
		b64([]byte(`{"iv":1234567890123456,"value":"","mac":"","tag":"AAAAAAAAAAAAAAAAAAAAAA=="}`)),
		b64([]byte(`{"iv":"\ud800","value":"` + strings.Repeat("[", 600) + `"}`))} {
		f.Add(s)
	}
}

func checkDecryptErr(t *testing.T, err error, key []byte, allowNotString bool) {
	t.Helper()
	if err == nil {
		return
	}
	var de *encryption.DecryptError
	switch {
	case errors.As(err, &de):
		switch de.Message {
		case encryption.MsgPayloadInvalid, encryption.MsgMACInvalid, encryption.MsgCouldNotDecrypt, encryption.MsgTagNotAEAD:
		default:
			t.Fatalf("DecryptError with message %q", de.Message)
		}
	case allowNotString && errors.Is(err, encryption.ErrNotString):
	default:
		t.Fatalf("unexpected error type %T: %v", err, err)
	}
	for _, enc := range []string{hex.EncodeToString(key), b64(key)} {
		if strings.Contains(err.Error(), enc) {
			t.Fatalf("key material in %q", err)
		}
	}
}

func FuzzDecryptString(f *testing.F) {
	encs, gs := fuzzEncrypters(f)
	seedPayloads(f, gs)
	f.Fuzz(func(t *testing.T, payload string) {
		for _, fe := range encs {
			pt, err := fe.e.DecryptString(payload)
			checkDecryptErr(t, err, fe.key, false)
			if err == nil {
				again, err := fe.e.EncryptString(pt)
				if err != nil {
					t.Fatal(err)
				}
				if back, err := fe.e.DecryptString(again); err != nil || !bytes.Equal(back, pt) {
					t.Fatalf("re-encrypted plaintext does not round-trip: %v", err)
				}
			}
		}
		encryption.AppearsEncrypted(payload)
		checkLenientBase64(t, payload)
	})
}

// checkLenientBase64 compares base64_decode($s) with a model: keep the alphabet, drop a
// lone trailing character, decode without padding.
func checkLenientBase64(t *testing.T, s string) {
	var kept []byte
	for i := range len(s) {
		c := s[i]
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' {
			kept = append(kept, c)
		}
	}
	if len(kept)%4 == 1 {
		kept = kept[:len(kept)-1]
	}
	want, err := base64.RawStdEncoding.DecodeString(string(kept))
	got, ok := encryption.PHPBase64Decode(s, false)
	if err != nil || !ok || !bytes.Equal(got, want) {
		t.Fatalf("lenient base64 of %q: %x %v, model %x %v", s, got, ok, want, err)
	}
	if strictGot, ok := encryption.PHPBase64Decode(s, true); ok && !bytes.Equal(strictGot, got) {
		t.Fatalf("strict base64 of %q: %x, lenient %x", s, strictGot, got)
	}
}

func FuzzDecryptCommand(f *testing.F) {
	encs, gs := fuzzEncrypters(f)
	seedPayloads(f, gs)
	f.Fuzz(func(t *testing.T, payload string) {
		for _, fe := range encs {
			cmd, err := fe.e.DecryptCommand(payload)
			checkDecryptErr(t, err, fe.key, true)
			if err == nil {
				again, err := fe.e.EncryptCommand(cmd)
				if err != nil {
					t.Fatal(err)
				}
				if back, err := fe.e.DecryptCommand(again); err != nil || back != cmd {
					t.Fatalf("re-encrypted command does not round-trip: %v", err)
				}
			}
		}
		_ = encryption.IsEncryptedCommand(payload)
	})
}

// FuzzDecodeEnvelope holds the json_decode model to encoding/json: PHP's parser is
// stricter (UTF-8, surrogate escapes, depth), never looser, and decodes the same strings.
func FuzzDecodeEnvelope(f *testing.F) {
	for _, g := range loadGolden(f) {
		f.Add(unb64(f, g.Payload))
	}
	for _, s := range []string{`{"iv":"a","iv":"\u0062"}`, `{"iv":"\ud83d\ude00","tag":0.0}`, `{"iv":"\ud800"}`, "{\"iv\":\"\xff\"}",
		`[[[[]]]]`, `{"value":-1e400,"mac":[],"tag":{}}`, `{"iv":TRUE}`, ` null `, `{"iv":"a",}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fields, err := encryption.DecodeEnvelope(data)
		valid := json.Valid(data)
		if err == nil && !valid {
			t.Fatalf("accepted invalid JSON %q", data)
		}
		if err != nil {
			if valid && utf8.Valid(data) && !bytes.Contains(bytes.ToLower(data), []byte(`\ud`)) && jsonDepth(data) <= 511 {
				t.Fatalf("refused %q: %v", data, err)
			}
			return
		}
		var top map[string]json.RawMessage
		if json.Unmarshal(data, &top) != nil {
			return // not an object: no member is set
		}
		for name, fd := range fields {
			var s string
			isString := json.Unmarshal(top[name], &s) == nil && len(top[name]) > 0 && top[name][0] == '"'
			if fd.String != isString || isString && fd.Value != s {
				t.Fatalf("%q: member %s = %+v, encoding/json: %q (string %v)", data, name, fd, s, isString)
			}
		}
	})
}

// jsonDepth is the deepest nesting of arrays and objects of a valid document.
func jsonDepth(data []byte) int {
	dec := json.NewDecoder(bytes.NewReader(data))
	depth, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if err == io.EOF || err != nil {
			return deepest
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
			deepest = max(deepest, depth)
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
}
