package encryption

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"strconv"
)

// Config describes an Encrypter the way a Laravel app's config/app.php does.
type Config struct {
	// Key is the application key (config app.key, APP_KEY, after ParseKey). Required;
	// 16 bytes for the AES-128 ciphers, 32 for AES-256.
	Key []byte
	// Cipher is config app.cipher, matched without regard to ASCII case:
	// AES-128-CBC, AES-256-CBC, AES-128-GCM or AES-256-GCM. Required; every Laravel
	// skeleton sets DefaultCipher.
	Cipher string
	// PreviousKeys are config app.previous_keys (APP_PREVIOUS_KEYS through
	// ParsePreviousKeys), tried in order after Key when decrypting; each must have
	// Key's length. Laravel 11+ only. Default none.
	PreviousKeys [][]byte
	// Laravel is the release of the app ("8.83", "11.56.0", "12", "v13.6"); it selects
	// that release's order of checks in decrypt(), which decides Laravel's message for
	// a payload with several faults and the fate of payloads forged by a key holder
	// (see rules.go). Default "": the newest release's rules.
	Laravel string
	// Rand supplies the IVs. Default crypto/rand.Reader; tests inject a fixed stream.
	Rand io.Reader
}

// Encrypter is Laravel's Illuminate\Encryption\Encrypter: it writes and reads the
// base64 JSON envelopes of encrypt()/encryptString() that Laravel apps use for
// ShouldBeEncrypted jobs, encrypted casts and cookies. It is safe for concurrent use.
//
// Printing an Encrypter with fmt (any verb) or logging it with slog shows its cipher
// and the number of keys, never the keys.
type Encrypter struct {
	// The keys sit behind a pointer so that printing the struct by reflection, as
	// fmt does for a value inside another struct, shows an address, not bytes.
	s *state
}

type state struct {
	cipher cipherSpec
	keys   []encKey // the current key first, then the previous keys in order
	rules  rules
	rand   io.Reader
}

type encKey struct {
	raw   []byte // the HMAC key of the CBC ciphers
	block cipher.Block
	gcm   cipher.AEAD // nil for CBC
}

// New returns an Encrypter for a key (ParseKey of APP_KEY), a cipher (app.cipher) and
// optionally the previous keys (Laravel 11+), following the newest Laravel release's
// decrypt rules and reading IVs from crypto/rand. NewFromConfig sets the rest.
func New(key []byte, cipher string, previousKeys ...[]byte) (*Encrypter, error) {
	return NewFromConfig(Config{Key: key, Cipher: cipher, PreviousKeys: previousKeys})
}

// NewFromConfig returns an Encrypter for cfg. An unknown cipher or a key of the wrong
// length is refused with Laravel's RuntimeException message plus the reason (lengths
// only, never key bytes).
func NewFromConfig(cfg Config) (*Encrypter, error) {
	spec, ok := lookupCipher(cfg.Cipher)
	if !ok {
		return nil, fmt.Errorf("encryption: %s (cipher %q)", MsgUnsupported, cfg.Cipher)
	}
	v, err := parseVersion(cfg.Laravel)
	if err != nil {
		return nil, err
	}
	if spec.aead && !v.atLeast(8, 56, 0) {
		// 8.54 added GCM with a MAC on top; 8.56 dropped it (3800323e1d).
		return nil, fmt.Errorf("encryption: cipher %s needs Laravel 8.56 or later", spec.name)
	}
	r := v.rules()
	if len(cfg.PreviousKeys) > 0 && !r.previousKeys {
		return nil, fmt.Errorf("encryption: previous keys need Laravel 11 or later (Laravel %s has no app.previous_keys)", cfg.Laravel)
	}
	s := &state{cipher: spec, rules: r, rand: cfg.Rand}
	if s.rand == nil {
		s.rand = rand.Reader
	}
	for i, raw := range append([][]byte{cfg.Key}, cfg.PreviousKeys...) {
		which := "key"
		if i > 0 {
			which = "previous key " + strconv.Itoa(i)
		}
		if len(raw) != spec.keySize {
			return nil, fmt.Errorf("encryption: %s (%s is %d bytes, %s needs %d)", MsgUnsupported, which, len(raw), spec.name, spec.keySize)
		}
		k, err := newKey(spec, raw)
		if err != nil {
			return nil, fmt.Errorf("encryption: %s: %w", which, err)
		}
		s.keys = append(s.keys, k)
	}
	return &Encrypter{s: s}, nil
}

func newKey(spec cipherSpec, raw []byte) (encKey, error) {
	k := encKey{raw: append([]byte(nil), raw...)}
	var err error
	if k.block, err = aes.NewCipher(k.raw); err != nil {
		return encKey{}, err
	}
	if spec.aead {
		if k.gcm, err = cipher.NewGCM(k.block); err != nil {
			return encKey{}, err
		}
	}
	return k, nil
}

// Cipher returns the cipher's lowercase name, as Laravel hands it to openssl.
func (e *Encrypter) Cipher() string { return e.s.cipher.name }

// EncryptString is encryptString($value): it encrypts plaintext as is, with a fresh
// IV, and returns the base64 envelope {"iv","value","mac","tag"}.
func (e *Encrypter) EncryptString(plaintext []byte) (string, error) {
	s := e.s
	iv := make([]byte, s.cipher.ivSize)
	if _, err := io.ReadFull(s.rand, iv); err != nil {
		return "", fmt.Errorf("encryption: reading a random IV: %w", err)
	}
	k := &s.keys[0]
	var ct, tag []byte
	if s.cipher.aead {
		sealed := k.gcm.Seal(nil, iv, plaintext, nil)
		ct, tag = sealed[:len(sealed)-k.gcm.Overhead()], sealed[len(sealed)-k.gcm.Overhead():]
	} else {
		// PKCS#7, as openssl_encrypt pads: 1 to 16 bytes, each holding the count.
		pad := aes.BlockSize - len(plaintext)%aes.BlockSize
		ct = make([]byte, len(plaintext)+pad)
		copy(ct, plaintext)
		for i := len(plaintext); i < len(ct); i++ {
			ct[i] = byte(pad)
		}
		cipher.NewCBCEncrypter(k.block, iv).CryptBlocks(ct, ct)
	}
	b64 := base64.StdEncoding
	ivB64 := b64.EncodeToString(iv)
	value := b64.EncodeToString(ct)
	var mac string
	if !s.cipher.aead {
		mac = k.mac(ivB64, value)
	}
	// json_encode(['iv'=>…, 'value'=>…, 'mac'=>…, 'tag'=>…], JSON_UNESCAPED_SLASHES):
	// the members are base64 or hex, so no byte needs escaping and "/" stays as is.
	// For CBC tag is base64_encode('') = "".
	json := make([]byte, 0, 40+len(ivB64)+len(value)+len(mac)+b64.EncodedLen(len(tag)))
	json = append(json, `{"iv":"`...)
	json = append(json, ivB64...)
	json = append(json, `","value":"`...)
	json = append(json, value...)
	json = append(json, `","mac":"`...)
	json = append(json, mac...)
	json = append(json, `","tag":"`...)
	json = b64.AppendEncode(json, tag)
	json = append(json, `"}`...)
	return b64.EncodeToString(json), nil
}

// mac is Laravel's hash($iv, $value, $key): hex HMAC-SHA256 over the base64 IV and the
// base64 value as they appear in the envelope, concatenated.
func (k *encKey) mac(ivB64, value string) string {
	h := hmac.New(sha256.New, k.raw)
	io.WriteString(h, ivB64)
	io.WriteString(h, value)
	return hex.EncodeToString(h.Sum(nil))
}

// validMac is hash_equals($this->hash(...), $payload['mac']): a constant-time
// comparison of the lowercase hex strings (an uppercase MAC does not match).
func (k *encKey) validMac(ivB64, value, mac string) bool {
	return subtle.ConstantTimeCompare([]byte(k.mac(ivB64, value)), []byte(mac)) == 1
}

// DecryptString is decryptString($payload): it returns the plaintext of an envelope
// written by EncryptString or by PHP's encryptString()/encrypt(), or a *DecryptError
// with the message Laravel's DecryptException would carry.
func (e *Encrypter) DecryptString(payload string) ([]byte, error) {
	return e.s.decrypt(payload)
}

func (s *state) decrypt(payload string) ([]byte, error) {
	raw, _ := phpBase64Decode(payload, false)
	env, isObject, err := parseEnvelope(raw)
	if err != nil {
		return nil, decryptErr(MsgPayloadInvalid, "not JSON after base64 decoding: "+err.Error())
	}
	if !isObject {
		return nil, decryptErr(MsgPayloadInvalid, "the JSON is not an object")
	}
	iv, ivB64, reason := s.validPayload(&env)
	if reason != "" {
		return nil, decryptErr(MsgPayloadInvalid, reason)
	}

	if !s.cipher.aead && s.rules.macFirst {
		if err := s.anyValidMac(ivB64, &env); err != nil {
			return nil, err
		}
	}
	tag, err := s.tag(&env)
	if err != nil {
		return nil, err
	}
	if env.value.kind != kindString {
		// Only before 9.44, which let a number through to openssl_decrypt (or threw a
		// TypeError for an array); it never decrypts.
		if !s.cipher.aead {
			return nil, decryptErr(MsgMACInvalid, "value is not a string")
		}
		return nil, decryptErr(MsgCouldNotDecrypt, "value is not a string")
	}
	if s.cipher.aead {
		return s.openGCM(iv, tag, env.value.str)
	}
	return s.openCBC(iv, ivB64, &env)
}

// validPayload is Encrypter::validPayload(): iv, value and mac set (and, from 9.44,
// strings, with tag a string or null), and the IV of the cipher's length after strict
// base64 decoding. It returns the IV and the iv member, or the reason the payload is
// invalid. (decrypt() decodes the member again leniently, which gives the same bytes
// once the strict decoding succeeded.)
func (s *state) validPayload(env *envelope) (iv []byte, ivB64, reason string) {
	for _, f := range []struct {
		name string
		f    *field
	}{{"iv", &env.iv}, {"value", &env.value}, {"mac", &env.mac}} {
		switch {
		case f.f.kind == kindAbsent:
			return nil, "", f.name + " is missing or null"
		case f.f.kind != kindString && !s.rules.looseTypes:
			return nil, "", f.name + " is not a string"
		}
	}
	if env.tag.kind == kindOther && !s.rules.looseTypes {
		return nil, "", "tag is not a string"
	}
	switch {
	case env.iv.kind == kindString:
		ivB64 = env.iv.str
	case env.iv.digits != "":
		// Before 9.44 an integer went through base64_decode as its decimal digits.
		ivB64 = env.iv.digits
	default:
		return nil, "", "iv is not a string"
	}
	iv, ok := phpBase64Decode(ivB64, true)
	if !ok {
		return nil, "", "iv is not valid base64"
	}
	if len(iv) != s.cipher.ivSize {
		return nil, "", fmt.Sprintf("iv is %d bytes, %s needs %d", len(iv), s.cipher.name, s.cipher.ivSize)
	}
	return iv, ivB64, ""
}

// anyValidMac is the MAC check of getJsonPayload() before 11.4: the MAC must match
// one of the keys (before 11.0 there is only one).
func (s *state) anyValidMac(ivB64 string, env *envelope) error {
	if env.value.kind != kindString || env.mac.kind != kindString {
		// Before 9.44: a number as value is hashed as its digits and cannot match an
		// honest MAC; a non-string mac makes hash_equals() throw a TypeError.
		return decryptErr(MsgMACInvalid, "value or mac is not a string")
	}
	ok := false
	for i := range s.keys {
		ok = s.keys[i].validMac(ivB64, env.value.str, env.mac.str) || ok
	}
	if !ok {
		return decryptErr(MsgMACInvalid, "the MAC matches no key")
	}
	return nil
}

// tag is decrypt()'s `empty($payload['tag']) ? null : base64_decode($payload['tag'])`
// followed by ensureTagIsValid().
func (s *state) tag(env *envelope) ([]byte, error) {
	var tag []byte
	null := env.tag.isEmpty()
	switch {
	case null:
	case env.tag.kind == kindString:
		tag, _ = phpBase64Decode(env.tag.str, false)
	default:
		// Before 9.44 only: a number or true, whose string form never decodes to 16
		// bytes (an array threw a TypeError).
	}
	if s.cipher.aead {
		if len(tag) != 16 {
			return nil, decryptErr(MsgCouldNotDecrypt, fmt.Sprintf("tag is %d bytes, GCM needs 16", len(tag)))
		}
		return tag, nil
	}
	if !null {
		return nil, decryptErr(MsgTagNotAEAD, s.cipher.name+" payload with a non-empty tag")
	}
	return nil, nil
}

// openCBC checks the MAC and decrypts with the keys in Laravel's order.
func (s *state) openCBC(iv []byte, ivB64 string, env *envelope) ([]byte, error) {
	if env.mac.kind != kindString {
		return nil, decryptErr(MsgMACInvalid, "mac is not a string")
	}
	value, mac := env.value.str, env.mac.str
	if s.rules.macAllKeys {
		// 13.6+: every key's MAC is computed; the first match alone decrypts.
		var valid *encKey
		for i := range s.keys {
			if s.keys[i].validMac(ivB64, value, mac) && valid == nil {
				valid = &s.keys[i]
			}
		}
		if valid == nil {
			return nil, decryptErr(MsgMACInvalid, "the MAC matches no key")
		}
		if pt, ok := valid.decryptCBC(iv, value); ok {
			return pt, nil
		}
		return nil, decryptErr(MsgCouldNotDecrypt, "the ciphertext does not decrypt with the key its MAC matches")
	}
	// Up to 13.5: keys in order; once one key's MAC matched, it and every later key
	// are tried until one decrypts.
	found := false
	for i := range s.keys {
		if !found && !s.keys[i].validMac(ivB64, value, mac) {
			continue
		}
		found = true
		if pt, ok := s.keys[i].decryptCBC(iv, value); ok {
			return pt, nil
		}
	}
	if !found {
		return nil, decryptErr(MsgMACInvalid, "the MAC matches no key")
	}
	return nil, decryptErr(MsgCouldNotDecrypt, "the ciphertext does not decrypt")
}

// decryptCBC is openssl_decrypt($value, 'aes-…-cbc', $key, 0, $iv): value is decoded
// with PHP's lenient base64, must be whole blocks, and must end in valid PKCS#7.
func (k *encKey) decryptCBC(iv []byte, value string) ([]byte, bool) {
	ct, _ := phpBase64Decode(value, false)
	if len(ct) == 0 || len(ct)%aes.BlockSize != 0 {
		return nil, false
	}
	cipher.NewCBCDecrypter(k.block, iv).CryptBlocks(ct, ct)
	n := int(ct[len(ct)-1])
	if n == 0 || n > aes.BlockSize {
		return nil, false
	}
	for _, b := range ct[len(ct)-n:] {
		if int(b) != n {
			return nil, false
		}
	}
	return ct[:len(ct)-n], true
}

// openGCM tries the keys in order (11.0+; one key before) until the tag verifies.
func (s *state) openGCM(iv, tag []byte, value string) ([]byte, error) {
	ct, _ := phpBase64Decode(value, false)
	sealed := append(ct, tag...)
	for i := range s.keys {
		if pt, err := s.keys[i].gcm.Open(nil, iv, sealed, nil); err == nil {
			return pt, nil
		}
	}
	return nil, decryptErr(MsgCouldNotDecrypt, "the GCM tag does not verify with any key")
}

// String describes the Encrypter without its keys.
func (e *Encrypter) String() string {
	if e == nil || e.s == nil {
		return "encryption.Encrypter(nil)"
	}
	return fmt.Sprintf("encryption.Encrypter{cipher: %s, key: [redacted], previous keys: %d}", e.s.cipher.name, len(e.s.keys)-1)
}

// GoString is String, so %#v does not dump the keys either.
func (e *Encrypter) GoString() string { return e.String() }

// Format prints String for every verb, so that no verb (%x, %d, %+v …) reaches the keys.
func (e *Encrypter) Format(f fmt.State, _ rune) { io.WriteString(f, e.String()) }

// LogValue makes slog log the cipher and the number of keys, never the keys.
func (e *Encrypter) LogValue() slog.Value {
	if e == nil || e.s == nil {
		return slog.StringValue("<nil>")
	}
	return slog.GroupValue(
		slog.String("cipher", e.s.cipher.name),
		slog.String("key", "[redacted]"),
		slog.Int("previous_keys", len(e.s.keys)-1),
	)
}
