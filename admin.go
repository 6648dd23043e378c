package laraq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/payload"
)

// Admin does on a connection what artisan's queue commands do: queue:clear,
// queue:restart, queue:pause and queue:resume, queue:retry of failed jobs, and the sizes
// `laraq stats` (Horizon's workload, Queue::size) shows. It is safe for concurrent use.
type Admin struct {
	conn  *Connection
	rdb   *rdb.RDB
	cache rdb.Signals
	now   func() time.Time
}

// NewAdmin returns the admin API of a connection.
func NewAdmin(conn *Connection, opts ...Option) (*Admin, error) {
	r, err := conn.rdb()
	if err != nil {
		return nil, err
	}
	cfg := collectOptions(opts)
	if cfg.now == nil {
		cfg.now = time.Now
	}
	return &Admin{conn: conn, rdb: r, cache: conn.signals(r), now: cfg.now}, nil
}

// QueueSize is what a queue holds.
type QueueSize struct {
	Queue    string // the bare queue name
	Ready    int64  // queues:NAME, ready to run
	Delayed  int64  // :delayed, delayed or released jobs waiting for their time
	Reserved int64  // :reserved, running now or abandoned until retry_after
	Invalid  int64  // :invalid, payloads laraq set aside because the pop script cannot reserve them
	// OldestReady is how long ago the oldest ready job was queued, when its payload says
	// (createdAt from Laravel 12.11, or Horizon's pushedAt); HasOldest tells.
	OldestReady time.Duration
	HasOldest   bool
}

// Queues lists the queues that have keys under the connection's prefix.
func (a *Admin) Queues(ctx context.Context) ([]string, error) { return a.rdb.Queues(ctx) }

// Ping checks that the connection's Redis answers.
func (a *Admin) Ping(ctx context.Context) error {
	if err := a.conn.Client.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("redis at %s: %w", ServerOf(a.conn.Client), err)
	}
	return nil
}

// Sizes returns a queue's ready, delayed and reserved counts (queue:monitor's view).
func (a *Admin) Sizes(ctx context.Context, queue string) (ready, delayed, reserved int64, err error) {
	return a.rdb.Sizes(ctx, queue)
}

// Size returns what a queue holds, with the age of its oldest ready job.
func (a *Admin) Size(ctx context.Context, queue string) (QueueSize, error) {
	s := QueueSize{Queue: queue}
	var err error
	if s.Ready, s.Delayed, s.Reserved, err = a.rdb.Sizes(ctx, queue); err != nil {
		return s, err
	}
	if s.Invalid, err = a.rdb.InvalidCount(ctx, queue); err != nil {
		return s, err
	}
	if s.Ready > 0 {
		head, err := a.rdb.OldestReady(ctx, queue)
		if err != nil {
			return s, err
		}
		s.OldestReady, s.HasOldest = payloadAge(head, a.now())
	}
	return s, nil
}

// payloadAge is how long ago a payload was queued, from createdAt (Unix seconds, Laravel
// 12.11+) or Horizon's pushedAt ("1729411372.3932").
func payloadAge(raw []byte, now time.Time) (time.Duration, bool) {
	env, err := payload.Parse(raw)
	if err != nil {
		return 0, false
	}
	var at float64
	switch {
	case env.CreatedAt != nil:
		at = float64(*env.CreatedAt)
	case env.PushedAt != "":
		if at, err = strconv.ParseFloat(env.PushedAt, 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	age := float64(now.UnixNano())/1e9 - at
	if age < 0 {
		age = 0 // the producer's clock and ours differ
	}
	return time.Duration(age * float64(time.Second)), true
}

// Clear deletes every ready, delayed and reserved job of a queue with its notify tokens,
// in one step, and returns how many there were (queue:clear). Payloads set aside in the
// invalid list are not touched: see ClearInvalid.
func (a *Admin) Clear(ctx context.Context, queue string) (int64, error) {
	return a.rdb.Clear(ctx, queue)
}

// Restart writes the queue:restart signal, the current Unix time without expiry, to the
// cache store, as `php artisan queue:restart` does: PHP and Go workers reading the same
// store finish their job and exit, for their supervisor to start them again.
func (a *Admin) Restart(ctx context.Context) error {
	if a.conn.Cache.Disabled {
		return errors.New("laraq: the connection has no cache store: queue:restart has nowhere to go")
	}
	return a.cache.SignalRestart(ctx, a.now().Unix())
}

// Pause pauses a queue as `php artisan queue:pause connection:queue` does (12.40+):
// workers of 12.40+ and laraq workers skip it until Resume. An empty connection is the
// connection's own name.
func (a *Admin) Pause(ctx context.Context, connection, queue string) error {
	if err := a.cacheOK(); err != nil {
		return err
	}
	return a.cache.Pause(ctx, a.connectionName(connection), queue)
}

// Resume resumes a paused queue (queue:resume).
func (a *Admin) Resume(ctx context.Context, connection, queue string) error {
	if err := a.cacheOK(); err != nil {
		return err
	}
	return a.cache.Resume(ctx, a.connectionName(connection), queue)
}

// PauseAll sets Laravel 13.25's switch that pauses every queue.
func (a *Admin) PauseAll(ctx context.Context) error {
	if err := a.cacheOK(); err != nil {
		return err
	}
	return a.cache.PauseAll(ctx)
}

// ResumeAll clears Laravel 13.25's pause-all switch.
func (a *Admin) ResumeAll(ctx context.Context) error {
	if err := a.cacheOK(); err != nil {
		return err
	}
	return a.cache.ResumeAll(ctx)
}

func (a *Admin) cacheOK() error {
	if a.conn.Cache.Disabled {
		return errors.New("laraq: the connection has no cache store for pause keys")
	}
	return nil
}

func (a *Admin) connectionName(c string) string {
	if c == "" {
		return a.conn.name()
	}
	return c
}

// RetryResult is what Retry did with one failed job.
type RetryResult struct {
	ID       string   // the failed job's ID
	Queue    string   // the queue it was pushed to
	Warnings []string // what differs from `php artisan queue:retry`
}

// ErrNoFailedJob is wrapped by Retry for an ID the failed-job store does not have.
var ErrNoFailedJob = errors.New("no such failed job")

// Retry pushes a failed job back onto its queue and forgets its record, as
// `php artisan queue:retry ID` does: the stored payload with attempts reset to 0, encoded
// as PHP's json_encode writes it (payload.ResetForRetry), through the push script. PHP
// also asks the job class for a fresh retryUntil(), which laraq cannot; a past retryUntil
// is kept and reported in Warnings. The record is forgotten after the push; when that
// fails the job is queued and still listed, which a Warning says.
func (a *Admin) Retry(ctx context.Context, id string) (RetryResult, error) {
	res := RetryResult{ID: id}
	if a.conn.Failed == nil {
		return res, errors.New("laraq: the connection has no failed-job store")
	}
	rec, err := a.conn.Failed.Find(ctx, id)
	if err != nil {
		return res, err
	}
	if rec == nil {
		//lint:ignore ST1005 queue:retry's own message, word for word
		return res, fmt.Errorf("%w: Unable to find failed job with ID [%s].", ErrNoFailedJob, id)
	}
	res.Queue = rec.Queue
	if rec.Connection != a.conn.name() {
		res.Warnings = append(res.Warnings, fmt.Sprintf("failed job [%s] was recorded on connection %q; it is pushed to connection %q, queue %q",
			id, rec.Connection, a.conn.name(), rec.Queue))
	}
	body, err := payload.ResetForRetry(rec.Payload)
	if err != nil {
		return res, fmt.Errorf("failed job [%s] cannot be retried: %w", id, err)
	}
	if env, err := payload.Parse(body); err == nil && env.RetryUntil != nil && *env.RetryUntil <= a.now().Unix() {
		res.Warnings = append(res.Warnings, fmt.Sprintf("failed job [%s] has retryUntil %s, already past: queue:retry would ask the PHP job class for a fresh one; laraq keeps it, so the job fails again at once unless its class has no retryUntil()",
			id, time.Unix(*env.RetryUntil, 0).UTC().Format(time.RFC3339)))
	}
	if err := a.rdb.Push(ctx, rec.Queue, body); err != nil {
		return res, fmt.Errorf("failed job [%s]: push to queue %s: %w", id, rec.Queue, err)
	}
	if _, err := a.conn.Failed.Forget(ctx, id); err != nil {
		res.Warnings = append(res.Warnings, fmt.Sprintf("failed job [%s] was pushed but its record could not be deleted: %v", id, err))
	}
	return res, nil
}

// QueuePrefix is a Redis connection prefix under which the connection's database holds
// queue keys, with the names of those queues (see Admin.Prefixes).
type QueuePrefix struct {
	Prefix string
	Queues []string // sorted
}

// Prefixes lists every connection prefix under which the connection's Redis database
// holds queue keys (PREFIX + "queues:" + NAME, with or without :delayed, :reserved,
// :notify), sorted by prefix: where PHP's jobs are when the prefix in use finds none, say
// after a wrongly guessed release. It scans the whole database (every master of a
// Cluster), so it is for tools, not for a loop.
func (a *Admin) Prefixes(ctx context.Context) ([]QueuePrefix, error) {
	found, err := a.rdb.QueuePrefixes(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]QueuePrefix, len(found))
	for i, p := range found {
		out[i] = QueuePrefix{Prefix: p.Prefix, Queues: p.Queues}
	}
	return out, nil
}

// Payloads the pop script cannot reserve (not JSON, not an object, attempts missing or
// not a number) are lost by Laravel's script; laraq's moves them to the queue's invalid
// list (queues:NAME:invalid) instead. These are what an operator does with them.

// Invalid returns the payloads laraq set aside in a queue's invalid list (payloads the pop
// script cannot reserve, which a PHP worker would lose), oldest first.
func (a *Admin) Invalid(ctx context.Context, queue string) ([][]byte, error) {
	return a.rdb.Invalid(ctx, queue)
}

// ClearInvalid deletes a queue's invalid list and returns how many payloads it held.
func (a *Admin) ClearInvalid(ctx context.Context, queue string) (int64, error) {
	return a.rdb.ClearInvalid(ctx, queue)
}

// RequeueInvalid moves a queue's set-aside payloads back to its ready list, in order,
// and returns how many moved: for payloads repaired meanwhile, or set aside by a bug
// since fixed. One the pop script still cannot reserve is set aside again.
func (a *Admin) RequeueInvalid(ctx context.Context, queue string) (int64, error) {
	return a.rdb.RequeueInvalid(ctx, queue)
}

// FailInvalid records each of a queue's set-aside payloads in the connection's failed-job
// store, where `php artisan queue:failed` and `laraq failed` list them, and removes it
// from the invalid list once its row is written. It returns how many it moved; on an
// error the payloads not yet recorded stay in the invalid list.
func (a *Admin) FailInvalid(ctx context.Context, queue string) (int, error) {
	if a.conn.Failed == nil {
		return 0, errors.New("laraq: no failed-job store on this connection")
	}
	jobs, err := a.rdb.Invalid(ctx, queue)
	if err != nil {
		return 0, err
	}
	moved := 0
	for _, job := range jobs {
		why := WhyInvalid(job)
		if why == "" {
			why = "Redis' Lua JSON decoder rejected it"
		}
		text := failed.New(invalidPayloadClass, "The job payload cannot be reserved by the queue's pop script: "+why+".", 1).String()
		if _, err := a.conn.Failed.Log(ctx, a.connectionName(""), queue, job, text); err != nil {
			return moved, fmt.Errorf("laraq: recording a set-aside payload of queue %q: %w", queue, err)
		}
		if _, err := a.rdb.RemoveInvalid(ctx, queue, job); err != nil {
			return moved, err
		}
		moved++
	}
	return moved, nil
}

// invalidPayloadClass is the exception class a set-aside payload's failed row names.
const invalidPayloadClass = `Illuminate\Queue\InvalidPayloadException`

// WhyInvalid says why Laravel's pop script cannot reserve payload (its cjson.decode or
// attempts + 1 would fail), or "" when it can.
func WhyInvalid(payload []byte) string {
	var v any
	if err := json.Unmarshal(payload, &v); err != nil {
		return "it is not JSON"
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return "it is not a JSON object"
	}
	switch a := obj["attempts"].(type) {
	case float64:
		return ""
	case string:
		// Lua's arithmetic coerces numeric strings ("2", " 2 ", "0x2").
		t := strings.TrimSpace(a)
		if _, err := strconv.ParseFloat(t, 64); err == nil {
			return ""
		}
		if _, err := strconv.ParseInt(strings.TrimPrefix(strings.TrimPrefix(t, "0x"), "0X"), 16, 64); err == nil && t != strings.TrimPrefix(strings.TrimPrefix(t, "0x"), "0X") {
			return ""
		}
		return "its attempts is not a number"
	case nil:
		return "it has no attempts"
	}
	return "its attempts is not a number"
}
