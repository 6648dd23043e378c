package dispatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/encryption"
	"github.com/laraq/laraq/internal/horizon"
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpclass"
	"github.com/laraq/laraq/phpser"
)

// Dispatcher writes what a Laravel release writes for a job (laraq.Dispatcher is its
// front door): Laravel's Bus dispatcher and RedisQueue, byte for byte (uuid and id
// aside). It is safe for concurrent use.
type Dispatcher struct {
	cfg     Config
	checked sync.Map // classCheck → error: the Go types checked against Classes
}

// Config is what a Dispatcher is made of.
type Config struct {
	RDB        *rdb.RDB
	Connection string      // the queue connection's name
	Queue      string      // its default queue
	Release    job.Release // the application's release; zero: unknown
	Encrypter  *encryption.Encrypter
	// Locks returns the locks of ShouldBeUnique jobs, called when a unique job is
	// dispatched.
	Locks   func() (rdb.UniqueLocks, error)
	Horizon *horizon.Recorder // nil: no Horizon records
	// Classes are the job classes' facts (laraq.WithClasses); nil: none (classes.go).
	Classes *phpclass.Manifest
	Now     func() time.Time
	NewID   func() string // the Redis job id (Str::random(32))
	NewUUID func() string
	// CreatePayloadUsing, when set, edits every payload before it is pushed, as
	// Queue::createPayloadUsing's callbacks do in PHP (OpenTelemetry's instrumentation
	// adds traceparent there); parent is the running job a chain continues from, nil for
	// a dispatch.
	CreatePayloadUsing func(ctx context.Context, parent *job.JobInfo, payload []byte) []byte
}

// New returns a Dispatcher; zero clock and id makers take time.Now, payload.NewID and
// payload.NewUUID.
func New(cfg Config) *Dispatcher {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.NewID == nil {
		cfg.NewID = payload.NewID
	}
	if cfg.NewUUID == nil {
		cfg.NewUUID = payload.NewUUID
	}
	return &Dispatcher{cfg: cfg}
}

func (p *Dispatcher) release() job.Release { return job.OrLatest(p.cfg.Release) }

// Now is the dispatcher's clock.
func (p *Dispatcher) Now() time.Time { return p.cfg.Now() }

// Message is a job ready to be pushed: where it goes and its exact payload bytes.
type Message struct {
	Queue       string // bare queue name (queues:NAME)
	Payload     []byte
	ID          string // the Redis job id (payload "id")
	UUID        string
	Delayed     bool  // goes to queues:NAME:delayed instead of the ready list
	AvailableAt int64 // Unix seconds the delayed job becomes ready (its :delayed score)
}

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
func (p *Dispatcher) Dispatch(ctx context.Context, v any, opts ...Option) (string, error) {
	o, err := collect(opts)
	if err != nil {
		return "", err
	}
	if err := p.checkJob(v); err != nil {
		return "", err
	}
	spec, err := p.uniqueOf(v, o)
	if err != nil {
		return "", err
	}
	lock, err := p.acquireUnique(ctx, spec) // a unique job's lock, as PendingDispatch takes it
	if err != nil {
		return "", err
	}
	if lock != nil {
		opts = append(opts[:len(opts):len(opts)], lock.option())
	}
	m, err := p.Prepare(v, opts...)
	if err != nil {
		lock.undo(ctx)
		return "", err
	}
	if err := p.Enqueue(ctx, m); err != nil {
		lock.undo(ctx)
		return "", err
	}
	return m.ID, nil
}

// Prepare builds the message Dispatch would push, without touching Redis.
func (p *Dispatcher) Prepare(v any, opts ...Option) (*Message, error) {
	o, err := collect(opts)
	if err != nil {
		return nil, err
	}
	o = p.forJob(o, v)
	cmd, err := p.command(v, o)
	if err != nil {
		return nil, err
	}
	m, err := p.prepare(cmd, o)
	if err == nil {
		p.forHorizon(m, v, o)
	}
	return m, err
}

// command builds the command PHP would queue for job on the connection's release,
// with the dispatch options' properties set: onConnection(), onQueue(), delay() and
// chain().
func (p *Dispatcher) command(v any, o *Options) (*command, error) {
	set := map[string]*phpser.Value{}
	if o.Connection != nil {
		if *o.Connection != "" && *o.Connection != p.cfg.Connection {
			return nil, fmt.Errorf("laraq: %s is for queue connection %q, this dispatcher pushes to %q", jobClass(v), *o.Connection, p.cfg.Connection)
		}
		set["connection"] = phpser.String(*o.Connection)
	}
	if o.Queue != nil {
		set["queue"] = phpser.String(*o.Queue)
	}
	if o.Delay != nil {
		set["delay"] = o.Delay
	}
	if o.unique != nil && WritesLockOwner(p.release()) {
		// PendingDispatch stores the lock's owner on the job (13.24+).
		set["uniqueLockOwner"] = phpser.String(o.unique.owner)
	}
	if o.Chain != nil {
		// chain() stores serialize($next) of each job, as its class writes it.
		items := make([]*phpser.Value, len(o.Chain))
		for i, next := range o.Chain {
			c, err := p.command(next, &Options{})
			if err != nil {
				return nil, fmt.Errorf("laraq: chain[%d]: %s", i, strings.TrimPrefix(err.Error(), "laraq: "))
			}
			s, err := phpser.Encode(c.out)
			if err != nil {
				return nil, fmt.Errorf("laraq: chain[%d]: %w", i, err)
			}
			items[i] = phpser.String(string(s))
		}
		set["chained"] = phpser.List(items...)
	}
	var c *command
	var err error
	switch j := v.(type) {
	case nil:
		return nil, errors.New("laraq: nil job")
	case *phpser.Value:
		if p.cfg.Classes != nil {
			c, err = p.classCommand(j, set)
		} else {
			c, err = valueCommand(j, set)
		}
	default:
		if err := p.checkJob(v); err != nil {
			return nil, err
		}
		c, err = goCommand(v, p.release(), set)
	}
	if err != nil {
		return nil, fmt.Errorf("laraq: %w", err)
	}
	if o.Chain != nil {
		if _, ok := phpser.PropIndex(c.live.Entries(), "chained"); !ok {
			return nil, fmt.Errorf("laraq: %s has no chained property to carry a chain (embed laraq.Queueable)", c.class)
		}
	}
	return c, nil
}

// jobClass names a job's class for an error message.
func jobClass(v any) string {
	if c, ok := v.(job.Command); ok {
		return c.PHPClass()
	}
	return fmt.Sprintf("a %T job", v)
}

func (p *Dispatcher) prepare(c *command, o *Options) (*Message, error) {
	now := p.cfg.Now()
	class := c.class
	cmd := c.live
	var err error
	// Bus\Dispatcher::dispatchToQueue resolves the connection from the job's property.
	if v, ok := cmd.Visible("connection"); ok {
		name, err := phpString(v)
		if err != nil {
			return nil, fmt.Errorf("laraq: %s connection property: %v", class, err)
		}
		if name != "" && name != p.cfg.Connection && !o.AnyConnection {
			return nil, fmt.Errorf("laraq: %s is for queue connection %q, this dispatcher pushes to %q", class, name, p.cfg.Connection)
		}
	}
	m := &Message{Queue: p.cfg.Queue}
	// The options decide even where the class has no queue/delay property to carry them.
	switch {
	case o.PushOn != nil:
		m.Queue = *o.PushOn
	case o.Queue != nil:
		m.Queue = *o.Queue
	default:
		if v, ok := cmd.Visible("queue"); ok {
			if m.Queue, err = phpString(v); err != nil {
				return nil, fmt.Errorf("laraq: %s queue property: %v", class, err)
			}
		}
	}
	if m.Queue == "" {
		// getQueue(): 'queues:'.($queue ?: $this->default)
		m.Queue = p.cfg.Queue
	}
	var delaySeconds *int64
	var delayVal *phpser.Value
	if o.Later != nil {
		delayVal = o.Later
	} else if o.Delay != nil {
		delayVal = o.Delay
	} else if v, ok := cmd.Visible("delay"); ok {
		delayVal = v
	}
	if delayVal != nil {
		at, secs, err := availableAt(delayVal, now)
		if err != nil {
			return nil, fmt.Errorf("laraq: %s: %v", class, err)
		}
		m.Delayed, m.AvailableAt, delaySeconds = true, at, &secs
	}

	command, err := phpser.Encode(c.out)
	if err != nil {
		return nil, fmt.Errorf("laraq: serializing %s: %w", class, err)
	}
	md, err := deriveMeta(cmd, c.methods, p.release(), now)
	if err != nil {
		return nil, fmt.Errorf("laraq: %s: %v", class, err)
	}
	sealed, err := p.sealCommand(cmd, command, o)
	if err != nil {
		return nil, fmt.Errorf("laraq: %w", err)
	}
	m.ID, m.UUID = p.cfg.NewID(), p.cfg.NewUUID()
	if p.release().Shape().NoUUID {
		m.UUID = "" // 5.8–6.x payloads have none
	}
	display := c.display
	if display == "" {
		display = frameworkDisplayName(cmd) // CallQueuedListener & co. (dispatch_display.go)
	}
	if display == "" {
		display = class
	}
	m.Payload, err = buildObject(payload.ObjectJob{
		UUID: m.UUID, ID: m.ID,
		DisplayName: display, CommandName: class, Command: sealed,
		BatchID: md.batchID, DeleteWhenMissingModels: md.deleteWhenMissingModels,
		Delay: delaySeconds, CreatedAt: now.Unix(),
	}, md, p.release().Shape())
	if err == nil {
		m.Payload, err = p.uniqueContext(m.Payload, o)
	}
	if err != nil {
		return nil, fmt.Errorf("laraq: %s: %w", class, err)
	}
	return m, nil
}

// buildObject writes the envelope. Integer (and bool) metadata goes straight into
// payload.BuildObject; anything else PHP would write as is (a string $tries, a float
// $timeout, an array) is set afterwards on the decoded envelope, which payload.Value
// writes back with json_encode's exact bytes.
func buildObject(j payload.ObjectJob, md meta, v payload.Shape) ([]byte, error) {
	type patch struct {
		key string
		val payload.Value
	}
	var patches []patch
	intField := func(key string, jv *payload.Value, dst **int64) {
		switch {
		case jv == nil:
		case jv.Kind == payload.KindInt:
			n := jv.Int
			*dst = &n
		default:
			patches = append(patches, patch{key, *jv})
		}
	}
	intField("maxTries", md.maxTries, &j.MaxTries)
	if !v.NoUUID { // 5.8–6.x have no maxExceptions key
		intField("maxExceptions", md.maxExceptions, &j.MaxExceptions)
	}
	intField("timeout", md.timeout, &j.Timeout)
	if v.RetryDelay { // 5.8–7.x
		intField("delay", md.retryDelay, &j.RetryDelay)
		intField("timeoutAt", md.retryUntil, &j.RetryUntil)
	} else {
		intField("retryUntil", md.retryUntil, &j.RetryUntil)
	}
	if md.failOnTimeout.Kind == payload.KindBool {
		j.FailOnTimeout = md.failOnTimeout.Bool
	} else if !v.NoFailOnTimeout {
		patches = append(patches, patch{"failOnTimeout", md.failOnTimeout})
	}
	if md.backoff != nil {
		s := md.backoff.Str
		j.Backoff = &s
	}
	out, err := payload.BuildObject(j, v)
	if err != nil || len(patches) == 0 {
		return out, err
	}
	doc, err := payload.DecodeValue(out)
	if err != nil {
		return nil, err
	}
	for _, p := range patches {
		doc.Set(p.key, p.val)
	}
	flags := payload.JSONUnescapedUnicode
	if v.EscapeUnicode {
		flags = 0
	}
	return doc.AppendJSON(nil, flags)
}

// Enqueue pushes a prepared message: RPUSH to the ready list with its notify token, or
// ZADD to :delayed with score AvailableAt.
func (p *Dispatcher) Enqueue(ctx context.Context, m *Message) error {
	m.Payload = p.CreatePayload(ctx, nil, m.Payload)
	return p.enqueue(ctx, m)
}

// CreatePayload is the payload after Config.CreatePayloadUsing, for a job dispatched by
// the running job parent (nil for none). Enqueue and DispatchBulk apply it; a chain's
// next job gets it before EnqueueOnce, which does not.
func (p *Dispatcher) CreatePayload(ctx context.Context, parent *job.JobInfo, payload []byte) []byte {
	if p.cfg.CreatePayloadUsing == nil {
		return payload
	}
	return p.cfg.CreatePayloadUsing(ctx, parent, payload)
}

// enqueue pushes m as it is.
func (p *Dispatcher) enqueue(ctx context.Context, m *Message) error {
	if p.cfg.Horizon != nil {
		return p.enqueueHorizon(ctx, m)
	}
	var err error
	if m.Delayed {
		err = p.cfg.RDB.Later(ctx, m.Queue, m.AvailableAt, m.Payload)
	} else {
		err = p.cfg.RDB.Push(ctx, m.Queue, m.Payload)
	}
	if err != nil {
		return fmt.Errorf("laraq: pushing to queue %s: %w", m.Queue, err)
	}
	return nil
}

// EnqueueOnce is Enqueue made safe to retry (rdb.PushOnce): a chain's next job, pushed
// again after an error whose outcome is unknown, is not made ready twice. A delayed job
// is a ZADD, which a repetition only repeats.
func (p *Dispatcher) EnqueueOnce(ctx context.Context, m *Message, keep time.Duration) error {
	if p.cfg.Horizon != nil {
		return p.enqueueOnceHorizon(ctx, m, keep)
	}
	if m.Delayed {
		return p.enqueue(ctx, m)
	}
	if _, err := p.cfg.RDB.PushOnce(ctx, m.Queue, m.Payload, m.ID, keep); err != nil {
		return fmt.Errorf("laraq: pushing to queue %s: %w", m.Queue, err)
	}
	return nil
}

// DispatchBulk prepares every job as Dispatch would (same options for all) and pushes
// them with few round trips: the ready jobs of each queue in one atomic call (each with
// its notify token, in order), the delayed ones in one pipeline of ZADDs.
//
// Laravel's Queue::bulk() differs: it pushes every job to the one queue it is given,
// and before 9.7 it pushes delayed jobs at once, dropping their delay (9.7+ sends them
// through later()). DispatchBulk routes each job like Dispatch, so no delay is lost.
//
// ids[i] is the id of jobs[i]; after an error, ids of jobs that were not pushed are "".
func (p *Dispatcher) DispatchBulk(ctx context.Context, jobs []any, opts ...Option) (ids []string, err error) {
	o, err := collect(opts)
	if err != nil {
		return nil, err
	}
	msgs := make([]*Message, len(jobs))
	for i, v := range jobs {
		jo := p.forJob(o, v)
		cmd, err := p.command(v, jo)
		if err == nil {
			msgs[i], err = p.prepare(cmd, jo)
		}
		if err != nil {
			return nil, fmt.Errorf("jobs[%d]: %w", i, err)
		}
		p.forHorizon(msgs[i], v, o)
		msgs[i].Payload = p.CreatePayload(ctx, nil, msgs[i].Payload)
	}
	if p.cfg.Horizon != nil {
		return dispatchedIDs(msgs, p.enqueueHorizon(ctx, msgs...))
	}
	ids = make([]string, len(jobs))
	var order []string
	ready := map[string][]int{}
	var delayed []int
	for i, m := range msgs {
		if m.Delayed {
			delayed = append(delayed, i)
			continue
		}
		if _, ok := ready[m.Queue]; !ok {
			order = append(order, m.Queue)
		}
		ready[m.Queue] = append(ready[m.Queue], i)
	}
	for _, q := range order {
		idx := ready[q]
		payloads := make([][]byte, len(idx))
		for k, i := range idx {
			payloads[k] = msgs[i].Payload
		}
		if err := p.cfg.RDB.PushBulk(ctx, q, payloads); err != nil {
			return ids, fmt.Errorf("laraq: pushing %d jobs to queue %s: %w", len(idx), q, err)
		}
		for _, i := range idx {
			ids[i] = msgs[i].ID
		}
	}
	if len(delayed) > 0 {
		_, err := p.cfg.RDB.Client().Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, i := range delayed {
				m := msgs[i]
				pipe.ZAdd(ctx, p.cfg.RDB.Keys(m.Queue).Delayed, redis.Z{Score: float64(m.AvailableAt), Member: m.Payload})
			}
			return nil
		})
		if err != nil {
			return ids, fmt.Errorf("laraq: adding %d delayed jobs: %w", len(delayed), err)
		}
		for _, i := range delayed {
			ids[i] = msgs[i].ID
		}
	}
	return ids, nil
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
func (p *Dispatcher) DispatchString(ctx context.Context, job string, data any, opts ...Option) (string, error) {
	o, err := collect(opts)
	if err != nil {
		return "", err
	}
	if o.Chain != nil {
		return "", errors.New("laraq: a string job cannot carry a chain")
	}
	if o.Connection != nil && *o.Connection != p.cfg.Connection {
		return "", fmt.Errorf("laraq: job is for queue connection %q, this dispatcher pushes to %q", *o.Connection, p.cfg.Connection)
	}
	class, _, _ := strings.Cut(job, "@")
	if class == "" {
		return "", fmt.Errorf("laraq: string job %q names no class (want Class@method)", job)
	}
	var raw json.RawMessage
	switch d := data.(type) {
	case nil:
	case json.RawMessage:
		raw = d
	default:
		if raw, err = json.Marshal(data); err != nil {
			return "", fmt.Errorf("laraq: string job data: %w", err)
		}
	}
	now := p.cfg.Now()
	m := &Message{Queue: p.cfg.Queue, ID: p.cfg.NewID(), UUID: p.cfg.NewUUID()}
	if p.release().Shape().NoUUID {
		m.UUID = "" // 5.8–6.x payloads have none
	}
	if o.Queue != nil {
		m.Queue = *o.Queue
	}
	if o.PushOn != nil {
		m.Queue = *o.PushOn
	}
	if m.Queue == "" {
		m.Queue = p.cfg.Queue
	}
	sopts := []payload.StringOption{payload.WithID(m.ID), payload.WithUUID(m.UUID), payload.WithShape(p.release().Shape()), payload.WithCreatedAt(now.Unix())}
	d := o.Later
	if d == nil {
		d = o.Delay
	}
	if d != nil {
		at, secs, err := availableAt(d, now)
		if err != nil {
			return "", fmt.Errorf("laraq: %v", err)
		}
		m.Delayed, m.AvailableAt = true, at
		sopts = append(sopts, payload.WithDelay(secs))
	}
	if m.Payload, err = payload.BuildString(job, raw, sopts...); err != nil {
		return "", fmt.Errorf("laraq: %w", err)
	}
	p.forHorizon(m, nil, o)
	if err := p.Enqueue(ctx, m); err != nil {
		return "", err
	}
	return m.ID, nil
}

// PushRaw pushes a payload as it is (RedisQueue::pushRaw) onto queue (the connection's Queue
// when empty) and returns its "id" ("" when it has none). It refuses a payload that a
// Laravel worker would lose: the pop script does arithmetic on attempts, and when that
// fails the job has already been taken off the list (see payload.CheckPushRaw).
func (p *Dispatcher) PushRaw(ctx context.Context, queue string, raw []byte) (string, error) {
	if err := payload.CheckPushRaw(raw); err != nil {
		return "", fmt.Errorf("laraq: %w", err)
	}
	if queue == "" {
		queue = p.cfg.Queue
	}
	if p.cfg.Horizon != nil {
		return p.pushRawHorizon(ctx, queue, raw)
	}
	if err := p.cfg.RDB.Push(ctx, queue, raw); err != nil {
		return "", fmt.Errorf("laraq: pushing to queue %s: %w", queue, err)
	}
	doc, err := payload.DecodeValue(raw)
	if err != nil {
		return "", nil
	}
	switch id := doc.Get("id"); {
	case id == nil:
	case id.Kind == payload.KindString:
		return id.Str, nil
	case id.Kind == payload.KindInt:
		return strconv.FormatInt(id.Int, 10), nil
	}
	return "", nil
}
