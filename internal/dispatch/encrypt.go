package dispatch

import (
	"fmt"

	"github.com/laraq/laraq/phpser"
)

// A ShouldBeEncrypted job's data.command is encrypt(serialize(clone $job)) under the
// application key, written byte for byte as Queue::createObjectPayload() does (package
// encryption has the envelope).

// shouldEncrypt reports whether a dispatched job's command is encrypted: its Go type
// says ShouldBeEncrypted or the Encrypted option was given (o.encrypt), or its public
// shouldBeEncrypted property is truthy (Queue::jobShouldBeEncrypted()).
func shouldEncrypt(cmd *phpser.Value, o *Options) bool {
	if o.Encrypt {
		return true
	}
	v, ok := cmd.Visible("shouldBeEncrypted")
	return ok && v.Truthy()
}

// sealCommand returns data.command for the serialized command: encrypted with the
// connection's Encrypter when the job should be encrypted. A job that should be
// encrypted is never written in the clear: without an Encrypter it is an error.
func (p *Dispatcher) sealCommand(cmd *phpser.Value, serialized []byte, o *Options) (string, error) {
	if !shouldEncrypt(cmd, o) {
		return string(serialized), nil
	}
	if rel := p.release(); !rel.AtLeast(8, 19, 0) {
		// Queue::jobShouldBeEncrypted and CallQueuedHandler's decryption are 8.19's:
		// before, a shouldBeEncrypted property means nothing, and an encrypted command
		// is one the release's worker cannot unserialize.
		if o.Encrypt {
			return "", fmt.Errorf("%s should be encrypted (ShouldBeEncrypted), but Laravel %s cannot run an encrypted job (8.19+)", cmd.Class(), rel)
		}
		return string(serialized), nil
	}
	if p.cfg.Encrypter == nil {
		return "", fmt.Errorf("%s should be encrypted (ShouldBeEncrypted), but the connection has no Encrypter: set Connection.Encrypter (laravel.Connect reads APP_KEY)", cmd.Class())
	}
	return p.cfg.Encrypter.EncryptCommand(string(serialized))
}
