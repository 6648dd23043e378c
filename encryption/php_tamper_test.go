package encryption_test

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/laraq/laraq/encryption"
)

// member is one "key":value pair of a hand-made envelope; raw is JSON.
type member struct{ k, raw string }

type envJSON []member

func (e envJSON) encode() string {
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range e {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + m.k + `":` + m.raw)
	}
	b.WriteByte('}')
	return b64([]byte(b.String()))
}

// with returns a copy with k's raw value replaced (or appended), or removed when raw
// is "-".
func (e envJSON) with(k, raw string) envJSON {
	out := envJSON{}
	found := false
	for _, m := range e {
		if m.k == k {
			found = true
			if raw == "-" {
				continue
			}
			m.raw = raw
		}
		out = append(out, m)
	}
	if !found && raw != "-" {
		out = append(out, member{k, raw})
	}
	return out
}

func (e envJSON) get(k string) string {
	for _, m := range e {
		if m.k == k {
			var s string
			_ = json.Unmarshal([]byte(m.raw), &s)
			return s
		}
	}
	return ""
}

func str(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// members splits a payload into its envelope members, in order.
func members(t testing.TB, payload string) envJSON {
	t.Helper()
	var m map[string]string
	if err := json.Unmarshal(unb64(t, payload), &m); err != nil {
		t.Fatalf("payload: %v", err)
	}
	var e envJSON
	for _, k := range []string{"iv", "value", "mac", "tag"} {
		e = append(e, member{k, str(m[k])})
	}
	return e
}

// flip changes the character at i of s into another alphabet character.
func flip(s string, i int) string {
	c := byte('A')
	if s[i] == 'A' {
		c = 'B'
	}
	return s[:i] + string(c) + s[i+1:]
}

func insertEvery(s, what string, n int) string {
	var b strings.Builder
	for i := 0; i < len(s); i += n {
		b.WriteString(s[i:min(i+n, len(s))])
		if i+n < len(s) {
			b.WriteString(what)
		}
	}
	return b.String()
}

// forgeCBC writes a CBC envelope for raw ciphertext blocks of our choosing (no padding
// added) with a valid MAC, as only a key holder could.
func forgeCBC(t testing.TB, key, iv, plain []byte, tag string) string {
	t.Helper()
	block, err := aes.NewCipher(key)
	if err != nil {
		t.Fatal(err)
	}
	ct := make([]byte, len(plain)-len(plain)%aes.BlockSize)
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, plain[:len(ct)])
	ct = append(ct, plain[len(ct):]...) // a partial block stays as it is
	return macEnvelope(key, b64(iv), b64(ct), tag)
}

func macEnvelope(key []byte, ivB64, value, tag string) string {
	h := hmac.New(sha256.New, key)
	h.Write([]byte(ivB64 + value))
	return envJSON{{"iv", str(ivB64)}, {"value", str(value)}, {"mac", str(hex.EncodeToString(h.Sum(nil)))}, {"tag", str(tag)}}.encode()
}

func pkcs7(b []byte) []byte {
	n := aes.BlockSize - len(b)%aes.BlockSize
	return append(append([]byte{}, b...), []byte(strings.Repeat(string(rune(n)), n))...)
}

func paddingOK(key, iv, ct []byte) bool {
	block, _ := aes.NewCipher(key)
	pt := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(pt, ct)
	n := int(pt[len(pt)-1])
	if n == 0 || n > aes.BlockSize {
		return false
	}
	for _, c := range pt[len(pt)-n:] {
		if int(c) != n {
			return false
		}
	}
	return true
}

// forgeCrossKey encrypts plain with key b but MACs it with key a, choosing an IV with
// which the ciphertext does not decrypt (bad padding) under a.
func forgeCrossKey(t testing.TB, a, b, plain []byte) string {
	t.Helper()
	block, _ := aes.NewCipher(b)
	for {
		iv := randomBytes(t, aes.BlockSize)
		ct := pkcs7(plain)
		cipher.NewCBCEncrypter(block, iv).CryptBlocks(ct, ct)
		if !paddingOK(a, iv, ct) {
			return macEnvelope(a, b64(iv), b64(ct), "")
		}
	}
}

// tamper is one payload for the reject tests. loose marks a payload on which Laravel
// before 9.44 (the 8.83 peer) throws a TypeError, or a warning a Laravel app turns into
// an ErrorException, instead of a DecryptException.
type tamper struct {
	name    string
	payload string
	loose   bool
}

func tamperCases(t *testing.T, cipher string, key, other []byte, good, fromOther string) []tamper {
	aead := strings.HasSuffix(strings.ToLower(cipher), "gcm")
	m := members(t, good)
	iv, value, mac, tag := m.get("iv"), m.get("value"), m.get("mac"), m.get("tag")
	nest := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	cases := []tamper{
		{name: "valid", payload: good},
		{name: "wrong key", payload: fromOther},
		{name: "empty", payload: ""},
		{name: "not base64", payload: "not base64 at all!"},
		{name: "half", payload: good[:len(good)/2]},
		{name: "newlines every 16", payload: insertEvery(good, "\n", 16)},
		{name: "junk every 7", payload: insertEvery(good, "!*", 7)},
		{name: "= inside", payload: good[:8] + "==" + good[8:]},
		{name: "json null", payload: b64([]byte("null"))},
		{name: "json list", payload: b64([]byte(`["` + iv + `","` + value + `","` + mac + `"]`))},
		{name: "json string", payload: b64([]byte(`"x"`))},
		{name: "json number", payload: b64([]byte(`42`))},
		{name: "json empty object", payload: b64([]byte(`{}`))},
		{name: "json empty", payload: b64([]byte(" "))},

		{name: "iv missing", payload: m.with("iv", "-").encode()},
		{name: "iv null", payload: m.with("iv", "null").encode()},
		{name: "iv 123", payload: m.with("iv", "123").encode()},
		{name: "iv 16 digits", payload: m.with("iv", "1234567890123456").encode()},
		{name: "iv true", payload: m.with("iv", "true").encode()},
		{name: "iv array", payload: m.with("iv", "[1]").encode(), loose: true},
		{name: "iv object", payload: m.with("iv", "{}").encode(), loose: true},
		{name: "iv 15 bytes", payload: m.with("iv", str(b64(randomBytes(t, 15)))).encode()},
		{name: "iv 17 bytes", payload: m.with("iv", str(b64(randomBytes(t, 17)))).encode()},
		{name: "iv spaces", payload: m.with("iv", str(insertEvery(iv, " \t", 3))).encode()},
		{name: "iv vertical tab", payload: m.with("iv", str(iv[:4]+"\v"+iv[4:])).encode()},
		{name: "iv junk", payload: m.with("iv", str(iv[:4]+"!"+iv[4:])).encode()},
		{name: "iv unpadded", payload: m.with("iv", str(strings.TrimRight(iv, "="))).encode()},
		{name: "iv = inside", payload: m.with("iv", str(iv[:4]+"="+iv[4:])).encode()},
		{name: "iv flipped", payload: m.with("iv", str(flip(iv, 3))).encode()},
		{name: "iv escaped", payload: m.with("iv", `"\u00`+hex.EncodeToString([]byte(iv[:1]))+iv[1:]+`"`).encode()},

		{name: "value missing", payload: m.with("value", "-").encode()},
		{name: "value null", payload: m.with("value", "null").encode()},
		{name: "value 5", payload: m.with("value", "5").encode()},
		{name: "value true", payload: m.with("value", "true").encode()},
		{name: "value array", payload: m.with("value", "[1]").encode(), loose: true},
		{name: "value flipped", payload: m.with("value", str(flip(value, 2))).encode()},
		{name: "value junk", payload: m.with("value", str(value[:4]+"!"+value[4:])).encode()},
		{name: "value empty", payload: m.with("value", `""`).encode()},
		{name: "value escaped slash", payload: m.with("value", `"\/`+value+`"`).encode()},

		{name: "mac missing", payload: m.with("mac", "-").encode()},
		{name: "mac null", payload: m.with("mac", "null").encode()},
		{name: "mac 5", payload: m.with("mac", "5").encode(), loose: !aead},
		{name: "mac array", payload: m.with("mac", "[1]").encode(), loose: !aead},
		{name: "mac 0", payload: m.with("mac", `"0"`).encode()},
		{name: "mac empty", payload: m.with("mac", `""`).encode()},
		{name: "mac upper", payload: m.with("mac", str(strings.ToUpper(mac))).encode()},
		{name: "mac truncated", payload: m.with("mac", str(mac[:max(len(mac)-1, 0)])).encode()},

		{name: "tag missing", payload: m.with("tag", "-").encode()},
		{name: "tag null", payload: m.with("tag", "null").encode()},
		{name: "tag 0 string", payload: m.with("tag", `"0"`).encode()},
		{name: "tag empty", payload: m.with("tag", `""`).encode()},
		{name: "tag AAAA", payload: m.with("tag", `"AAAA"`).encode()},
		{name: "tag junk only", payload: m.with("tag", `"!!"`).encode()},
		{name: "tag 5", payload: m.with("tag", "5").encode()},
		{name: "tag 0", payload: m.with("tag", "0").encode()},
		{name: "tag 0.0", payload: m.with("tag", "0.0").encode()},
		{name: "tag 1e-400", payload: m.with("tag", "1e-400").encode()},
		{name: "tag true", payload: m.with("tag", "true").encode()},
		{name: "tag false", payload: m.with("tag", "false").encode()},
		{name: "tag empty array", payload: m.with("tag", "[]").encode()},
		{name: "tag empty object", payload: m.with("tag", "{}").encode()},
		{name: "tag array", payload: m.with("tag", "[1]").encode(), loose: true},
		{name: "bad mac and tag", payload: m.with("mac", str(strings.Repeat("0", 64))).with("tag", `"AAAA"`).encode()},
		{name: "bad iv and mac", payload: m.with("iv", `"AAAA"`).with("mac", `"x"`).encode()},

		{name: "duplicate iv, last good", payload: append(envJSON{{"iv", `"AAAA"`}}, m...).encode()},
		{name: "duplicate iv, last bad", payload: append(m, member{"iv", `"AAAA"`}).encode()},
		{name: "escaped key", payload: append(envJSON{{`\u0069v`, str(iv)}}, m.with("iv", "-")...).encode()},
		{name: "NUL key", payload: append(m, member{`\u0000`, "1"}).encode()},
		{name: "lone surrogate", payload: append(m, member{"x", `"\ud800"`}).encode()},
		{name: "lone low surrogate", payload: append(m, member{"x", `"\udc00\ud800"`}).encode()},
		{name: "surrogate pair", payload: append(m, member{"x", `"\ud83d\ude00"`}).encode()},
		{name: "invalid UTF-8", payload: append(m, member{"x", "\"\xff\""}).encode()},
		{name: "raw UTF-8", payload: append(m, member{"x", `"日本"`}).encode()},
		{name: "control char", payload: append(m, member{"x", "\"\x01\""}).encode()},
		{name: "nesting 510", payload: append(m, member{"x", nest(510)}).encode()},
		{name: "nesting 511", payload: append(m, member{"x", nest(511)}).encode()},
		{name: "TRUE", payload: append(m, member{"x", "TRUE"}).encode()},
		{name: "1e400", payload: append(m, member{"x", "-1e400"}).encode()},
		{name: "leading zero", payload: append(m, member{"x", "01"}).encode()},
		{name: "trailing comma", payload: b64([]byte(unb64String(t, m.encode())[:len(unb64String(t, m.encode()))-1] + ",}"))},
		{name: "trailing garbage", payload: b64([]byte(unb64String(t, good) + "x"))},
		{name: "trailing whitespace", payload: b64([]byte(unb64String(t, good) + " \n\t\r"))},
		{name: "BOM", payload: b64([]byte("\ufeff" + unb64String(t, good)))},
	}
	if !aead {
		block := randomBytes(t, aes.BlockSize)
		ivb := randomBytes(t, aes.BlockSize)
		badPad := append(randomBytes(t, aes.BlockSize-1), 0)
		cases = append(cases,
			tamper{name: "forged partial block", payload: forgeCBC(t, key, ivb, append(pkcs7([]byte("x")), 1, 2, 3), "")},
			tamper{name: "forged zero padding", payload: forgeCBC(t, key, ivb, badPad, "")},
			tamper{name: "forged no ciphertext", payload: forgeCBC(t, key, ivb, nil, "")},
			tamper{name: "forged tag 0", payload: forgeCBC(t, key, ivb, pkcs7(block), "0")},
			tamper{name: "forged other key", payload: forgeCBC(t, other, ivb, pkcs7(block), "")},
		)
	} else {
		cases = append(cases,
			tamper{name: "tag flipped", payload: m.with("tag", str(flip(tag, 5))).encode()},
			tamper{name: "tag junk", payload: m.with("tag", str(tag[:3]+"!\n"+tag[3:])).encode()},
			tamper{name: "tag 15 bytes", payload: m.with("tag", str(b64(unb64(t, tag)[:15]))).encode()},
			tamper{name: "tag 17 bytes", payload: m.with("tag", str(b64(append(unb64(t, tag), 0)))).encode()},
			tamper{name: "mac set", payload: m.with("mac", str(strings.Repeat("ab", 32))).encode()},
		)
	}
	for i := 1; i <= 5; i++ {
		cases = append(cases, tamper{name: "truncated by " + string(rune('0'+i)), payload: good[:len(good)-i]})
	}
	return cases
}

func unb64String(t testing.TB, s string) string { return string(unb64(t, s)) }

// TestPHPRejects holds Go to Laravel's verdict and message on broken and forged
// payloads, for every cipher and with each release's rules.
func TestPHPRejects(t *testing.T) {
	for _, pr := range peers {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			p := startPHP(t, pr)
			loose := !laravelAtLeast(t, p.laravel, 9, 44)
			for _, cipher := range allCiphers {
				key, other := randomBytes(t, keySize(cipher)), randomBytes(t, keySize(cipher))
				goEnc := newFor(t, p, cipher, key)
				for _, unserialize := range []bool{false, true} {
					good := p.encrypt(cipher, key, []byte("hello"), unserialize)
					fromOther := p.encrypt(cipher, other, []byte("hello"), unserialize)
					for _, c := range tamperCases(t, cipher, key, other, good, fromOther) {
						r := p.decrypt(cipher, key, nil, c.payload, unserialize)
						decrypt := goEnc.DecryptString
						if unserialize {
							decrypt = goEnc.Decrypt
						}
						got, err := decrypt(c.payload)
						name := cipher + " " + c.name
						if unserialize {
							name += " (unserialize)"
						}
						if !unserialize || r.DecryptException || r.ok() || err == nil || c.loose {
							compareDecrypt(t, name, r, got, err, c.loose && loose)
						} else if !strings.HasPrefix(r.Message, "unserialize(): ") || !errors.Is(err, encryption.ErrNotString) {
							// A payload that decrypts to something other than a serialized
							// string: PHP's unserialize() notice, Go's ErrNotString. A forged
							// block decrypts to random bytes, so PHP's notice varies ("Error
							// at offset", "Unexpected end of serialized data").
							t.Errorf("%s: PHP %s: %s; Go %v", name, r.Class, r.Message, err)
						}
					}
				}
			}
		})
	}
}
