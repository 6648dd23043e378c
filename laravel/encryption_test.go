package laravel

import (
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/encryption"
)

func b64key(fill byte, n int) string {
	return "base64:" + base64.StdEncoding.EncodeToString([]byte(strings.Repeat(string(fill), n)))
}

// TestEncryptionFromTheApplication: APP_KEY, app.cipher and (11+) APP_PREVIOUS_KEYS
// make the Connection's Encrypter, and the key never shows in the configuration's
// text.
func TestEncryptionFromTheApplication(t *testing.T) {
	cur, old := b64key('c', 32), b64key('o', 32)
	c := mustLoad(t, App{LookupEnv: env("APP_KEY", cur, "APP_PREVIOUS_KEYS", old), Release: laraq.Release{Major: 11, Minor: 56}})
	enc := c.QueueConnection().Encrypter
	if enc == nil || c.Encryption.Keys != 2 || c.Encryption.Cipher != encryption.DefaultCipher {
		t.Fatalf("encryption %+v, encrypter %v: want AES-256-CBC with 2 keys", c.Encryption, enc)
	}
	// A command encrypted under the previous key still decrypts; a new one uses APP_KEY.
	oldKey, _ := encryption.ParseKey(old)
	prev, err := encryption.New(oldKey, encryption.DefaultCipher)
	if err != nil {
		t.Fatal(err)
	}
	sealed, err := prev.EncryptCommand(`O:8:"App\Job":0:{}`)
	if err != nil {
		t.Fatal(err)
	}
	if plain, err := enc.DecryptCommand(sealed); err != nil || plain != `O:8:"App\Job":0:{}` {
		t.Errorf("decrypting a previous key's command: %q %v", plain, err)
	}
	mine, _ := enc.EncryptCommand(`O:8:"App\Job":0:{}`)
	if _, err := prev.DecryptCommand(mine); !errors.Is(err, encryption.ErrMACInvalid) {
		t.Errorf("a new command opened with the previous key: %v, want the MAC is invalid", err)
	}
	for _, s := range []string{c.String(), fmt.Sprint(c), fmt.Sprintf("%+v", c.Encryption), fmt.Sprintf("%#v", enc)} {
		if strings.Contains(s, strings.Repeat("c", 32)) || strings.Contains(s, cur[7:]) {
			t.Errorf("the key shows in %q", s)
		}
	}

	// Laravel 10 has no previous keys: they are ignored, with a warning.
	c = mustLoad(t, App{LookupEnv: env("APP_KEY", cur, "APP_PREVIOUS_KEYS", old), Release: laraq.Release{Major: 10, Minor: 50}})
	if c.Encryption.Keys != 1 || !strings.Contains(strings.Join(c.Warnings, "\n"), "APP_PREVIOUS_KEYS") {
		t.Errorf("Laravel 10: %+v, warnings %q", c.Encryption, c.Warnings)
	}

	// No APP_KEY: no encrypter, no warning.
	c = mustLoad(t, App{LookupEnv: env()})
	if c.QueueConnection().Encrypter != nil || len(c.Warnings) != 0 {
		t.Errorf("without APP_KEY: encrypter %v, warnings %q", c.QueueConnection().Encrypter, c.Warnings)
	}

	// A key of the wrong length for the cipher: a warning naming the problem, no key bytes.
	c = mustLoad(t, App{LookupEnv: env("APP_KEY", b64key('s', 16))})
	if c.QueueConnection().Encrypter != nil || !strings.Contains(strings.Join(c.Warnings, "\n"), "key is 16 bytes") {
		t.Errorf("short key: warnings %q", c.Warnings)
	}
}

// TestEncryptionCipherFromConfigApp: config/app.php's cipher, a literal or env(), is read
// under --laravel-root.
func TestEncryptionCipherFromConfigApp(t *testing.T) {
	for _, tc := range []struct{ config, envName, envValue, want string }{
		{`'cipher' => 'AES-128-CBC',`, "", "", "AES-128-CBC"},
		{`'cipher' => env('APP_CIPHER', 'AES-128-GCM'),`, "", "", "AES-128-GCM"},
		{`'cipher' => env('APP_CIPHER', 'AES-128-GCM'),`, "APP_CIPHER", "aes-128-cbc", "aes-128-cbc"},
	} {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "config"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "config", "app.php"), []byte("<?php return [\n    "+tc.config+"\n];\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		kv := []string{"APP_KEY", b64key('k', 16)}
		if tc.envName != "" {
			kv = append(kv, tc.envName, tc.envValue)
		}
		c := mustLoad(t, App{Root: root, LookupEnv: env(kv...), Release: laraq.Release{Major: 12, Minor: 67}})
		if c.Encryption.Cipher != tc.want || c.Encryption.Encrypter() == nil {
			t.Errorf("%s: cipher %q (encrypter %v), want %q; warnings %q", tc.config, c.Encryption.Cipher, c.Encryption.Encrypter(), tc.want, c.Warnings)
		}
	}
}
