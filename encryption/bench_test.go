package encryption_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/laraq/laraq/encryption"
)

// benchCommand is a serialized job of about 2 KB, the size of a typical mailable or
// notification command.
func benchCommand() string {
	body := strings.Repeat("Lorem ipsum dolor sit amet, ", 70)
	return fmt.Sprintf(`O:17:"App\Jobs\SendMail":2:{s:2:"to";s:11:"a@example.c";s:4:"body";s:%d:"%s";}`, len(body), body)
}

// BenchmarkDecryptCommand is the worker's cost per encrypted job: base64, JSON, MAC
// (CBC) or tag (GCM), AES, and the unserialize of the outer string.
func BenchmarkDecryptCommand(b *testing.B) {
	cmd := benchCommand()
	for _, cipher := range []string{"AES-256-CBC", "AES-128-CBC", "AES-256-GCM", "AES-128-GCM"} {
		b.Run(cipher, func(b *testing.B) {
			e, err := encryption.New(randomBytes(b, keySize(cipher)), cipher)
			if err != nil {
				b.Fatal(err)
			}
			payload, err := e.EncryptCommand(cmd)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(payload)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.DecryptCommand(payload); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecryptCommandPreviousKey decrypts a payload of the second of three keys
// (Laravel 11+ APP_PREVIOUS_KEYS), which costs a MAC per key tried.
func BenchmarkDecryptCommandPreviousKey(b *testing.B) {
	cmd := benchCommand()
	old := randomBytes(b, 32)
	writer, _ := encryption.New(old, "AES-256-CBC")
	payload, _ := writer.EncryptCommand(cmd)
	e, err := encryption.New(randomBytes(b, 32), "AES-256-CBC", old, randomBytes(b, 32))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.DecryptCommand(payload); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncryptCommand(b *testing.B) {
	cmd := benchCommand()
	for _, cipher := range []string{"AES-256-CBC", "AES-256-GCM"} {
		b.Run(cipher, func(b *testing.B) {
			e, _ := encryption.New(randomBytes(b, 32), cipher)
			b.SetBytes(int64(len(cmd)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := e.EncryptCommand(cmd); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
