package encryption_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/laraq/laraq/encryption"
)

// The interop tests run Laravel's own Encrypter, Queue::createPayload() and
// CallQueuedHandler::getCommand() (testdata/encryption/encrypter.php) on Debian's 8.83
// and on the 10.x–13.x peer trees, for every cipher, in both directions.

var allCiphers = []string{"AES-128-CBC", "AES-256-CBC", "aes-128-gcm", "Aes-256-Gcm"}

func keySize(cipher string) int {
	if strings.Contains(strings.ToLower(cipher), "128") {
		return 16
	}
	return 32
}

func randomBytes(t testing.TB, n int) []byte {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return b
}

// newFor returns a Go Encrypter with the peer's decrypt rules.
func newFor(t testing.TB, p *phpProc, cipher string, key []byte, previous ...[]byte) *encryption.Encrypter {
	t.Helper()
	e, err := encryption.NewFromConfig(encryption.Config{Key: key, Cipher: cipher, PreviousKeys: previous, Laravel: p.laravel})
	if err != nil {
		t.Fatalf("NewFromConfig(%s, Laravel %s): %v", cipher, p.laravel, err)
	}
	return e
}

// ivOf returns the IV bytes of a payload, to replay PHP's encryption in Go.
func ivOf(t testing.TB, payload string) []byte {
	t.Helper()
	var env struct{ IV string }
	if err := json.Unmarshal(unb64(t, payload), &env); err != nil {
		t.Fatalf("payload %q: %v", payload, err)
	}
	return unb64(t, env.IV)
}

// withIV is an Encrypter whose next IV is iv: Go's output must then equal PHP's byte
// for byte.
func withIV(t testing.TB, p *phpProc, cipher string, key, iv []byte) *encryption.Encrypter {
	t.Helper()
	e, err := encryption.NewFromConfig(encryption.Config{Key: key, Cipher: cipher, Laravel: p.laravel, Rand: bytes.NewReader(iv)})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestPHPRoundTrip(t *testing.T) {
	for _, pr := range peers {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			p := startPHP(t, pr)
			job := p.call(map[string]any{"op": "command", "cipher": "AES-256-CBC", "key": b64(randomBytes(t, 32)), "secret": b64([]byte("x")), "n": 1})
			vectors := map[string][]byte{
				"empty": {},
				"hello": []byte("hello"),
				"binary": func() []byte {
					b := make([]byte, 256)
					for i := range b {
						b[i] = byte(i)
					}
					return b
				}(),
				"15 bytes":    bytes.Repeat([]byte{'a'}, 15),
				"16 bytes":    bytes.Repeat([]byte{'b'}, 16),
				"17 bytes":    bytes.Repeat([]byte{'c'}, 17),
				"long":        randomBytes(t, 100_000),
				"unicode":     []byte("héllo wörld — 日本語 🎉 \u2028 \x00"),
				"job command": unb64(t, job.Serialized),
			}
			for _, cipher := range allCiphers {
				key := randomBytes(t, keySize(cipher))
				goEnc := newFor(t, p, cipher, key)
				for name, v := range vectors {
					// PHP encryptString → Go DecryptString, and Go with PHP's IV writes PHP's bytes.
					payload := p.encrypt(cipher, key, v, false)
					got, err := goEnc.DecryptString(payload)
					if err != nil || !bytes.Equal(got, v) {
						t.Errorf("%s %s: DecryptString(PHP encryptString) = %.40q, %v", cipher, name, got, err)
					}
					if again, err := withIV(t, p, cipher, key, ivOf(t, payload)).EncryptString(v); err != nil || again != payload {
						t.Errorf("%s %s: EncryptString with PHP's IV differs:\n go  %.120s\n php %.120s", cipher, name, again, payload)
					}
					// PHP encrypt (serialize) → Go Decrypt.
					payload = p.encrypt(cipher, key, v, true)
					if got, err := goEnc.Decrypt(payload); err != nil || !bytes.Equal(got, v) {
						t.Errorf("%s %s: Decrypt(PHP encrypt) = %.40q, %v", cipher, name, got, err)
					}
					if again, err := withIV(t, p, cipher, key, ivOf(t, payload)).Encrypt(v); err != nil || again != payload {
						t.Errorf("%s %s: Encrypt with PHP's IV differs:\n go  %.120s\n php %.120s", cipher, name, again, payload)
					}
					// Go → PHP, both ways of (un)serializing.
					mine, err := goEnc.EncryptString(v)
					if err != nil {
						t.Fatal(err)
					}
					if r := p.decrypt(cipher, key, nil, mine, false); !r.ok() || !bytes.Equal(unb64(t, r.Value), v) {
						t.Errorf("%s %s: PHP decryptString(Go EncryptString) = %+v", cipher, name, r)
					}
					if mine, err = goEnc.Encrypt(v); err != nil {
						t.Fatal(err)
					}
					if r := p.decrypt(cipher, key, nil, mine, true); !r.ok() || !bytes.Equal(unb64(t, r.Value), v) {
						t.Errorf("%s %s: PHP decrypt(Go Encrypt) = %+v", cipher, name, r)
					}
				}
			}
		})
	}
}

func TestPHPCommand(t *testing.T) {
	secrets := map[string][]byte{
		"plain":   []byte("s3cr3t"),
		"empty":   {},
		"binary":  {0, '"', ';', '}', 0xff, 0xfe, '\\', '\n'},
		"unicode": []byte("пароль 🔑"),
		"long":    bytes.Repeat([]byte("0123456789"), 500),
	}
	for _, pr := range peers {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			p := startPHP(t, pr)
			for _, cipher := range allCiphers {
				key := randomBytes(t, keySize(cipher))
				goEnc := newFor(t, p, cipher, key)
				for name, secret := range secrets {
					req := keyReq("command", cipher, key)
					req["secret"], req["n"] = b64(secret), len(secret)
					r := p.call(req)
					if !r.ok() {
						t.Fatalf("php command: %s: %s", r.Class, r.Message)
					}
					var envelope struct{ Data struct{ Command string } }
					if err := json.Unmarshal([]byte(r.Payload), &envelope); err != nil {
						t.Fatalf("queue payload %q: %v", r.Payload, err)
					}
					cmd, serialized := envelope.Data.Command, string(unb64(t, r.Serialized))
					if !encryption.IsEncryptedCommand(cmd) || !strings.HasPrefix(cmd, "eyJpdiI6") || !encryption.AppearsEncrypted(cmd) {
						t.Errorf("%s %s: data.command %.40q not seen as encrypted", cipher, name, cmd)
					}
					got, err := goEnc.DecryptCommand(cmd)
					if err != nil || got != serialized {
						t.Errorf("%s %s: DecryptCommand = %.80q, %v; want %.80q", cipher, name, got, err, serialized)
					}
					// The worker's side: Go dispatches, PHP's CallQueuedHandler reads it.
					mine, err := goEnc.EncryptCommand(serialized)
					if err != nil {
						t.Fatal(err)
					}
					req = keyReq("getCommand", cipher, key)
					req["command"] = mine
					g := p.call(req)
					if !g.ok() || !g.Decrypted || g.Class != "LaraqEncryptedJob" || g.Props["secret"] != b64(secret) || g.Props["n"] != float64(len(secret)) {
						t.Errorf("%s %s: getCommand(Go EncryptCommand) = %+v", cipher, name, g)
					}
					// And queue:retry reads it too (its retryUntil() gives 1700000000 + n).
					req["op"] = "retry"
					g = p.call(req)
					if !g.ok() || !g.Decrypted || g.RetryUntil == nil || *g.RetryUntil != 1700000000+int64(len(secret)) {
						t.Errorf("%s %s: queue:retry of Go EncryptCommand = %+v", cipher, name, g)
					}
				}
			}
		})
	}
}

// TestPHPIsEncryptedCommand holds IsEncryptedCommand to the choice getCommand() and
// queue:retry make: decrypt, or unserialize as is.
func TestPHPIsEncryptedCommand(t *testing.T) {
	cmds := []string{
		`O:8:"stdClass":0:{}`, `O:`, `O`, `o:8:"stdClass":0:{}`, ` O:8:"stdClass":0:{}`,
		`C:11:"ArrayObject":21:{x:i:0;a:0:{};m:a:0:{}}`, `E:7:"Foo:Bar";`, `s:1:"a";`, `a:0:{}`, ``,
		"\x00O:", "eyJpdiI6",
	}
	for _, pr := range peers {
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			p := startPHP(t, pr)
			key := randomBytes(t, 32)
			for _, cmd := range cmds {
				req := keyReq("getCommand", "AES-256-CBC", key)
				req["command"] = cmd
				r := p.call(req)
				if r.Decrypted != encryption.IsEncryptedCommand(cmd) {
					t.Errorf("%q: PHP decrypts: %v, IsEncryptedCommand: %v (%s: %s)", cmd, r.Decrypted, !r.Decrypted, r.Class, r.Message)
				}
				req["op"] = "retry"
				if r = p.call(req); r.Decrypted != encryption.IsEncryptedCommand(cmd) {
					t.Errorf("%q: queue:retry decrypts: %v, IsEncryptedCommand: %v (%s: %s)", cmd, r.Decrypted, !r.Decrypted, r.Class, r.Message)
				}
			}
		})
	}
}

// TestPHPAppearsEncrypted holds AppearsEncrypted to Encrypter::appearsEncrypted() (12.x+).
func TestPHPAppearsEncrypted(t *testing.T) {
	for _, pr := range peers {
		if pr.major < 12 {
			continue
		}
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			p := startPHP(t, pr)
			good := p.encrypt("AES-256-CBC", randomBytes(t, 32), []byte("x"), true)
			values := []string{
				good, insertEvery(good, "\n ", 9), insertEvery(good, "!", 9), good[:len(good)-1], good + "=", "", "eyJpdiI6",
				`O:8:"stdClass":0:{}`,
				b64([]byte(`{"iv":1,"value":[],"mac":false}`)), b64([]byte(`{"iv":"a","value":"b","mac":null}`)),
				b64([]byte(`{"iv":"a","value":"b"}`)), b64([]byte(`["a","b","c"]`)), b64([]byte(`{"iv":"a","value":"b","mac":"c",}`)),
				b64([]byte(`{"iv":"\ud800","value":"b","mac":"c"}`)),
			}
			for _, v := range values {
				r := p.call(map[string]any{"op": "appears", "value": v})
				if got := encryption.AppearsEncrypted(v); !r.ok() || got != r.Appears {
					t.Errorf("appearsEncrypted(%.40q): PHP %v (%s), Go %v", v, r.Appears, r.Message, got)
				}
			}
		})
	}
}

func TestPHPPreviousKeys(t *testing.T) {
	for _, pr := range peers {
		if pr.major < 11 {
			continue
		}
		t.Run(pr.name, func(t *testing.T) {
			t.Parallel()
			p := startPHP(t, pr)
			for _, cipher := range allCiphers {
				n := keySize(cipher)
				current, old, older, stranger := randomBytes(t, n), randomBytes(t, n), randomBytes(t, n), randomBytes(t, n)
				goEnc := newFor(t, p, cipher, current, older, old)
				previous := [][]byte{older, old}
				for name, key := range map[string][]byte{"current": current, "old": old, "older": older, "stranger": stranger} {
					payload := p.encrypt(cipher, key, []byte("rotated "+name), false)
					got, err := goEnc.DecryptString(payload)
					r := p.decrypt(cipher, current, previous, payload, false)
					compareDecrypt(t, cipher+" key "+name, r, got, err, false)
					if name != "stranger" && (err != nil || string(got) != "rotated "+name) {
						t.Errorf("%s: payload of the %s key: %q, %v", cipher, name, got, err)
					}
				}
				// Go always encrypts with the current key, which PHP tries first.
				mine, _ := goEnc.EncryptString([]byte("new"))
				if r := p.decrypt(cipher, current, previous, mine, false); !r.ok() || string(unb64(t, r.Value)) != "new" {
					t.Errorf("%s: PHP decrypt of Go's payload with previous keys: %+v", cipher, r)
				}
				// A previous key of the wrong length is refused up front, as previousKeys() does.
				r := p.decrypt(cipher, current, [][]byte{randomBytes(t, n+1)}, mine, false)
				_, err := encryption.NewFromConfig(encryption.Config{Key: current, Cipher: cipher, PreviousKeys: [][]byte{randomBytes(t, n+1)}, Laravel: p.laravel})
				if r.ok() || r.Message != encryption.MsgUnsupported || err == nil || !strings.Contains(err.Error(), encryption.MsgUnsupported) {
					t.Errorf("%s: previous key of %d bytes: PHP %s: %s; Go %v", cipher, n+1, r.Class, r.Message, err)
				}
			}
			t.Run("forged", func(t *testing.T) { testForgedKeyLoop(t, p) })
		})
	}
}

// testForgedKeyLoop checks the one payload on which the key loops of 11.4–13.5 and
// 13.6+ part ways: its MAC is made with the current key A, but its ciphertext only
// decrypts with the previous key B. Up to 13.5 the loop goes on to B after A fails to
// decrypt and returns B's plaintext; 13.6+ decrypts with A alone and fails.
func testForgedKeyLoop(t *testing.T, p *phpProc) {
	for _, cipher := range []string{"AES-128-CBC", "AES-256-CBC"} {
		n := keySize(cipher)
		a, b := randomBytes(t, n), randomBytes(t, n)
		payload := forgeCrossKey(t, a, b, []byte("forged"))
		goEnc := newFor(t, p, cipher, a, b)
		got, err := goEnc.DecryptString(payload)
		r := p.decrypt(cipher, a, [][]byte{b}, payload, false)
		compareDecrypt(t, cipher+" forged", r, got, err, false)
		if newest := laravelAtLeast(t, p.laravel, 13, 6); newest == r.ok() {
			t.Errorf("%s: Laravel %s on the cross-key payload: %+v", cipher, p.laravel, r)
		}
	}
}

// compareDecrypt asserts that Go's result (got, err) is PHP's r: the same plaintext, or
// a *DecryptError with the DecryptException's message. loose marks a payload that
// Laravel before 9.44 answers with a TypeError or ErrorException instead of a
// DecryptException: PHP must do so, and Go must refuse the payload.
func compareDecrypt(t *testing.T, name string, r phpResult, got []byte, err error, loose bool) {
	t.Helper()
	switch {
	case loose:
		if r.ok() || r.DecryptException || err == nil {
			t.Errorf("%s: want a TypeError/ErrorException from PHP and an error from Go; PHP %s: %s; Go %.40q, %v", name, r.Class, r.Message, got, err)
		}
	case r.ok():
		if err != nil || !bytes.Equal(got, unb64(t, r.Value)) {
			t.Errorf("%s: PHP decrypts to %.40q, Go: %.40q, %v", name, unb64(t, r.Value), got, err)
		}
	case err == nil:
		t.Errorf("%s: PHP throws %s: %s; Go decrypts to %.40q", name, r.Class, r.Message, got)
	case !r.DecryptException:
		t.Errorf("%s: PHP throws %s: %s (not a DecryptException); Go: %v", name, r.Class, r.Message, err)
	default:
		var de *encryption.DecryptError
		if !errors.As(err, &de) || de.Message != r.Message {
			t.Errorf("%s: PHP: %s; Go: %v", name, r.Message, err)
		}
	}
}

// laravelAtLeast compares a peer's version ("v13.26.1", "8.83") with major.minor.
func laravelAtLeast(t testing.TB, v string, major, minor int) bool {
	t.Helper()
	var got [2]int
	for i, s := range strings.SplitN(strings.TrimPrefix(v, "v"), ".", 3)[:2] {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("version %q: %v", v, err)
		}
		got[i] = n
	}
	return got[0] > major || got[0] == major && got[1] >= minor
}
