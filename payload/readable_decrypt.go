package payload

import (
	"fmt"
	"strings"
)

// Decrypter decrypts the data.command of a ShouldBeEncrypted job, as
// CallQueuedHandler::getCommand() does: *encryption.Encrypter is one (DecryptCommand),
// returning the serialized command (O:…).
type Decrypter interface {
	DecryptCommand(payload string) (string, error)
}

// ReadableOption adjusts Readable.
type ReadableOption func(*readableOptions)

type readableOptions struct {
	decrypter Decrypter
}

// WithDecrypter makes Readable decrypt an encrypted data.command with d (the
// application's Encrypter, from its APP_KEY) and show it readably. A nil d changes
// nothing.
func WithDecrypter(d Decrypter) ReadableOption {
	return func(o *readableOptions) { o.decrypter = d }
}

// isEncryptedCommand is the test Laravel's worker makes: a command that does not start
// with "O:" is decrypted.
func isEncryptedCommand(s string) bool { return !strings.HasPrefix(s, "O:") }

// readableCommand decodes a serialized command, first decrypting it when it is
// encrypted and a decrypter is set, and returns its readable JSON. A command that is
// encrypted gives errEncrypted without a decrypter.
func (o readableOptions) readableCommand(s, where string) ([]byte, error) {
	if o.decrypter != nil && isEncryptedCommand(s) && encrypted(s) {
		plain, err := o.decrypter.DecryptCommand(s)
		if err != nil {
			if where == "" {
				return nil, fmt.Errorf("decrypting the value: %w", err)
			}
			return nil, fmt.Errorf("%s: decrypting: %w", where, err)
		}
		return readableCommand(plain, where)
	}
	return readableCommand(s, where)
}
