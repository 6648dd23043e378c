package encryption_test

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/laraq/laraq/encryption"
)

// A Go worker reading a ShouldBeEncrypted job: data.command does not start with "O:",
// so it is decrypted with the app's APP_KEY and gives the serialized job.
func Example() {
	key, err := encryption.ParseKey("base64:bGFyYXEtZXhhbXBsZS1rZXktb2YtMzItYnl0ZXMhISE=") // APP_KEY
	if err != nil {
		panic(err)
	}
	enc, err := encryption.New(key, "AES-256-CBC") // config('app.cipher')
	if err != nil {
		panic(err)
	}

	// What Laravel's dispatch() stores for `class SendReport implements ShouldQueue,
	// ShouldBeEncrypted`; here Go dispatches it.
	command, err := enc.EncryptCommand(`O:18:"App\Jobs\SendReport":1:{s:2:"to";s:9:"ops@x.dev";}`)
	if err != nil {
		panic(err)
	}

	if encryption.IsEncryptedCommand(command) {
		serialized, err := enc.DecryptCommand(command)
		if err != nil {
			panic(err) // a *DecryptError: fail the job as PHP would
		}
		fmt.Println(serialized)
	}
	fmt.Println(enc) // keys never print
	// Output:
	// O:18:"App\Jobs\SendReport":1:{s:2:"to";s:9:"ops@x.dev";}
	// encryption.Encrypter{cipher: aes-256-cbc, key: [redacted], previous keys: 0}
}

// With a fixed IV the envelope is exactly what Laravel's encryptString() writes: PHP's
// openssl_encrypt() gives the same value and tag for this key and IV.
func ExampleEncrypter_EncryptString() {
	enc, _ := encryption.NewFromConfig(encryption.Config{
		Key:    []byte("0123456789abcdef"),
		Cipher: "AES-128-GCM",
		Rand:   bytes.NewReader(make([]byte, 12)), // tests only: a zero IV
	})
	payload, _ := enc.EncryptString([]byte("hello"))
	fmt.Println(payload)
	// Output:
	// eyJpdiI6IkFBQUFBQUFBQUFBQUFBQUEiLCJ2YWx1ZSI6IktvZEdLWlk9IiwibWFjIjoiIiwidGFnIjoid2YrZ2xqU3RPT2FBcndTMklCNG5SZz09In0=
}

// Keys rotated with APP_PREVIOUS_KEYS (Laravel 11+) still decrypt older payloads.
func ExampleParsePreviousKeys() {
	old, _ := encryption.ParseKey("base64:b2xkLWtleS1vbGQta2V5LW9sZC1rZXktb2xkLWtleSE=")
	oldEnc, _ := encryption.New(old, "AES-256-CBC")
	payload, _ := oldEnc.EncryptString([]byte("queued before the rotation"))

	current, _ := encryption.ParseKey("base64:bmV3LWtleS1uZXcta2V5LW5ldy1rZXktbmV3LWtleSE=")
	previous, _ := encryption.ParsePreviousKeys("base64:b2xkLWtleS1vbGQta2V5LW9sZC1rZXktb2xkLWtleSE=")
	enc, _ := encryption.New(current, "AES-256-CBC", previous...)
	plain, err := enc.DecryptString(payload)
	fmt.Printf("%s %v\n", plain, err)

	noRotation, _ := encryption.New(current, "AES-256-CBC")
	_, err = noRotation.DecryptString(payload)
	fmt.Println(errors.Is(err, encryption.ErrMACInvalid), err)
	// Output:
	// queued before the rotation <nil>
	// true encryption: The MAC is invalid. (the MAC matches no key)
}
