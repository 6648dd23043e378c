package encryption

import (
	"fmt"
	"strconv"
	"strings"
)

// A ShouldBeEncrypted job's data.command is Queue::createObjectPayload()'s
// `$encrypter->encrypt(serialize(clone $job))`: encrypt() serializes its argument once
// more, so the plaintext is the serialized command wrapped as a PHP string,
// s:<bytes>:"O:…";. CallQueuedHandler::getCommand() (and queue:retry) undo both:
// decrypt() unserializes to the inner string, which is unserialized into the job.

// Encrypt is encrypt($value) for a PHP string value: the plaintext is serialize($value),
// s:<len(value)>:"<value>";. For other PHP values serialize them yourself (phpser) and
// use EncryptString, which is what encrypt() does after serializing.
func (e *Encrypter) Encrypt(value []byte) (string, error) {
	return e.EncryptString(appendSerializedString(nil, value))
}

// Decrypt is decrypt($payload) for a payload whose plaintext is a serialized PHP
// string: it returns the string's bytes. A plaintext that is not s:N:"…"; gives an
// error wrapping ErrNotString.
func (e *Encrypter) Decrypt(payload string) ([]byte, error) {
	pt, err := e.s.decrypt(payload)
	if err != nil {
		return nil, err
	}
	return unserializeString(pt)
}

// EncryptCommand returns what Laravel puts in data.command for a ShouldBeEncrypted
// job whose serialize(clone $job) is serialized (an O:… string, e.g. from
// phpser.Marshal): encrypt(serialize($job)).
func (e *Encrypter) EncryptCommand(serialized string) (string, error) {
	return e.Encrypt([]byte(serialized))
}

// DecryptCommand reads an encrypted data.command as CallQueuedHandler::getCommand()
// does and returns the serialized job (O:…) for phpser to decode. Errors are a
// *DecryptError (the DecryptException a PHP worker would fail the job with) or wrap
// ErrNotString.
func (e *Encrypter) DecryptCommand(payload string) (string, error) {
	b, err := e.Decrypt(payload)
	return string(b), err
}

// IsEncryptedCommand is the test CallQueuedHandler::getCommand() and queue:retry make
// in every release from 8.x to 13.x: a data.command that does not start with "O:" is
// decrypted. So a plain command of another shape (C:, E:, a string) is taken for an
// encrypted one too, and fails as "The payload is invalid." in a PHP worker.
func IsEncryptedCommand(cmd string) bool { return !strings.HasPrefix(cmd, "O:") }

// AppearsEncrypted is Encrypter::appearsEncrypted() (Laravel 12+): value is strict
// base64 of a JSON object whose iv, value and mac are set (not null, of any type).
// It says nothing about whether the payload decrypts.
func AppearsEncrypted(value string) bool {
	raw, ok := phpBase64Decode(value, true)
	if !ok {
		return false
	}
	env, isObject, err := parseEnvelope(raw)
	return err == nil && isObject && env.iv.kind != kindAbsent && env.value.kind != kindAbsent && env.mac.kind != kindAbsent
}

// appendSerializedString appends PHP's serialize() of a string.
func appendSerializedString(dst, s []byte) []byte {
	dst = append(dst, "s:"...)
	dst = strconv.AppendInt(dst, int64(len(s)), 10)
	dst = append(dst, `:"`...)
	dst = append(dst, s...)
	return append(dst, `";`...)
}

// unserializeString reads s:N:"…"; as PHP's unserialize() does: N is unsigned decimal
// (leading zeros allowed) counting bytes, and the string must be followed by `";`.
// Bytes after the closing `;` are refused: PHP 8.3+ warns about them ("Extra data
// starting at offset"), which a Laravel app turns into an ErrorException.
func unserializeString(b []byte) ([]byte, error) {
	fail := func(off int) ([]byte, error) {
		return nil, fmt.Errorf("%w (error at offset %d of %d bytes)", ErrNotString, off, len(b))
	}
	if len(b) < 2 || b[0] != 's' || b[1] != ':' {
		return fail(0)
	}
	i := 2
	n := 0
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		n = n*10 + int(b[i]-'0')
		if n > len(b) { // longer than the input: stop before n can overflow
			return fail(2)
		}
		i++
	}
	if i == 2 || len(b)-i < 2 || b[i] != ':' || b[i+1] != '"' {
		return fail(0)
	}
	i += 2
	if n > len(b)-i {
		return fail(2)
	}
	s := b[i : i+n]
	i += n
	switch {
	case i >= len(b) || b[i] != '"':
		return fail(i)
	case i+1 >= len(b) || b[i+1] != ';':
		return fail(i + 1)
	case i+2 != len(b):
		return fail(i + 2)
	}
	return s, nil
}
