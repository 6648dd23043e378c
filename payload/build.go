package payload

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/uuid"
)

// Shape says which keys a payload carries beside Laravel 8.43's; each Laravel release
// writes one shape (laraq.Release knows which). The zero Shape is 8.43–12.10's: uuid,
// displayName, job, maxTries, maxExceptions, failOnTimeout, backoff, timeout,
// retryUntil, data{commandName, command}, id, attempts. Every 8.x–13.x worker reads every
// shape: missing keys default and unknown keys are ignored (5.8–7.x workers read
// delay and timeoutAt only, so they need their own shape for a job's backoff and expiry).
type Shape struct {
	// CreatedAt writes createdAt after data and the dispatch delay in seconds (null for an
	// immediate push) as the last key, after attempts (12.11+).
	CreatedAt bool
	// BatchID writes data.batchId, the batch id or null, as the third key of data for
	// object jobs (12.51+).
	BatchID bool
	// DeleteWhenMissingModels writes the deleteWhenMissingModels flag after retryUntil for
	// object jobs (13.0+); 13.x workers decide missing models from it.
	DeleteWhenMissingModels bool
	// NoFailOnTimeout leaves failOnTimeout out (8.0–8.42: 8.43 added it).
	NoFailOnTimeout bool
	// RetryDelay writes the keys of 5.8–7.x in place of 8.0's backoff and retryUntil: the
	// job's own retry delay (ObjectJob.RetryDelay) as "delay" right after maxTries (after
	// maxExceptions on 7.x), and its expiry (ObjectJob.RetryUntil) as "timeoutAt" after
	// timeout, for object jobs; string jobs carry "delay":null and no timeoutAt. There is
	// no failOnTimeout.
	RetryDelay bool
	// NoUUID leaves out uuid and maxExceptions (5.8–6.x: 7.0 added both).
	NoUUID bool
	// EscapeUnicode writes the payload as json_encode without flags does, non-ASCII as
	// \uXXXX: createPayload passes JSON_UNESCAPED_UNICODE from 8.82 on.
	EscapeUnicode bool
}

// flags are the json_encode flags createPayload writes the shape with.
func (v Shape) flags() JSONFlags {
	if v.EscapeUnicode {
		return 0
	}
	return payloadFlags
}

// ObjectJob describes a job dispatched as an object (PHP's dispatch(new Job)): the
// fields createObjectPayload reads from the job instance.
type ObjectJob struct {
	UUID string // Str::uuid(); a new v4 UUID when empty
	ID   string // the Redis driver's Str::random(32); a new one when empty

	DisplayName string // displayName() of the job; CommandName when empty (as PHP without the method)
	CommandName string // the PHP class (get_class), required
	Command     string // serialize(clone $job) or its encrypted form, required

	MaxTries      *int64 // $tries; nil writes null (the worker's --tries applies)
	MaxExceptions *int64 // $maxExceptions
	Timeout       *int64 // $timeout in seconds
	RetryUntil    *int64 // retryUntil as a Unix timestamp (timeoutAt with Shape.RetryDelay)
	FailOnTimeout bool
	Backoff       *string // already comma-joined, see JoinBackoff; nil writes null
	RetryDelay    *int64  // 5.8–7.x's $retryAfter in seconds, written as delay (Shape.RetryDelay)

	BatchID                 *string // data.batchId (Shape.BatchID)
	DeleteWhenMissingModels bool    // Shape.DeleteWhenMissingModels
	Delay                   *int64  // trailing delay in seconds (Shape.CreatedAt); nil writes null
	CreatedAt               int64   // createdAt, Unix seconds (Shape.CreatedAt); the caller passes now
}

// payloadFlags is what Laravel 8.82+ createPayload passes to json_encode (before, none).
const payloadFlags = JSONUnescapedUnicode

// BuildObject writes the payload Laravel's RedisQueue::createPayload writes for an
// object job, byte for byte: same key order and types, "\/", raw UTF-8 except
// U+2028/U+2029, \u0000 for the NULs of mangled property names, "attempts":0. A command
// or name that is not valid UTF-8 is an *EncodeError with code JSONErrorUTF8, where
// Laravel throws InvalidPayloadException ("Error code: 5").
func BuildObject(j ObjectJob, v Shape) ([]byte, error) {
	if j.CommandName == "" {
		return nil, fmt.Errorf("payload: ObjectJob.CommandName is required (the PHP class of the command)")
	}
	if j.Command == "" {
		return nil, fmt.Errorf("payload: ObjectJob.Command is required (the serialized command)")
	}
	display := j.DisplayName
	if display == "" {
		display = j.CommandName
	}
	w := writer{b: make([]byte, 0, 330+len(display)+len(j.CommandName)+len(j.Command)+len(j.Command)/8), flags: v.flags()}
	w.head(v, j.UUID, display)
	w.lit(`,"job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":`)
	w.int(j.MaxTries)
	if !v.NoUUID {
		w.lit(`,"maxExceptions":`)
		w.int(j.MaxExceptions)
	}
	if v.RetryDelay {
		w.lit(`,"delay":`)
		w.int(j.RetryDelay)
		w.lit(`,"timeout":`)
		w.int(j.Timeout)
		w.lit(`,"timeoutAt":`)
		w.int(j.RetryUntil)
	} else {
		if !v.NoFailOnTimeout {
			w.lit(`,"failOnTimeout":`)
			w.bool(j.FailOnTimeout)
		}
		w.lit(`,"backoff":`)
		if j.Backoff == nil {
			w.lit("null")
		} else {
			w.str("backoff", *j.Backoff)
		}
		w.lit(`,"timeout":`)
		w.int(j.Timeout)
		w.lit(`,"retryUntil":`)
		w.int(j.RetryUntil)
	}
	if v.DeleteWhenMissingModels {
		w.lit(`,"deleteWhenMissingModels":`)
		w.bool(j.DeleteWhenMissingModels)
	}
	w.lit(`,"data":{"commandName":`)
	w.str("data.commandName", j.CommandName)
	w.lit(`,"command":`)
	w.str("data.command", j.Command)
	if v.BatchID {
		w.lit(`,"batchId":`)
		if j.BatchID == nil {
			w.lit("null")
		} else {
			w.str("data.batchId", *j.BatchID)
		}
	}
	w.lit("}")
	w.tail(v, j.CreatedAt, orNew(j.ID, NewID), j.Delay)
	return w.b, w.err
}

// StringOption sets an optional part of a string job payload (BuildString).
type StringOption func(*stringJob)

type stringJob struct {
	uuid, id  string
	shape     Shape
	createdAt int64
	delay     *int64
}

// WithUUID sets the uuid instead of generating one (none is written with Shape.NoUUID).
func WithUUID(uuid string) StringOption { return func(s *stringJob) { s.uuid = uuid } }

// WithID sets the Redis id instead of generating one.
func WithID(id string) StringOption { return func(s *stringJob) { s.id = id } }

// WithShape selects the payload shape (default: 8.43's, the zero Shape).
func WithShape(v Shape) StringOption { return func(s *stringJob) { s.shape = v } }

// WithCreatedAt sets createdAt (Unix seconds), written when the shape has CreatedAt.
func WithCreatedAt(unix int64) StringOption { return func(s *stringJob) { s.createdAt = unix } }

// WithDelay sets the trailing delay in seconds, written when the shape has CreatedAt (null
// without this option).
func WithDelay(seconds int64) StringOption { return func(s *stringJob) { s.delay = &seconds } }

// BuildString writes the payload Laravel writes for Queue::push('Class@method', $data):
// displayName is the part of job before the first "@", the job metadata keys are fixed
// (maxTries null, maxExceptions null, failOnTimeout false, backoff null, timeout null;
// 5.8–7.x: maxTries, 7.x's maxExceptions, delay and timeout null) and there is no
// retryUntil (or timeoutAt) key. data is re-encoded the way PHP writes the value it
// decodes to (json_decode assoc semantics: {} becomes [], 1.0 becomes 1, \u00e9 becomes
// é); empty data stands for PHP's default ” and is written as "".
//
// A PHP worker runs such a job by calling Class::method($job, $data) and, unlike object
// jobs, does not delete it afterwards: the PHP handler must call $job->delete().
func BuildString(job string, data json.RawMessage, opts ...StringOption) ([]byte, error) {
	var o stringJob
	for _, opt := range opts {
		opt(&o)
	}
	if job == "" {
		return nil, fmt.Errorf("payload: the job string is required (\"Class@method\")")
	}
	display, _, _ := strings.Cut(job, "@")
	w := writer{b: make([]byte, 0, 300+2*len(job)+len(data)+len(data)/8), flags: o.shape.flags()}
	w.head(o.shape, o.uuid, display)
	w.lit(`,"job":`)
	w.str("job", job)
	switch v := o.shape; {
	case v.RetryDelay && v.NoUUID:
		w.lit(`,"maxTries":null,"delay":null,"timeout":null,"data":`)
	case v.RetryDelay:
		w.lit(`,"maxTries":null,"maxExceptions":null,"delay":null,"timeout":null,"data":`)
	case v.NoFailOnTimeout:
		w.lit(`,"maxTries":null,"maxExceptions":null,"backoff":null,"timeout":null,"data":`)
	default:
		w.lit(`,"maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"data":`)
	}
	if len(data) == 0 {
		w.lit(`""`)
	} else if w.err == nil {
		val, err := DecodeValue(data)
		if err != nil {
			return nil, fmt.Errorf("payload: data: %w", err)
		}
		if w.b, err = val.AppendJSON(w.b, w.flags); err != nil {
			w.err = inPath(err, "data")
		}
	}
	w.tail(o.shape, o.createdAt, orNew(o.id, NewID), o.delay)
	return w.b, w.err
}

// head writes the keys before job: the uuid (a new one when empty; none with
// Shape.NoUUID) and displayName.
func (w *writer) head(v Shape, uuid, display string) {
	if v.NoUUID {
		w.lit(`{"displayName":`)
	} else {
		w.lit(`{"uuid":`)
		w.str("uuid", orNew(uuid, NewUUID))
		w.lit(`,"displayName":`)
	}
	w.str("displayName", display)
}

// writer accumulates a payload and its first error.
type writer struct {
	b     []byte
	err   error
	flags JSONFlags
}

func (w *writer) lit(s string) { w.b = append(w.b, s...) }

func (w *writer) str(path, s string) {
	if w.err != nil {
		return
	}
	var err error
	if w.b, err = appendJSONString(w.b, s, w.flags); err != nil {
		w.err = inPath(err, path)
	}
}

func (w *writer) int(p *int64) {
	if p == nil {
		w.lit("null")
		return
	}
	w.b = AppendJSONInt(w.b, *p)
}

func (w *writer) bool(b bool) {
	if b {
		w.lit("true")
	} else {
		w.lit("false")
	}
}

// tail writes what follows data: createdAt (12.11+), the Redis driver's id and
// attempts, and 12.11's delay, which createPayload sets after createPayloadArray (and
// so after id/attempts).
func (w *writer) tail(v Shape, createdAt int64, id string, delay *int64) {
	if v.CreatedAt {
		w.lit(`,"createdAt":`)
		w.b = AppendJSONInt(w.b, createdAt)
	}
	w.lit(`,"id":`)
	w.str("id", id)
	w.lit(`,"attempts":0`)
	if v.CreatedAt {
		w.lit(`,"delay":`)
		w.int(delay)
	}
	w.lit("}")
}

func orNew(s string, gen func() string) string {
	if s != "" {
		return s
	}
	return gen()
}

// NewUUID returns a random (version 4) UUID in Laravel's Str::uuid() form: lowercase,
// 36 characters with dashes.
func NewUUID() string { return uuid.NewString() }

// NewID returns a Redis job id as Laravel's Str::random(32) makes it: 32 characters of
// [A-Za-z0-9], taken from the base64 of random bytes with "/", "+" and "=" removed,
// drawing again until there are enough.
func NewID() string {
	const n = 32
	out := make([]byte, 0, n)
	var raw [n]byte
	var enc [(n + 2) / 3 * 4]byte
	for len(out) < n {
		size := n - len(out)
		_, _ = rand.Read(raw[:size]) // crypto/rand.Read never fails (Go 1.24+)
		e := enc[:base64.StdEncoding.EncodedLen(size)]
		base64.StdEncoding.Encode(e, raw[:size])
		taken := 0
		for _, c := range e {
			if c == '/' || c == '+' || c == '=' {
				continue
			}
			if taken == size {
				break
			}
			out = append(out, c)
			taken++
		}
	}
	return string(out)
}

// JoinBackoff writes a backoff list the way createObjectPayload does (implode(',')):
// [1, 5, 10] → "1,5,10".
func JoinBackoff(vals []int64) string {
	b := make([]byte, 0, 4*len(vals))
	for i, v := range vals {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, v, 10)
	}
	return string(b)
}
