package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// Job is one reserved job as a handler sees it: the parsed envelope, the exact bytes
// the worker keeps for acknowledging it, and the metadata PHP's Job object offers.
// The command is decoded lazily, on the first Command or Bind call. A Job is used by
// one goroutine at a time.
type Job struct {
	// ID is the Redis driver's job id (payload "id"; what $job->getJobId() returns): 32
	// random characters, or the uuid under Horizon.
	ID string
	// UUID is the payload's uuid ($job->uuid()), "" for payloads from before Laravel 7.
	UUID string
	// Attempt is the current attempt, 1-based: the popped payload's attempts + 1, like
	// $job->attempts(). The pop has already counted it.
	Attempt int
	// Queue is the bare queue name ("default", not "queues:default").
	Queue string
	// Connection is the queue connection name ("redis"), as failed_jobs records it.
	Connection string
	// Name is Laravel's resolveName(): displayName, else the job string.
	Name string
	// Class is the name the job was routed by (see ClassOf), as written in the payload.
	Class string
	// Envelope is the parsed payload (of Raw).
	Envelope *payload.Envelope
	// Raw is the payload exactly as popped from the ready list (attempts not yet
	// incremented): what a failed-job record stores.
	Raw []byte
	// Reserved is the copy the pop script wrote to the reserved set (cjson-re-encoded,
	// attempts incremented): the member the worker removes or releases. Handlers do not
	// need it; it is here for logging and tests.
	Reserved []byte

	cmd    *phpser.Value
	cmdErr error
	cmdSet bool
}

// IsObjectJob reports whether the job carries a serialized command (dispatch(new X))
// rather than being a "Class@method" string job.
func (j *Job) IsObjectJob() bool { return j.Envelope != nil && j.Envelope.IsObjectJob() }

// Command returns the decoded data.command of an object job. The result is cached. A
// string job has no command: its data is JSON, read it with Bind or Envelope.Data.
func (j *Job) Command() (*phpser.Value, error) {
	if j.cmdSet {
		return j.cmd, j.cmdErr
	}
	j.cmdSet = true
	switch {
	case j.Envelope == nil:
		j.cmdErr = &DecodeError{Class: j.Class, Path: "payload", Err: errors.New("job has no parsed payload")}
	case !j.Envelope.IsObjectJob():
		j.cmdErr = &DecodeError{Class: j.Class, Path: "data.command", Err: errors.New("a string job has no serialized command; bind its JSON data instead")}
	default:
		v, err := phpser.DecodeString(j.Envelope.Command)
		if err != nil {
			if looksEncrypted(j.Envelope.Command) {
				err = fmt.Errorf("the command is encrypted (ShouldBeEncrypted), which this worker cannot read: %w", err)
			}
			j.cmdErr = &DecodeError{Class: j.Class, Path: "data.command", Err: err}
		} else {
			j.cmd = v
		}
	}
	return j.cmd, j.cmdErr
}

// Bind decodes the job into v, a non-nil pointer: for an object job the serialized
// command is unserialized into v by phpser's rules (Value.Decode); for a string job the
// JSON data is decoded with encoding/json. Errors are *DecodeError, which a worker
// treats as "fail now": decoding the same bytes again cannot succeed.
func (j *Job) Bind(v any) error {
	if j.Envelope != nil && !j.Envelope.IsObjectJob() {
		data := j.Envelope.Data
		if len(data) == 0 {
			data = []byte(`""`) // PHP's default data for Queue::push('Class@method')
		}
		if err := json.Unmarshal(data, v); err != nil {
			return &DecodeError{Class: j.Class, Path: "data", Err: err}
		}
		return nil
	}
	cmd, err := j.Command()
	if err != nil {
		return err
	}
	if err := cmd.Decode(v); err != nil {
		return &DecodeError{Class: j.Class, Path: "data.command", Err: err}
	}
	return nil
}

// looksEncrypted reports whether a command is the Encrypter's base64 JSON envelope
// (`{"iv":…` encodes to "eyJ…") rather than serialize() output.
func looksEncrypted(s string) bool { return strings.HasPrefix(s, "eyJ") }

// DecodeError is a job whose payload or command cannot be decoded into what the
// handler wants. Returned by Job.Command and Job.Bind (and so by handlers registered
// with Register); a worker fails such a job at once instead of retrying it, keeping it
// in the failed-job store.
type DecodeError struct {
	Class string // the job's class
	Path  string // "data.command", "data" or "payload"
	Err   error  // the decoder's error, with its byte offset or property path
}

// Error says what could not be decoded, where, and why, e.g.
// `decode data.command of App\Jobs\X: phpser: expected ';' at offset 57`.
func (e *DecodeError) Error() string {
	if e.Class == "" {
		return "decode " + e.Path + ": " + e.Err.Error()
	}
	return "decode " + e.Path + " of " + e.Class + ": " + e.Err.Error()
}

// Unwrap returns the decoder's error.
func (e *DecodeError) Unwrap() error { return e.Err }
