// Package encryption is Laravel's Encrypter (Illuminate\Encryption\Encrypter), so that
// Go workers can run jobs that implement ShouldBeEncrypted and Go code can dispatch
// them, against any Laravel app from 8.x to 13.x.
//
// # The envelope
//
// encrypt() and encryptString() write base64 of the JSON object
// {"iv","value","mac","tag"} (in that order, slashes unescaped): iv is the base64 of a
// random IV (16 bytes for CBC, 12 for GCM), value the base64 of the AES ciphertext
// (PKCS#7-padded for CBC). For AES-128-CBC and AES-256-CBC, mac is the lowercase hex
// HMAC-SHA256, keyed with the application key, of the base64 iv followed by the base64
// value, and tag is "". For AES-128-GCM and AES-256-GCM, mac is "" and tag is the base64
// of the 16-byte GCM tag; there is no additional data. encrypt($value) encrypts
// serialize($value); encryptString encrypts the bytes as they are.
//
// decrypt() reads the envelope with PHP's lenient base64_decode and json_decode, checks
// that iv, value and mac are strings and the IV has the cipher's length (on a strict
// base64 decoding), refuses a non-empty tag for CBC and a tag of other than 16 bytes for
// GCM, compares the MAC in constant time, and decrypts. Its refusals are
// DecryptExceptions with one of four messages, which DecryptError carries (Msg*
// constants). Config.Laravel selects the release whose order of checks to follow; they
// differ only for payloads with several faults or forged by a key holder (rules.go).
//
// # Queued jobs
//
// For a ShouldBeEncrypted job, Laravel stores encrypt(serialize(clone $job)) in the
// payload's data.command: the plaintext is the serialized command wrapped once more as
// a PHP string (s:N:"O:…";). CallQueuedHandler and queue:retry decrypt data.command
// whenever it does not start with "O:" (IsEncryptedCommand). EncryptCommand and
// DecryptCommand do both steps: a worker calls DecryptCommand and hands the O:… string
// to phpser; a dispatcher marshals the job with phpser and stores EncryptCommand's
// result as data.command.
//
// # Keys
//
// ParseKey reads APP_KEY (config app.key) as EncryptionServiceProvider does: a
// "base64:" prefix means base64, anything else is the raw key. Laravel 11+ also tries
// APP_PREVIOUS_KEYS (config app.previous_keys; ParsePreviousKeys), in order after the
// current key; encryption always uses the current key. The cipher is config app.cipher,
// which config/app.php sets to "AES-256-CBC" (DefaultCipher) in every skeleton, with no
// environment variable.
//
// An Encrypter never shows its keys: fmt (every verb), slog and errors print the cipher
// and the number of keys only.
package encryption
