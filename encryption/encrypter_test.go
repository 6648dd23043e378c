package encryption_test

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/laraq/laraq/encryption"
)

func TestRoundTrip(t *testing.T) {
	for _, cipher := range allCiphers {
		key := randomBytes(t, keySize(cipher))
		e, err := encryption.New(key, cipher)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range [][]byte{{}, []byte("x"), bytes.Repeat([]byte{0}, 16), randomBytes(t, 4099)} {
			p, err := e.EncryptString(v)
			if err != nil {
				t.Fatal(err)
			}
			if got, err := e.DecryptString(p); err != nil || !bytes.Equal(got, v) {
				t.Errorf("%s: DecryptString(EncryptString(%d bytes)) = %d bytes, %v", cipher, len(v), len(got), err)
			}
			if _, err := e.Decrypt(p); !errors.Is(err, encryption.ErrNotString) {
				t.Errorf("%s: Decrypt of an encryptString payload: %v, want ErrNotString", cipher, err)
			}
			p, _ = e.Encrypt(v)
			if got, err := e.Decrypt(p); err != nil || !bytes.Equal(got, v) {
				t.Errorf("%s: Decrypt(Encrypt(%d bytes)) = %d bytes, %v", cipher, len(v), len(got), err)
			}
			if got, err := e.DecryptString(p); err != nil || string(got) != fmt.Sprintf("s:%d:\"%s\";", len(v), v) {
				t.Errorf("%s: Encrypt's plaintext is %.40q, %v", cipher, got, err)
			}
		}
		cmd := `O:8:"App\Job":1:{s:1:"a";s:2:"é";}`
		p, _ := e.EncryptCommand(cmd)
		if !encryption.IsEncryptedCommand(p) || !encryption.AppearsEncrypted(p) {
			t.Errorf("%s: EncryptCommand's output %.30q is not seen as encrypted", cipher, p)
		}
		if got, err := e.DecryptCommand(p); err != nil || got != cmd {
			t.Errorf("%s: DecryptCommand = %q, %v", cipher, got, err)
		}
		if e.Cipher() != strings.ToLower(cipher) {
			t.Errorf("Cipher() = %q", e.Cipher())
		}
	}
}

// TestEnvelopeShape checks the JSON of an envelope: keys in Laravel's order, tag "" and
// a 64-digit hex MAC for CBC, mac "" and a 16-byte tag for GCM, and unescaped slashes.
func TestEnvelopeShape(t *testing.T) {
	for _, cipher := range allCiphers {
		iv := bytes.Repeat([]byte{0xff}, 16) // base64 "/////…": slashes must stay raw
		e, err := encryption.NewFromConfig(encryption.Config{Key: randomBytes(t, keySize(cipher)), Cipher: cipher, Rand: bytes.NewReader(iv)})
		if err != nil {
			t.Fatal(err)
		}
		p, err := e.EncryptString([]byte("hello"))
		if err != nil {
			t.Fatal(err)
		}
		raw := string(unb64(t, p))
		gcm := strings.Contains(strings.ToLower(cipher), "gcm")
		ivB64 := b64(iv[:map[bool]int{true: 12, false: 16}[gcm]])
		m := members(t, p)
		if !strings.HasPrefix(raw, `{"iv":"`+ivB64+`","value":"`) || strings.Contains(raw, `\/`) {
			t.Errorf("%s: envelope %s", cipher, raw)
		}
		mac, tag := m.get("mac"), m.get("tag")
		if gcm && (mac != "" || len(unb64(t, tag)) != 16) || !gcm && (tag != "" || len(mac) != 64 || mac != strings.ToLower(mac)) {
			t.Errorf("%s: mac %q tag %q", cipher, mac, tag)
		}
		if !strings.HasSuffix(raw, `","mac":"`+mac+`","tag":"`+tag+`"}`) {
			t.Errorf("%s: envelope %s", cipher, raw)
		}
	}
}

func TestParseKey(t *testing.T) {
	key := randomBytes(t, 32)
	enc := base64.StdEncoding.EncodeToString(key)
	for in, want := range map[string][]byte{
		"base64:" + enc: key,
		"base64:" + insertEvery(enc, "\n", 5) + "\"": key, // PHP's lenient base64_decode skips them
		"base64:" + strings.TrimRight(enc, "="):      key,
		"0123456789abcdef0123456789abcdef":           []byte("0123456789abcdef0123456789abcdef"),
		"Base64:abcd":                                []byte("Base64:abcd"),
		"base64:":                                    {},
	} {
		got, err := encryption.ParseKey(in)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("ParseKey(%q) = %x, %v; want %x", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0"} {
		if _, err := encryption.ParseKey(in); !errors.Is(err, encryption.ErrMissingAppKey) {
			t.Errorf("ParseKey(%q): %v", in, err)
		}
	}
}

func TestParsePreviousKeys(t *testing.T) {
	a, b := randomBytes(t, 32), randomBytes(t, 32)
	keys, err := encryption.ParsePreviousKeys("base64:" + b64(a) + ",,0,base64:" + b64(b) + ",")
	if err != nil || len(keys) != 2 || !bytes.Equal(keys[0], a) || !bytes.Equal(keys[1], b) {
		t.Fatalf("ParsePreviousKeys = %x, %v", keys, err)
	}
	if keys, err := encryption.ParsePreviousKeys(""); err != nil || len(keys) != 0 {
		t.Errorf("ParsePreviousKeys(\"\") = %x, %v", keys, err)
	}
	// Laravel does not trim: " base64:…" is a raw key of the wrong length, which New refuses.
	keys, _ = encryption.ParsePreviousKeys("base64:" + b64(a) + ", base64:" + b64(b))
	if _, err := encryption.New(a, "AES-256-CBC", keys...); err == nil || !strings.Contains(err.Error(), "previous key 2 is 52 bytes") {
		t.Errorf("New with a spaced previous key: %v", err)
	}
}

func TestNewRefuses(t *testing.T) {
	k16, k32 := randomBytes(t, 16), randomBytes(t, 32)
	for _, c := range []struct {
		name string
		cfg  encryption.Config
		want string
	}{
		{"unknown cipher", encryption.Config{Key: k32, Cipher: "aes-256-ctr"}, encryption.MsgUnsupported},
		{"no cipher", encryption.Config{Key: k32}, encryption.MsgUnsupported},
		{"padded cipher", encryption.Config{Key: k32, Cipher: " AES-256-CBC"}, encryption.MsgUnsupported},
		{"short key", encryption.Config{Key: k16, Cipher: "AES-256-CBC"}, "key is 16 bytes, aes-256-cbc needs 32"},
		{"long key", encryption.Config{Key: k32, Cipher: "aes-128-gcm"}, "key is 32 bytes, aes-128-gcm needs 16"},
		{"no key", encryption.Config{Cipher: "aes-128-gcm"}, "key is 0 bytes"},
		{"previous key length", encryption.Config{Key: k32, Cipher: "AES-256-CBC", PreviousKeys: [][]byte{k32, k16}}, "previous key 2 is 16 bytes"},
		{"previous keys before 11", encryption.Config{Key: k32, Cipher: "AES-256-CBC", PreviousKeys: [][]byte{k32}, Laravel: "10.50.3"}, "Laravel 11 or later"},
		{"GCM before 8.56", encryption.Config{Key: k32, Cipher: "AES-256-GCM", Laravel: "8.55"}, "needs Laravel 8.56"},
		{"Laravel 7", encryption.Config{Key: k32, Cipher: "AES-256-CBC", Laravel: "7.30.6"}, "Laravel 8 and later"},
		{"bad version", encryption.Config{Key: k32, Cipher: "AES-256-CBC", Laravel: "eleven"}, "not a number"},
		{"long version", encryption.Config{Key: k32, Cipher: "AES-256-CBC", Laravel: "11.1.1.1"}, "MAJOR[.MINOR[.PATCH]]"},
	} {
		_, err := encryption.NewFromConfig(c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	for _, v := range []string{"", "8", "8.x", "v8.83.26", "9.43", "10", "11.0.0", "12.x", "13.6", "v13.26.1", "14"} {
		if _, err := encryption.NewFromConfig(encryption.Config{Key: k32, Cipher: "aes-256-gcm", Laravel: v}); err != nil {
			t.Errorf("Laravel %q: %v", v, err)
		}
	}
}

// TestKeysNeverShow prints and logs an Encrypter every way a program might and looks
// for the key in any encoding.
func TestKeysNeverShow(t *testing.T) {
	key, prev := randomBytes(t, 32), randomBytes(t, 32)
	e, err := encryption.New(key, "AES-256-CBC", prev)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q", "%x", "%X", "%d", "%T %p"} {
		fmt.Fprintf(&out, verb+"\n", e)
	}
	for _, verb := range []string{"%v", "%+v", "%#v", "%x", "%d"} {
		fmt.Fprintf(&out, verb+"\n", *e)
		fmt.Fprintf(&out, verb+"\n", struct{ E encryption.Encrypter }{*e})
		fmt.Fprintf(&out, verb+"\n", []*encryption.Encrypter{e})
	}
	slog.New(slog.NewJSONHandler(&out, nil)).Info("boot", "encrypter", e)
	slog.New(slog.NewTextHandler(&out, nil)).Info("boot", "encrypter", e, "value", *e)
	payload, _ := e.EncryptString([]byte("x"))
	for _, bad := range []string{payload[:10], "", payload + "x"} {
		if _, err := e.DecryptString(bad); err != nil {
			out.WriteString(err.Error() + "\n")
		}
	}
	s := out.String()
	for _, k := range [][]byte{key, prev} {
		for _, enc := range []string{string(k), hex.EncodeToString(k), strings.ToUpper(hex.EncodeToString(k)), b64(k), fmt.Sprint(k), fmt.Sprintf("%d", k[:4])[1:], fmt.Sprintf("%x", k[:6])} {
			if strings.Contains(s, enc) {
				t.Fatalf("key material %q shows in:\n%s", enc, s)
			}
		}
	}
	if !strings.Contains(s, "aes-256-cbc") || !strings.Contains(s, "[redacted]") {
		t.Errorf("the description lost its cipher:\n%s", s)
	}
}

func TestDecryptError(t *testing.T) {
	e, _ := encryption.New(randomBytes(t, 16), "aes-128-cbc")
	other, _ := encryption.New(randomBytes(t, 16), "aes-128-cbc")
	p, _ := other.EncryptString([]byte("x"))
	_, err := e.DecryptString(p)
	var de *encryption.DecryptError
	if !errors.As(err, &de) || de.Message != encryption.MsgMACInvalid || de.Reason == "" {
		t.Fatalf("wrong key: %#v", err)
	}
	if !errors.Is(err, encryption.ErrMACInvalid) || errors.Is(err, encryption.ErrPayloadInvalid) {
		t.Errorf("errors.Is on %v", err)
	}
	if got := err.Error(); got != "encryption: The MAC is invalid. (the MAC matches no key)" {
		t.Errorf("Error() = %q", got)
	}
}

func TestRandFailure(t *testing.T) {
	e, _ := encryption.NewFromConfig(encryption.Config{Key: randomBytes(t, 32), Cipher: "aes-256-gcm", Rand: iotest.ErrReader(io.ErrClosedPipe)})
	if _, err := e.EncryptString([]byte("x")); !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("EncryptString with a failing Rand: %v", err)
	}
	e, _ = encryption.NewFromConfig(encryption.Config{Key: randomBytes(t, 32), Cipher: "aes-256-cbc", Rand: strings.NewReader("short")})
	if _, err := e.EncryptCommand("O:1:\"A\":0:{}"); err == nil {
		t.Error("EncryptCommand with 5 bytes of randomness succeeded")
	}
}

// TestUnserializeString pins how the plaintext of encrypt() is read: PHP's s:N:"…";.
func TestUnserializeString(t *testing.T) {
	e, _ := encryption.New(randomBytes(t, 32), "aes-256-cbc")
	for plain, want := range map[string]string{
		`s:3:"abc";`:          "abc",
		`s:003:"abc";`:        "abc",
		`s:0:"";`:             "",
		"s:3:\"a\"\x00\";":    "a\"\x00",
		`s:3:"abc";x`:         "!offset 10",
		`s:3:"abc"`:           "!offset 9",
		`s:3:"abc":`:          "!offset 9",
		`s:4:"abc";`:          "!offset 9",
		`s:2:"abc";`:          "!offset 7",
		`s:99:"abc";`:         "!offset 2",
		`s:-3:"abc";`:         "!offset 0",
		`s:+3:"abc";`:         "!offset 0",
		`s::"";`:              "!offset 0",
		`S:3:"abc";`:          "!offset 0",
		`i:5;`:                "!offset 0",
		``:                    "!offset 0",
		`s:99999999999999999`: "!offset 2",
	} {
		p, _ := e.EncryptString([]byte(plain))
		got, err := e.Decrypt(p)
		switch {
		case strings.HasPrefix(want, "!"):
			if !errors.Is(err, encryption.ErrNotString) || !strings.Contains(err.Error(), want[1:]+" of ") {
				t.Errorf("Decrypt of %q: %q, %v; want ErrNotString at %s", plain, got, err, want[1:])
			}
		case err != nil || string(got) != want:
			t.Errorf("Decrypt of %q = %q, %v; want %q", plain, got, err, want)
		}
	}
}

func TestIsEncryptedCommand(t *testing.T) {
	for cmd, want := range map[string]bool{
		`O:8:"App\Job":0:{}`: false, `O:`: false, `eyJpdiI6`: true, `C:1:"A":0:{}`: true, `o:1:"a":0:{}`: true, ``: true, ` O:`: true,
	} {
		if got := encryption.IsEncryptedCommand(cmd); got != want {
			t.Errorf("IsEncryptedCommand(%q) = %v", cmd, got)
		}
	}
}
