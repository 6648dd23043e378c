package encryption

import (
	"fmt"
	"strings"
)

// DefaultCipher is config/app.php's 'cipher' in every Laravel skeleton from 5.x to 13.x.
const DefaultCipher = "AES-256-CBC"

// cipherSpec is one entry of Encrypter::$supportedCiphers.
type cipherSpec struct {
	name    string // the lowercase name Laravel passes to openssl
	keySize int
	ivSize  int // openssl_cipher_iv_length()
	aead    bool
}

var ciphers = []cipherSpec{
	{"aes-128-cbc", 16, 16, false},
	{"aes-256-cbc", 32, 16, false},
	{"aes-128-gcm", 16, 12, true},
	{"aes-256-gcm", 32, 12, true},
}

// lookupCipher finds app.cipher the way Encrypter::supported() does: strtolower, which
// since PHP 8.2 maps only ASCII letters (strings.ToLower would also fold, say, the
// Kelvin sign into "k").
func lookupCipher(name string) (cipherSpec, bool) {
	lower := []byte(name)
	for i, c := range lower {
		if c >= 'A' && c <= 'Z' {
			lower[i] = c + 'a' - 'A'
		}
	}
	for _, c := range ciphers {
		if c.name == string(lower) {
			return c, true
		}
	}
	return cipherSpec{}, false
}

// ErrMissingAppKey is ParseKey's error for an empty APP_KEY, with the message of
// Laravel's MissingAppKeyException.
var ErrMissingAppKey error = laravelError("encryption: " + MsgMissingAppKey)

// laravelError is an error whose text ends in Laravel's message, full stop included.
type laravelError string

func (e laravelError) Error() string { return string(e) }

// ParseKey turns an APP_KEY value (config app.key) into the raw key, as
// EncryptionServiceProvider::parseKey() does: the rest of a value starting with
// "base64:" is base64-decoded, anything else is used byte for byte. The decoding is
// PHP's lenient base64_decode, which skips characters outside the alphabet, so a key
// PHP reads is read the same here; the key's length is checked by New against the
// cipher. "" and "0" (PHP's empty()) give ErrMissingAppKey.
func ParseKey(appKey string) ([]byte, error) {
	if appKey == "" || appKey == "0" {
		return nil, ErrMissingAppKey
	}
	if rest, ok := strings.CutPrefix(appKey, "base64:"); ok {
		key, _ := phpBase64Decode(rest, false)
		return key, nil
	}
	return []byte(appKey), nil
}

// ParsePreviousKeys turns an APP_PREVIOUS_KEYS value into keys, as Laravel 11+'s
// config/app.php and EncryptionServiceProvider do: the list is split on commas, empty
// entries and "0" are dropped (array_filter), and each entry goes through ParseKey.
// Spaces are not trimmed: Laravel keeps them and then refuses the key's length.
func ParsePreviousKeys(list string) ([][]byte, error) {
	var keys [][]byte
	for i, s := range strings.Split(list, ",") {
		if s == "" || s == "0" {
			continue
		}
		k, err := ParseKey(s)
		if err != nil {
			return nil, fmt.Errorf("encryption: APP_PREVIOUS_KEYS entry %d: %w", i+1, err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}
