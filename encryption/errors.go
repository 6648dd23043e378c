package encryption

import "errors"

// Laravel's DecryptException messages (Illuminate\Encryption\Encrypter, 8.x–13.x). A
// PHP worker stores them in failed_jobs.exception; Go reports the same words.
const (
	MsgPayloadInvalid  = "The payload is invalid."
	MsgMACInvalid      = "The MAC is invalid."
	MsgCouldNotDecrypt = "Could not decrypt the data."
	// MsgTagNotAEAD is thrown (8.83.5+, 9.5+) when a CBC payload carries a non-empty tag.
	MsgTagNotAEAD = "Unable to use tag because the cipher algorithm does not support AEAD."
)

// MsgUnsupported is the RuntimeException of Encrypter's constructor and previousKeys()
// for an unknown cipher or a key of the wrong length.
const MsgUnsupported = "Unsupported cipher or incorrect key length. Supported ciphers are: aes-128-cbc, aes-256-cbc, aes-128-gcm, aes-256-gcm."

// MsgMissingAppKey is MissingAppKeyException's message for an empty APP_KEY.
const MsgMissingAppKey = "No application encryption key has been specified."

// DecryptError is a payload the Encrypter refuses, where Laravel throws
// Illuminate\Contracts\Encryption\DecryptException. Message is Laravel's message, one
// of the Msg constants; Reason says what exactly was wrong. Neither ever holds key
// material or decrypted bytes, so the error is safe to log.
type DecryptError struct {
	Message string
	Reason  string
}

func (e *DecryptError) Error() string {
	if e.Reason == "" {
		return "encryption: " + e.Message
	}
	return "encryption: " + e.Message + " (" + e.Reason + ")"
}

// Is makes errors.Is(err, ErrMACInvalid) and the like match on Laravel's message.
func (e *DecryptError) Is(target error) bool {
	t, ok := target.(*DecryptError)
	return ok && t.Reason == "" && t.Message == e.Message
}

// Targets for errors.Is, one per DecryptException message.
var (
	ErrPayloadInvalid  = &DecryptError{Message: MsgPayloadInvalid}
	ErrMACInvalid      = &DecryptError{Message: MsgMACInvalid}
	ErrCouldNotDecrypt = &DecryptError{Message: MsgCouldNotDecrypt}
	ErrTagNotAEAD      = &DecryptError{Message: MsgTagNotAEAD}
)

// ErrNotString is wrapped by Decrypt and DecryptCommand when the payload decrypts but
// its plaintext is not a serialized PHP string: a PHP worker's unserialize() would
// fail ("unserialize(): Error at offset …") or yield something other than the job's
// serialized command.
var ErrNotString = errors.New("encryption: the decrypted value is not a serialized PHP string")

func decryptErr(msg, reason string) error { return &DecryptError{Message: msg, Reason: reason} }
