package job

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/laraq/laraq/bus"
	"github.com/laraq/laraq/encryption"
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

	env  *Env  // what the worker running the job gives it; nil in tests (package laraqtest)
	jobs *Jobs // the registry whose handler runs the job (Go types of classes)

	// decidedBy and decision: the middleware that decided this attempt's outcome and
	// what it decided, which the worker's events report (see Decide).
	decidedBy string
	decision  Decision

	cmd    *phpser.Value
	cmdErr error
	cmdSet bool

	uniqueID    string // what the handler said uniqueId() returns (SetUniqueID)
	uniqueIDSet bool
}

// Env is what a worker gives every job it runs: the connection's Encrypter (to decrypt
// ShouldBeEncrypted commands), its batch repository ($this->batch()) and its release
// (the Bus\Queueable properties PHP's unserialize() fills in). A worker shares one Env
// between its jobs.
type Env struct {
	Encrypter *encryption.Encrypter
	Batches   bus.Repository
	Release   Release
}

// Attach gives a job the Env of the worker running it and the registry routing it.
func Attach(j *JobInfo, env *Env, jobs *Jobs) { j.env, j.jobs = env, jobs }

// Decide records that middleware by decided the attempt's outcome: d; "" for none.
func Decide(j *JobInfo, by string, d Decision) { j.decidedBy, j.decision = by, d }

// Decided is what Decide recorded for the attempt.
func Decided(j *JobInfo) (by string, d Decision) {
	if j == nil {
		return "", ""
	}
	return j.decidedBy, j.decision
}

// DisplayNameOf is what PHP's middleware name a job by from 12.41: the command's
// displayName() when its class has that method (has), else its class. A class has it
// when its Go type implements DisplayNamer; for a class without Go type, when the
// payload's displayName (what displayName() returned at dispatch) differs from the
// class — a displayName() returning the class name itself cannot be told apart, and
// names the job the same either way, except hashed from 12.54.
func DisplayNameOf(j *JobInfo) (name string, has bool) {
	if t := j.jobs.typeOf(j.Class); t != nil {
		if t.Implements(displayNamerType) || reflect.PointerTo(t).Implements(displayNamerType) {
			if j.Name != "" {
				return j.Name, true
			}
			return j.Class, true
		}
		return j.Class, false
	}
	if j.Name != "" && j.Name != j.Class {
		return j.Name, true
	}
	return j.Class, false
}

var displayNamerType = reflect.TypeFor[DisplayNamer]()

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

// Unserialized returns the command as PHP's unserialize() rebuilds it: Value with every
// property the payload leaves out set to its class default, where a Go type is known
// for the class (Handle, HandleClass or Declare). Laravel 9.4+ SerializesModels writes
// only the properties that differ from their declared defaults (an 11.x `new
// SendInvoice(7)` arrives as O:20:"App\Jobs\SendInvoice":1:{s:7:"orderId";i:7;}), so an
// untyped handler reading `tries` or `queue` from Value would find nothing where PHP
// has the default. The defaults are the type's php tags (`php:"tries,default=3"`) and,
// for a type embedding Queueable, the Bus\Queueable properties of the connection's
// release, each placed where PHP declares it. Without a known type it is Value.
func (j *JobInfo) Unserialized() (*phpser.Value, error) {
	v, err := j.Value()
	if err != nil {
		return nil, err
	}
	t := j.jobs.typeOf(j.Class)
	if t == nil {
		return v, nil
	}
	shape, err := ShapeOf(t, j.release())
	if err != nil {
		return nil, &DecodeError{Class: j.Class, Path: "data.command", Err: err}
	}
	obj := v.Deref()
	if obj.Kind() != phpser.KindObject {
		return v, nil
	}
	return FillDefaults(obj, shape.Ref, shape.Defaults), nil
}

// release is the connection's release, as far as the job knows it.
func (j *JobInfo) release() Release {
	if j.env == nil {
		return Release{}
	}
	return j.env.Release
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
	enc := j.Decrypter()
	if enc == nil {
		if !LooksEncrypted(cmd) {
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

// LooksEncrypted reports whether a command is the Encrypter's base64 JSON envelope
// (`{"iv":…` encodes to "eyJ…") rather than serialize() output.
func LooksEncrypted(s string) bool { return strings.HasPrefix(s, "eyJ") }

// Decrypter returns what decrypts this job's command (the connection's Encrypter), or
// nil; payload.WithDecrypter takes it, as `laraq work --forward` does.
func (j *JobInfo) Decrypter() *encryption.Encrypter {
	if j.env == nil {
		return nil
	}
	return j.env.Encrypter
}

// Batch reads the job's batch ($this->batch()): nil when the job is not batched or its
// batch is gone, an error when the connection has no batch repository.
func (j *JobInfo) Batch(ctx context.Context) (*bus.Batch, error) {
	id := BatchIDOf(j)
	if id == "" {
		return nil, nil
	}
	if j.env == nil || j.env.Batches == nil {
		return nil, errors.New("laraq: no batch repository (Connection.Batches) to read batch " + id)
	}
	b, err := j.env.Batches.Find(ctx, id)
	if errors.Is(err, bus.ErrNoBatch) {
		return nil, nil
	}
	return b, err
}

// BatchIDOf is j.BatchID, from the decoded command when the envelope did not carry it.
func BatchIDOf(j *JobInfo) string {
	if j.BatchID == "" && j.IsObjectJob() && j.mayHaveBatchID() {
		_, _ = j.Value() // sets BatchID from the batchId property
	}
	return j.BatchID
}

// batchIDProperty is how the Batchable trait's public batchId property starts in a
// serialized command.
const batchIDProperty = `s:7:"batchId";`

// mayHaveBatchID reports whether the command can hold a batchId: a plain command
// without the property's name is not decoded only to look for it (a handler that
// reads the job's raw JobInfo would otherwise pay a full decode per job).
func (j *JobInfo) mayHaveBatchID() bool {
	cmd := j.Payload.Command
	return j.cmdSet || LooksEncrypted(cmd) || encryption.IsEncryptedCommand(cmd) || strings.Contains(cmd, batchIDProperty)
}

// noteBatch takes the batch id from a decoded command's batchId property (the Batchable
// trait) when the envelope did not carry data.batchId.
func (j *JobInfo) noteBatch(cmd *phpser.Value) {
	if j.BatchID != "" || cmd == nil {
		return
	}
	if v, ok := cmd.Visible("batchId"); ok && v.Kind() == phpser.KindString {
		j.BatchID = v.Str()
	}
}

// MayHold reports whether serialize() text may hold a property whose start is marker
// (`s:7:"chained";a:`) with a value other than the one that starts with empty (`0:{}`):
// a cheap look that spares decoding the commands that cannot hold what a feature needs.
func MayHold(command, marker, empty string) bool {
	for rest := command; ; {
		_, after, found := strings.Cut(rest, marker)
		if !found {
			return false
		}
		if !strings.HasPrefix(after, empty) {
			return true
		}
		rest = after
	}
}
