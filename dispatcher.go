package laraq

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// Dispatcher dispatches jobs onto a Laravel queue connection, writing what the
// connection's Laravel release (Connection.Release) writes for the same job: Laravel's
// Bus dispatcher and RedisQueue, byte for byte (uuid and id aside). PHP workers, or Go
// workers, run them. It is safe for concurrent use.
type Dispatcher struct {
	rdb  *rdb.RDB
	conn *Connection
	cfg  dispatcherConfig
	hz   *horizonState // Horizon's bookkeeping; nil when Connection.Horizon is nil
}

// dispatcherConfig holds the clock and id makers (Option).
type dispatcherConfig struct {
	now     func() time.Time
	newID   func() string
	newUUID func() string
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
	return newDispatcher(conn, collectOptions(opts))
}

func newDispatcher(conn *Connection, cfg dispatcherConfig) (*Dispatcher, error) {
	r, err := conn.rdb()
	if err != nil {
		return nil, err
	}
	if cfg.now == nil {
		cfg.now = time.Now
	}
	if cfg.newID == nil {
		cfg.newID = payload.NewID
	}
	if cfg.newUUID == nil {
		cfg.newUUID = payload.NewUUID
	}
	hz, err := newHorizonState(conn, cfg.now, nil)
	if err != nil {
		return nil, err
	}
	return &Dispatcher{rdb: r, conn: conn, cfg: cfg, hz: hz}, nil
}

func (p *Dispatcher) release() Release { return p.conn.Release.orLatest() }

// Message is a job ready to be pushed: where it goes and its exact payload bytes.
type Message struct {
	Queue       string // bare queue name (queues:NAME)
	Payload     []byte
	ID          string // the Redis job id (payload "id")
	UUID        string
	Delayed     bool  // goes to queues:NAME:delayed instead of the ready list
	AvailableAt int64 // Unix seconds the delayed job becomes ready (its :delayed score)
}

// DisplayNamer is implemented by jobs whose PHP class has a displayName() method: the
// payload's displayName comes from it instead of the class name.
type DisplayNamer interface {
	DisplayName() string
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
func (p *Dispatcher) Dispatch(ctx context.Context, job any, opts ...DispatchOption) (string, error) {
	lock, err := p.acquireUnique(ctx, job) // a UniqueJob's lock, as PendingDispatch takes it
	if err != nil {
		return "", err
	}
	if lock != nil {
		opts = append(opts[:len(opts):len(opts)], lock.option())
	}
	m, err := p.Prepare(job, opts...)
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
func (p *Dispatcher) Prepare(job any, opts ...DispatchOption) (*Message, error) {
	o, err := collect(opts)
	if err != nil {
		return nil, err
	}
	o = o.forJob(job)
	cmd, err := p.command(job, o)
	if err != nil {
		return nil, err
	}
	m, err := p.prepare(cmd, o)
	if err == nil {
		p.forHorizon(m, job, o)
	}
	return m, err
}

// command builds the command PHP would queue for job on the connection's release,
// with the dispatch options' properties set: onConnection(), onQueue(), delay() and
// chain().
func (p *Dispatcher) command(job any, o *options) (*command, error) {
	set := map[string]*phpser.Value{}
	if o.connection != nil {
		if *o.connection != "" && *o.connection != p.conn.name() {
			return nil, fmt.Errorf("laraq: %s is for queue connection %q, this dispatcher pushes to %q", jobClass(job), *o.connection, p.conn.name())
		}
		set["connection"] = phpser.String(*o.connection)
	}
	if o.queue != nil {
		set["queue"] = phpser.String(*o.queue)
	}
	if o.delay != nil {
		set["delay"] = o.delay.prop
	}
	if o.unique != nil && p.release().writesLockOwner() {
		// PendingDispatch stores the lock's owner on the job (13.24+).
		set["uniqueLockOwner"] = phpser.String(o.unique.owner)
	}
	if o.chain != nil {
		// chain() stores serialize($next) of each job, as its class writes it.
		items := make([]*phpser.Value, len(o.chain))
		for i, next := range o.chain {
			c, err := p.command(next, &options{})
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
	switch j := job.(type) {
	case nil:
		return nil, errors.New("laraq: nil job")
	case *phpser.Value:
		c, err = valueCommand(j, set)
	default:
		c, err = goCommand(job, p.release(), set)
	}
	if err != nil {
		return nil, fmt.Errorf("laraq: %w", err)
	}
	if o.chain != nil {
		if _, ok := findProp(c.live, "chained"); !ok {
			return nil, fmt.Errorf("laraq: %s has no chained property to carry a chain (embed laraq.Queueable)", c.class)
		}
	}
	return c, nil
}

// jobClass names a job's class for an error message.
func jobClass(job any) string {
	if c, ok := job.(Command); ok {
		return c.PHPClass()
	}
	return fmt.Sprintf("a %T job", job)
}

func (p *Dispatcher) prepare(c *command, o *options) (*Message, error) {
	now := p.cfg.now()
	class := c.class
	cmd := c.live
	var err error
	// Bus\Dispatcher::dispatchToQueue resolves the connection from the job's property.
	if v, ok := publicValue(cmd, "connection"); ok {
		name, err := phpString(v)
		if err != nil {
			return nil, fmt.Errorf("laraq: %s connection property: %v", class, err)
		}
		if name != "" && name != p.conn.name() && !o.anyConnection {
			return nil, fmt.Errorf("laraq: %s is for queue connection %q, this dispatcher pushes to %q", class, name, p.conn.name())
		}
	}
	m := &Message{Queue: p.conn.queue()}
	// The options decide even where the class has no queue/delay property to carry them.
	switch {
	case o.pushOn != nil:
		m.Queue = *o.pushOn
	case o.queue != nil:
		m.Queue = *o.queue
	default:
		if v, ok := publicValue(cmd, "queue"); ok {
			if m.Queue, err = phpString(v); err != nil {
				return nil, fmt.Errorf("laraq: %s queue property: %v", class, err)
			}
		}
	}
	if m.Queue == "" {
		// getQueue(): 'queues:'.($queue ?: $this->default)
		m.Queue = p.conn.queue()
	}
	var delaySeconds *int64
	var delayVal *phpser.Value
	if o.later != nil {
		delayVal = o.later.prop
	} else if o.delay != nil {
		delayVal = o.delay.prop
	} else if v, ok := publicValue(cmd, "delay"); ok {
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
	m.ID, m.UUID = p.cfg.newID(), p.cfg.newUUID()
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
	intField("maxExceptions", md.maxExceptions, &j.MaxExceptions)
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

// findProp returns the index of the property with this plain name.
func findProp(cmd *phpser.Value, name string) (int, bool) {
	for i, e := range cmd.Entries() {
		if e.Key.IsInt() {
			continue
		}
		if n, _, _ := e.Key.Name(); n == name {
			return i, true
		}
	}
	return -1, false
}

// setProp returns a copy of the object with the property name set to val, keeping its
// position and visibility; an object without that property is returned unchanged
// (PHP's onQueue() and delay() exist only on classes that use Queueable).
func setProp(cmd *phpser.Value, name string, val *phpser.Value) *phpser.Value {
	i, ok := findProp(cmd, name)
	if !ok {
		return cmd
	}
	ents := append([]phpser.Entry(nil), cmd.Entries()...)
	ents[i].Value = *val
	return phpser.NewObject(cmd.Class(), ents...)
}

// Enqueue pushes a prepared message: RPUSH to the ready list with its notify token, or
// ZADD to :delayed with score AvailableAt.
func (p *Dispatcher) Enqueue(ctx context.Context, m *Message) error {
	if p.hz != nil {
		return p.enqueueHorizon(ctx, m)
	}
	var err error
	if m.Delayed {
		err = p.rdb.Later(ctx, m.Queue, m.AvailableAt, m.Payload)
	} else {
		err = p.rdb.Push(ctx, m.Queue, m.Payload)
	}
	if err != nil {
		return fmt.Errorf("laraq: pushing to queue %s: %w", m.Queue, err)
	}
	return nil
}

// enqueueOnce is Enqueue made safe to retry (rdb.PushOnce): a chain's next job, pushed
// again after an error whose outcome is unknown, is not made ready twice. A delayed job
// is a ZADD, which a repetition only repeats.
func (p *Dispatcher) enqueueOnce(ctx context.Context, m *Message, keep time.Duration) error {
	if p.hz != nil {
		return p.enqueueOnceHorizon(ctx, m, keep)
	}
	if m.Delayed {
		return p.Enqueue(ctx, m)
	}
	if _, err := p.rdb.PushOnce(ctx, m.Queue, m.Payload, m.ID, keep); err != nil {
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
func (p *Dispatcher) DispatchBulk(ctx context.Context, jobs []any, opts ...DispatchOption) (ids []string, err error) {
	o, err := collect(opts)
	if err != nil {
		return nil, err
	}
	msgs := make([]*Message, len(jobs))
	for i, job := range jobs {
		jo := o.forJob(job)
		cmd, err := p.command(job, jo)
		if err == nil {
			msgs[i], err = p.prepare(cmd, jo)
		}
		if err != nil {
			return nil, fmt.Errorf("jobs[%d]: %w", i, err)
		}
		p.forHorizon(msgs[i], job, o)
	}
	if p.hz != nil {
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
		if err := p.rdb.PushBulk(ctx, q, payloads); err != nil {
			return ids, fmt.Errorf("laraq: pushing %d jobs to queue %s: %w", len(idx), q, err)
		}
		for _, i := range idx {
			ids[i] = msgs[i].ID
		}
	}
	if len(delayed) > 0 {
		_, err := p.rdb.Client().Pipelined(ctx, func(pipe redis.Pipeliner) error {
			for _, i := range delayed {
				m := msgs[i]
				pipe.ZAdd(ctx, p.rdb.Keys(m.Queue).Delayed, redis.Z{Score: float64(m.AvailableAt), Member: m.Payload})
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
func (p *Dispatcher) DispatchString(ctx context.Context, job string, data any, opts ...DispatchOption) (string, error) {
	o, err := collect(opts)
	if err != nil {
		return "", err
	}
	if o.chain != nil {
		return "", errors.New("laraq: a string job cannot carry a chain")
	}
	if o.connection != nil && *o.connection != p.conn.name() {
		return "", fmt.Errorf("laraq: job is for queue connection %q, this dispatcher pushes to %q", *o.connection, p.conn.name())
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
	now := p.cfg.now()
	m := &Message{Queue: p.conn.queue(), ID: p.cfg.newID(), UUID: p.cfg.newUUID()}
	if p.release().Shape().NoUUID {
		m.UUID = "" // 5.8–6.x payloads have none
	}
	if o.queue != nil {
		m.Queue = *o.queue
	}
	if o.pushOn != nil {
		m.Queue = *o.pushOn
	}
	if m.Queue == "" {
		m.Queue = p.conn.queue()
	}
	sopts := []payload.StringOption{payload.WithID(m.ID), payload.WithUUID(m.UUID), payload.WithShape(p.release().Shape()), payload.WithCreatedAt(now.Unix())}
	d := o.later
	if d == nil {
		d = o.delay
	}
	if d != nil {
		at, secs, err := availableAt(d.prop, now)
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
		queue = p.conn.queue()
	}
	if p.hz != nil {
		return p.pushRawHorizon(ctx, queue, raw)
	}
	if err := p.rdb.Push(ctx, queue, raw); err != nil {
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
