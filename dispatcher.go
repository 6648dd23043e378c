package laraq

import (
	"context"
	"time"

	"github.com/laraq/laraq/internal/dispatch"
	"github.com/laraq/laraq/internal/horizon"
	"github.com/laraq/laraq/phpclass"
)

// Dispatcher dispatches jobs onto a Laravel queue connection, writing what the
// connection's Laravel release (Connection.Release) writes for the same job: Laravel's
// Bus dispatcher and RedisQueue, byte for byte (uuid and id aside). PHP workers, or Go
// workers, run them. It is safe for concurrent use.
type Dispatcher struct {
	d *dispatch.Dispatcher
}

// dispatcherConfig holds the clock, the id makers, the payload hook and the classes'
// facts (Option).
type dispatcherConfig struct {
	now           func() time.Time
	newID         func() string
	newUUID       func() string
	createPayload func(ctx context.Context, parent *JobInfo, payload []byte) []byte
	classes       *phpclass.Manifest
	declared      []*Jobs
}

// CreatePayloadUsing edits every payload a Dispatcher pushes, after it is built, as the
// callbacks of Laravel's Queue::createPayloadUsing do: OpenTelemetry's instrumentation
// adds the trace context there (package otel's Tracer.CreatePayload). parent is the job
// whose run dispatched this one (a worker continuing a chain, see
// WorkerConfig.CreatePayloadUsing), nil for a dispatch from your code. PushRaw is left
// alone, as PHP's pushRaw is. Default none.
func CreatePayloadUsing(fn func(ctx context.Context, parent *JobInfo, payload []byte) []byte) Option {
	return func(c *dispatcherConfig) { c.createPayload = fn }
}

// Option adjusts a Dispatcher or an Admin.
type Option func(*dispatcherConfig)

// WithClock sets the clock for delays, createdAt, backoff dates and the queue:restart
// timestamp. Default time.Now.
func WithClock(now func() time.Time) Option {
	return func(c *dispatcherConfig) { c.now = now }
}

// WithIDs sets how the Redis job id and the uuid are made. Default payload.NewID
// (Laravel's Str::random(32)) and payload.NewUUID (Str::uuid()).
func WithIDs(newID, newUUID func() string) Option {
	return func(c *dispatcherConfig) { c.newID, c.newUUID = newID, newUUID }
}

// WithClasses gives a Dispatcher the job classes' facts (a manifest 'laraq classes' wrote,
// read with phpclass.Load), so that it queues what PHP queues for them, and refuses
// what PHP would not:
//
//   - a Go type is compared with its class (phpclass.Check) before its first dispatch,
//     and refused, with every problem and its fix, on a property no field takes, a tag
//     no property has (case included), a visibility or default that differs, or a
//     ShouldBeUnique or ShouldBeEncrypted class whose type does not say so. The types
//     of declared (Handle, HandleClass, Declare) are checked at once: NewDispatcher
//     returns the error. A Go type of a class the facts lack is refused too.
//   - a job given as a *phpser.Value is completed as PHP holds its class: the given
//     properties (by plain name, or mangled as the class declares them) with the others
//     at their defaults, in serialize() order, the Queueable properties only where the
//     class uses the trait; written without what still holds its default where 9.4+
//     SerializesModels leaves it out; encrypted for a ShouldBeEncrypted class; with the
//     13.x queue attributes (#[Tries], #[Backoff], #[Timeout], #[MaxExceptions],
//     #[FailOnTimeout], #[DeleteWhenMissingModels], #[UniqueFor]) read as 13.x reads them;
//     and a ShouldBeUnique class takes its lock as PendingDispatch does, its id from the
//     uniqueId property (UniqueID for a class with a uniqueId() method). A value of a
//     class the facts lack is refused. What PHP computes in tries(), backoff(),
//     retryUntil() and displayName() is not run: the payload reads the properties.
//
// Default: no facts; a Go type is taken as it says, a value written as given.
func WithClasses(m *phpclass.Manifest, declared ...*Jobs) Option {
	return func(c *dispatcherConfig) { c.classes, c.declared = m, declared }
}

func collectOptions(opts []Option) dispatcherConfig {
	var cfg dispatcherConfig
	for _, o := range opts {
		if o != nil {
			o(&cfg)
		}
	}
	return cfg
}

// NewDispatcher returns a Dispatcher pushing to the connection's queues. The connection's
// client stays owned by the caller.
func NewDispatcher(conn *Connection, opts ...Option) (*Dispatcher, error) {
	cfg := collectOptions(opts)
	if _, err := conn.rdb(); err != nil {
		return nil, err
	}
	hz, err := conn.horizon(cfg.now, nil)
	if err != nil {
		return nil, err
	}
	d, err := conn.dispatcher(cfg, hz)
	if err != nil {
		return nil, err
	}
	for _, jobs := range cfg.declared {
		if err := d.CheckTypes(jobs.Types()); err != nil {
			return nil, err
		}
	}
	return &Dispatcher{d: d}, nil
}

// dispatcher builds the dispatcher behind a Dispatcher, and the one a worker continues
// chains with, on the connection's parts.
func (c *Connection) dispatcher(cfg dispatcherConfig, hz *horizon.Recorder) (*dispatch.Dispatcher, error) {
	r, err := c.rdb()
	if err != nil {
		return nil, err
	}
	return dispatch.New(dispatch.Config{RDB: r, Connection: c.name(), Queue: c.queue(), Release: c.Release,
		Encrypter: c.Encrypter, Locks: c.locks, Horizon: hz, Now: cfg.now, NewID: cfg.newID, NewUUID: cfg.newUUID,
		CreatePayloadUsing: cfg.createPayload, Classes: cfg.classes}), nil
}

// Message is a job ready to be pushed (Prepare, Enqueue): its Queue (the bare name), its
// exact Payload bytes, its ID (the Redis job id, payload "id") and UUID, and for a job
// that goes to queues:NAME:delayed instead of the ready list, Delayed and AvailableAt
// (the Unix second it becomes ready, its :delayed score).
type Message = dispatch.Message

// Dispatch pushes job as `dispatch($job)` does in Laravel: the payload carries
// serialize($job) as the connection's release writes it (class defaults applied to zero
// fields and, from 9.4 for a class using SerializesModels, left out; that release's
// Queueable properties in its order), the envelope metadata comes from its public tries,
// maxExceptions, failOnTimeout, backoff, timeout and retryUntil properties with their
// defaults, its tries()/backoff()/retryUntil() methods and 13.x attributes as that release
// reads them (TriesMethod, ...), and it goes to the queue named by its queue property
// (else the connection's Queue), into :delayed when its delay property is set. Options work like PendingDispatch's onQueue(), delay() and
// onConnection(). It returns the job id.
//
// job is a struct (or pointer to one) whose PHPClass method names the PHP class, with
// php tags for its properties (see phpser.Marshal), usually embedding Queueable; or a
// *phpser.Value holding an object.
func (p *Dispatcher) Dispatch(ctx context.Context, job any, opts ...DispatchOption) (string, error) {
	return p.d.Dispatch(ctx, job, opts...)
}

// Prepare builds the message Dispatch would push, without touching Redis.
func (p *Dispatcher) Prepare(job any, opts ...DispatchOption) (*Message, error) {
	return p.d.Prepare(job, opts...)
}

// Enqueue pushes a prepared message: RPUSH to the ready list with its notify token, or
// ZADD to :delayed with score AvailableAt.
func (p *Dispatcher) Enqueue(ctx context.Context, m *Message) error { return p.d.Enqueue(ctx, m) }

// DispatchBulk prepares every job as Dispatch would (same options for all) and pushes
// them with few round trips: the ready jobs of each queue in one atomic call (each with
// its notify token, in order), the delayed ones in one pipeline of ZADDs.
//
// Laravel's Queue::bulk() differs: it pushes every job to the one queue it is given,
// and before 9.7 it pushes delayed jobs at once, dropping their delay (9.7+ sends them
// through later()). DispatchBulk routes each job like Dispatch, so no delay is lost.
//
// ids[i] is the id of jobs[i]; after an error, ids of jobs that were not pushed are "".
func (p *Dispatcher) DispatchBulk(ctx context.Context, jobs []any, opts ...DispatchOption) (ids []string, err error) {
	return p.d.DispatchBulk(ctx, jobs, opts...)
}

// DispatchString pushes a string job, as Queue::push('Class@method', $data) does: a PHP
// worker resolves Class and calls method($job, $data) (fire when there is no @method).
// data is encoded with encoding/json (a json.RawMessage is used as is) and written
// the way PHP writes the value json_decode gives it; nil stands for PHP's default ”.
// Queue, PushOn, Delay, At and Later choose where it goes; a string job has no
// properties to set.
//
// A PHP worker never deletes a string job by itself: its handler must call
// $job->delete(), or the job runs again after retry_after until its tries are spent.
func (p *Dispatcher) DispatchString(ctx context.Context, job string, data any, opts ...DispatchOption) (string, error) {
	return p.d.DispatchString(ctx, job, data, opts...)
}

// PushRaw pushes a payload as it is (RedisQueue::pushRaw) onto queue (the connection's Queue
// when empty) and returns its "id" ("" when it has none). It refuses a payload that a
// Laravel worker would lose: the pop script does arithmetic on attempts, and when that
// fails the job has already been taken off the list (see payload.CheckPushRaw).
func (p *Dispatcher) PushRaw(ctx context.Context, queue string, raw []byte) (string, error) {
	return p.d.PushRaw(ctx, queue, raw)
}
