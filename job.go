package laraq

import (
	"encoding/json"
	"errors"

	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// Command is a Go type that stands for a PHP job class: its PHPClass method names the
// class (`App\Jobs\SendInvoice`) and its fields carry the class's properties with php
// tags (see package phpser). The same type is dispatched (Dispatcher.Dispatch) and
// handled (Handle). PHPClass is called on the zero value, so it must return a constant.
type Command interface {
	PHPClass() string
}

// Job is one reserved job as its handler sees it: the command decoded into T, and the job's
// metadata (JobInfo: what Laravel's RedisJob offers a PHP job through $this->job).
type Job[T any] struct {
	Command T
	*JobInfo
}

// JobInfo is a reserved job's metadata and exact bytes, what Laravel's RedisJob offers.
// One JobInfo exists per attempt. It is used by one goroutine at a time.
type JobInfo struct {
	// ID is the Redis driver's job id (payload "id", $job->getJobId()): 32 random
	// characters, or the uuid under Horizon.
	ID string
	// UUID is the payload's uuid ($job->uuid()), "" for payloads from before Laravel 7.
	UUID string
	// Attempt is the current attempt, 1-based, like $job->attempts(): the popped payload's
	// attempts + 1. The pop has already counted it.
	Attempt int
	// Queue is the bare queue name ("default", not "queues:default").
	Queue string
	// Connection is the queue connection's name ("redis"), as failed_jobs records it.
	Connection string
	// Name is Laravel's resolveName(): displayName, else the job string.
	Name string
	// Class is the name the job was routed by (see ClassOf), as written in the payload.
	Class string
	// Payload is the parsed envelope of Raw.
	Payload *payload.Envelope
	// Raw is the payload exactly as popped from the ready list (attempts not yet
	// incremented): what a failed_jobs row stores.
	Raw []byte
	// Reserved is the copy the pop script wrote to the reserved set (re-encoded by Redis'
	// cjson, attempts incremented): the member the worker removes or releases.
	Reserved []byte
	// BatchID is the id of the job's Bus::batch (its job_batches row): data.batchId
	// (12.51+), else the command's batchId property (Batchable); "" when the job is not
	// batched or its command was not decoded yet.
	BatchID string

	ext *jobExt // what a worker adds (encrypter, unique lock, batch); nil in tests

	cmd    *phpser.Value
	cmdErr error
	cmdSet bool

	jobs    *Jobs   // the registry whose handler runs the job (Go types of classes)
	release Release // the connection's release (its Queueable properties)
}

// IsObjectJob reports whether the job carries a serialized command (dispatch(new X))
// rather than being a "Class@method" string job.
func (j *JobInfo) IsObjectJob() bool { return j.Payload != nil && j.Payload.IsObjectJob() }

// Value returns the decoded data.command of an object job, cached. A string job has no
// command: read its JSON data with Bind or Payload.Data. An encrypted command
// (ShouldBeEncrypted) is decrypted first with the connection's Encrypter; one that does
// not decrypt gives a *DecryptError.
func (j *JobInfo) Value() (*phpser.Value, error) {
	if j.cmdSet {
		return j.cmd, j.cmdErr
	}
	j.cmdSet = true
	switch {
	case j.Payload == nil:
		j.cmdErr = &DecodeError{Class: j.Class, Path: "payload", Err: errors.New("job has no parsed payload")}
	case !j.Payload.IsObjectJob():
		j.cmdErr = &DecodeError{Class: j.Class, Path: "data.command", Err: errors.New("a string job has no serialized command; bind its JSON data instead")}
	default:
		text, err := j.commandText()
		if err != nil {
			j.cmdErr = err
			break
		}
		v, err := phpser.DecodeString(text)
		if err != nil {
			j.cmdErr = &DecodeError{Class: j.Class, Path: "data.command", Err: err}
		} else {
			j.cmd = v
			j.noteBatch(v)
		}
	}
	return j.cmd, j.cmdErr
}

// Bind decodes the job into v, a non-nil pointer: an object job's serialized command by
// phpser's rules (class defaults filled in for properties the stream leaves out), a
// string job's JSON data with encoding/json. Errors are *DecodeError, which fails the job
// at once: decoding the same bytes again cannot succeed.
func (j *JobInfo) Bind(v any) error {
	if j.Payload != nil && !j.Payload.IsObjectJob() {
		data := j.Payload.Data
		if len(data) == 0 {
			data = []byte(`""`) // PHP's default data for Queue::push('Class@method')
		}
		if err := json.Unmarshal(data, v); err != nil {
			return &DecodeError{Class: j.Class, Path: "data", Err: err}
		}
		return nil
	}
	cmd, err := j.Value()
	if err != nil {
		return err
	}
	if err := cmd.Decode(v); err != nil {
		return &DecodeError{Class: j.Class, Path: "data.command", Err: err}
	}
	return nil
}

// DecodeError is a job whose payload or command does not decode into what its handler
// wants. The worker fails such a job at once, keeping it in the failed-job store.
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

// ClassOf returns the name a job is routed by: data.commandName for an object job
// (dispatch(new X)), else the job string as given ("App\Jobs\Report@build"; PHP's worker
// calls method "fire" when there is no "@"). An object job whose commandName is missing
// falls back to the class in the serialized command's `O:n:"Class"` head.
func ClassOf(env *payload.Envelope) string {
	if env.IsObjectJob() {
		if env.CommandName != "" {
			return env.CommandName
		}
		if c := serializedClass(env.Command); c != "" {
			return c
		}
	}
	return env.Job
}

// serializedClass reads the class of an `O:<len>:"<class>":` head without decoding the
// rest, as `queue:failed` does to show a class.
func serializedClass(s string) string {
	if len(s) < 4 || s[0] != 'O' || s[1] != ':' {
		return ""
	}
	i, n := 2, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<20 {
		n = n*10 + int(s[i]-'0')
		i++
	}
	if i+2+n >= len(s) || s[i] != ':' || s[i+1] != '"' || s[i+2+n] != '"' {
		return ""
	}
	return s[i+2 : i+2+n]
}
