package laraq

import (
	"errors"
	"fmt"
	"strings"

	"github.com/laraq/laraq/encryption"
	"github.com/laraq/laraq/phpser"
)

// A ShouldBeEncrypted job's data.command is encrypt(serialize(clone $job)) under the
// application key, and CallQueuedHandler::getCommand() decrypts every command that does
// not start with "O:" (package encryption has the envelope and its checks). A Go worker
// does the same with Connection.Encrypter before decoding, for typed and untyped
// handlers alike; a Go dispatcher encrypts the command of a job that says so, byte for
// byte as Queue::createObjectPayload() does.

// ShouldBeEncrypted is implemented by job types whose PHP class implements
// Illuminate\Contracts\Queue\ShouldBeEncrypted: Dispatch encrypts their command with
// Connection.Encrypter, as Laravel does. Workers need no marker: they decrypt whatever
// command is encrypted.
//
//	func (ChargeCard) ShouldBeEncrypted() {}
type ShouldBeEncrypted interface {
	ShouldBeEncrypted()
}

// Encrypted is a DispatchOption that encrypts the job's command as if its class
// implemented ShouldBeEncrypted, for jobs given as a *phpser.Value (laraq dispatch
// --encrypt). A job with a public shouldBeEncrypted property set to true is encrypted
// without it, as Laravel's jobShouldBeEncrypted() says.
func Encrypted() DispatchOption {
	return func(o *options) error { o.encrypt = true; return nil }
}

// PHP class names of the exceptions a PHP worker fails an undecryptable command with.
const (
	decryptExceptionClass = `Illuminate\Contracts\Encryption\DecryptException`
	runtimeExceptionClass = `RuntimeException`
	// msgNoEncrypter is CallQueuedHandler::getCommand()'s message when no Encrypter is
	// bound to decrypt a command that does not start with "O:".
	msgNoEncrypter = "Unable to extract job payload."
)

// DecryptError is an encrypted command (ShouldBeEncrypted) the worker could not
// decrypt: the connection has no Encrypter (PHP's RuntimeException "Unable to extract
// job payload."), or the key does not open it (Laravel's DecryptException, such as "The
// MAC is invalid."). As in a PHP worker it is an ordinary exception of the attempt, so
// Laravel's rules retry the job until its tries are spent and then fail it; the
// failed_jobs row keeps the payload as stored. The message never holds key material.
// Err is not unwrapped, so that the failed row shows one exception, as PHP's does.
type DecryptError struct {
	Class string // the job's class
	Err   error  // the *encryption.DecryptError; nil when no Encrypter is configured
}

// Error is the exception message a PHP worker records.
func (e *DecryptError) Error() string {
	var de *encryption.DecryptError
	switch {
	case e.Err == nil:
		return msgNoEncrypter
	case errors.As(e.Err, &de):
		return de.Message
	}
	return e.Err.Error()
}

// PHPClass names the exception in failed-job records as a PHP worker does.
func (e *DecryptError) PHPClass() string {
	if e.Err == nil {
		return runtimeExceptionClass
	}
	return decryptExceptionClass
}

// Detail says why decryption failed, for logs (never key material).
func (e *DecryptError) Detail() string {
	if e.Err == nil {
		return "the connection has no Encrypter (APP_KEY) to decrypt the command of " + e.Class
	}
	return fmt.Sprintf("decrypting the command of %s: %v", e.Class, e.Err)
}

// commandText is data.command ready for phpser: decrypted when it is encrypted.
func (j *JobInfo) commandText() (string, error) {
	cmd := j.Payload.Command
	if !encryption.IsEncryptedCommand(cmd) {
		return cmd, nil
	}
	var enc *encryption.Encrypter
	if j.ext != nil {
		enc = j.ext.encrypter
	}
	if enc == nil {
		if !looksEncrypted(cmd) {
			// Not the Encrypter's envelope either (a C: or E: value, say): decode it as
			// it is, as laraq always has.
			return cmd, nil
		}
		return "", &DecryptError{Class: j.Class}
	}
	plain, err := enc.DecryptCommand(cmd)
	switch {
	case errors.Is(err, encryption.ErrNotString):
		// It decrypts, but to something that is not a serialized job: decrypting it
		// again cannot change that.
		return "", &DecodeError{Class: j.Class, Path: "data.command", Err: err}
	case err != nil:
		return "", &DecryptError{Class: j.Class, Err: err}
	}
	return plain, nil
}

// looksEncrypted reports whether a command is the Encrypter's base64 JSON envelope
// (`{"iv":…` encodes to "eyJ…") rather than serialize() output.
func looksEncrypted(s string) bool { return strings.HasPrefix(s, "eyJ") }

// Decrypter returns what decrypts this job's command (the connection's Encrypter), or
// nil; payload.WithDecrypter takes it, as `laraq work --forward` does.
func (j *JobInfo) Decrypter() *encryption.Encrypter {
	if j.ext == nil {
		return nil
	}
	return j.ext.encrypter
}

// shouldEncrypt reports whether a dispatched job's command is encrypted: its Go type
// says ShouldBeEncrypted or the Encrypted option was given (o.encrypt), or its public
// shouldBeEncrypted property is truthy (Queue::jobShouldBeEncrypted()).
func shouldEncrypt(cmd *phpser.Value, o *options) bool {
	if o.encrypt {
		return true
	}
	v, ok := publicValue(cmd, "shouldBeEncrypted")
	return ok && v.Truthy()
}

// sealCommand returns data.command for the serialized command: encrypted with the
// connection's Encrypter when the job should be encrypted. A job that should be
// encrypted is never written in the clear: without an Encrypter it is an error.
func (p *Dispatcher) sealCommand(cmd *phpser.Value, serialized []byte, o *options) (string, error) {
	if !shouldEncrypt(cmd, o) {
		return string(serialized), nil
	}
	if rel := p.release(); !rel.AtLeast(8, 19, 0) {
		// Queue::jobShouldBeEncrypted and CallQueuedHandler's decryption are 8.19's:
		// before, a shouldBeEncrypted property means nothing, and an encrypted command
		// is one the release's worker cannot unserialize.
		if o.encrypt {
			return "", fmt.Errorf("%s should be encrypted (ShouldBeEncrypted), but Laravel %s cannot run an encrypted job (8.19+)", cmd.Class(), rel)
		}
		return string(serialized), nil
	}
	if p.conn.Encrypter == nil {
		return "", fmt.Errorf("%s should be encrypted (ShouldBeEncrypted), but the connection has no Encrypter: set Connection.Encrypter (laravel.Connect reads APP_KEY)", cmd.Class())
	}
	return p.conn.Encrypter.EncryptCommand(string(serialized))
}

// forJob is the options of one job: o, with encrypt set when the job's Go type says
// ShouldBeEncrypted.
func (o *options) forJob(job any) *options {
	if _, ok := job.(ShouldBeEncrypted); ok && !o.encrypt {
		c := *o
		c.encrypt = true
		return &c
	}
	return o
}
