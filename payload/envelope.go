package payload

import (
	"encoding/json"
	"strconv"
)

// CallQueuedHandler is the job string of every object job (jobs, listeners, mailables,
// notifications, broadcast events, closures) since Laravel 5.3.
const CallQueuedHandler = `Illuminate\Queue\CallQueuedHandler@call`

// Field is one top-level key of a payload with its raw JSON value, a sub-slice of
// Envelope.Raw.
type Field struct {
	Key   string
	Value json.RawMessage
}

// Envelope is a parsed Laravel job payload. Typed fields hold the PHP worker's reading
// of the payload; Raw holds the exact bytes, which must be used unchanged as the Redis
// member (ZREM/release) and as the failed_jobs payload.
type Envelope struct {
	// Raw is the payload exactly as given to Parse (not copied: do not modify it).
	Raw []byte

	UUID        string // "" when absent (payloads before Laravel 7) or null
	DisplayName string
	Job         string // "" when absent or null: see Runnable

	MaxTries      *int64
	MaxExceptions *int64
	Timeout       *int64
	FailOnTimeout bool // PHP truthiness of failOnTimeout

	// Backoff is the backoff key in the comma form PHP's Job::backoff() gives
	// ("10", "1,5,10"); nil when null or absent. Numbers are written in decimal.
	Backoff *string
	// RetryUntil is retryUntil ?? timeoutAt (timeoutAt is the pre-8.0 name).
	RetryUntil *int64
	// Delay is the top-level delay key, whatever it means: the per-job retry delay in
	// 5.8–7.x, the original dispatch delay in 12.11+. The 8.x–13.x worker reads both as
	// the backoff fallback (see BackoffSpec).
	Delay *int64

	CommandName string          // data.commandName ("" for string jobs)
	Command     string          // data.command, PHP-serialized or encrypted ("" for string jobs)
	Data        json.RawMessage // data as raw bytes (any JSON for string jobs); nil when absent
	BatchID     *string         // data.batchId (12.51+), nil when null or absent

	CreatedAt *int64 // createdAt (12.11+)

	// ID is the Redis driver's id: 32 random characters, the uuid under Horizon ≥5, an
	// integer under Horizon ≤4 (turned into its decimal string here).
	ID string
	// Attempts is attempts as stored: in the popped (original) string it is the number of
	// attempts already made, one less than the current attempt.
	Attempts int64
	PushedAt string   // Horizon's pushedAt as text ("1729411372.3932"), "" when absent
	Tags     []string // Horizon tags (array, or object after cjson turned [] into {})

	// Fields lists every top-level key in stored order with its raw value, including
	// unknown keys and repeated keys.
	Fields []Field

	// Backing store for the pointer fields, so they cost no allocation of their own.
	ints             [8]int64
	backoff, batchID string
}

// Name is the job's name as Laravel's resolveName() gives it: displayName when it is not
// empty in PHP's sense ("" and "0" are empty), else job.
func (e *Envelope) Name() string {
	if e.DisplayName != "" && e.DisplayName != "0" {
		return e.DisplayName
	}
	return e.Job
}

// IsObjectJob reports whether the payload carries a serialized command (data.command)
// for CallQueuedHandler, i.e. it was dispatched as an object rather than as a
// "Class@method" string job. A string job whose own data happens to contain a "command"
// string is not an object job: PHP runs its job class, not the command.
func (e *Envelope) IsObjectJob() bool {
	return e.Command != "" && e.Job == CallQueuedHandler
}

// BackoffSpec is backoff ?? delay as the comma string the worker splits (PHP's
// Job::backoff()), or "" when neither is set and the worker's --backoff applies.
// An explicitly empty backoff string is returned as "0": PHP reads it as zero seconds.
func (e *Envelope) BackoffSpec() string {
	switch {
	case e.Backoff != nil && *e.Backoff == "":
		return "0"
	case e.Backoff != nil:
		return *e.Backoff
	case e.Delay != nil:
		return strconv.FormatInt(*e.Delay, 10)
	}
	return ""
}

// Get returns the raw JSON value of a top-level key. For a repeated key it returns the
// last occurrence, which is the one PHP's json_decode and cjson keep.
func (e *Envelope) Get(key string) (json.RawMessage, bool) {
	for i := len(e.Fields) - 1; i >= 0; i-- {
		if e.Fields[i].Key == key {
			return e.Fields[i].Value, true
		}
	}
	return nil, false
}

// Runnable reports why a worker cannot run the job, or nil when it can. A payload
// without a job string (seen in the wild from Laravel 5.1) or an object job without
// data.command parses fine but has nothing to run.
func (e *Envelope) Runnable() error {
	if e.Job == "" {
		return &Error{Path: "job", Offset: -1, Msg: "payload has no job to run (job key missing, null or empty)"}
	}
	if e.Job == CallQueuedHandler && e.Command == "" {
		return &Error{Path: "data.command", Offset: -1, Msg: "object job without a serialized command"}
	}
	return nil
}
