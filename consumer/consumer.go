package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/producer"
	"github.com/redis/go-redis/v9"
)

// Reasons Run returns when the worker stopped by itself. Each lets in-flight jobs finish
// first. `laraq work` exits 0 for all but ErrMemoryLimit (12), as queue:work does.
var (
	// ErrRestart: the queue:restart signal changed (`php artisan queue:restart`).
	ErrRestart = errors.New("consumer: queue restart signal received")
	// ErrMaxJobs: MaxJobs jobs were taken.
	ErrMaxJobs = errors.New("consumer: maximum number of jobs reached")
	// ErrMaxTime: the worker ran for MaxTime.
	ErrMaxTime = errors.New("consumer: maximum run time reached")
	// ErrQueueEmpty: StopWhenEmpty and every queue was empty.
	ErrQueueEmpty = errors.New("consumer: queues are empty")
	// ErrMemoryLimit: the process used more than MemoryLimit.
	ErrMemoryLimit = errors.New("consumer: memory limit exceeded")
)

// errRunning is returned by a second concurrent Run.
var errRunning = errors.New("consumer: Run is already running")

const (
	// abandonWait is how long a job whose context was cancelled (timeout or hard stop)
	// may take to return before the worker stops waiting for it.
	abandonWait = time.Second
	// ackBudget bounds how long one acknowledgement (delete, release, failed record)
	// is retried while Redis or the database is unreachable.
	ackBudget = 30 * time.Second
	// retryMin and retryMax bound the backoff between attempts of a failing Redis call.
	retryMin = 100 * time.Millisecond
	retryMax = 5 * time.Second
	// memoryCheckInterval throttles MemoryLimit checks.
	memoryCheckInterval = time.Second
	// heartbeatInterval is the longest the loop goes without an EventLoop: while it
	// waits for a slot, sleeps or drains, it wakes this often, pings Redis when it has
	// not called it for as long, and reports.
	heartbeatInterval = 2 * time.Second
)

// Consumer is a Go queue worker that shares Laravel's Redis queues with PHP workers.
// Its methods are safe for concurrent use.
type Consumer struct {
	s     settings
	rdb   *rdb.RDB
	acks  *acks
	chain *producer.Producer // dispatches the next job of a chain
	log   *slog.Logger

	running atomic.Bool
	paused  atomic.Bool
	wake    chan struct{} // Resume and freed slots nudge a sleeping loop

	abandoned atomic.Int64 // handlers still running after their job was given up on
	nullStore bool         // no failed store was configured
}

// New returns a Consumer working client's Laravel queues. client stays owned by the
// caller and is never closed by the Consumer.
//
// The Consumer uses up to Concurrency + 2 connections of client's pool at once: one per
// running job (acknowledgements), one for popping and blocking, one for signals. New logs
// a warning when the pool is smaller; set redis.Options.PoolSize accordingly (go-redis
// defaults to 10 per CPU).
func New(client redis.UniversalClient, cfg Config) (*Consumer, error) {
	if client == nil {
		return nil, errors.New("consumer: nil redis client")
	}
	s, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	nullStore := s.Failed == nil
	if nullStore {
		s.Failed = failed.NewNull()
		if s.Unhandled.Action == FailUnhandled {
			// Failing into a store that keeps nothing would delete the job.
			s.Unhandled.Action = ReleaseUnhandled
		}
	}
	opts := rdb.Options{Prefix: s.Prefix, ClusterHashTags: s.ClusterHashTags}
	if !s.Cache.Disabled {
		redisPrefix := s.Prefix
		if s.Cache.RedisPrefix != nil {
			redisPrefix = *s.Cache.RedisPrefix
		}
		opts.Cache = rdb.CacheOptions{
			Client: s.Cache.Client,
			Keys:   rdb.CacheKeys{RedisPrefix: redisPrefix, Prefix: s.Cache.Prefix, Separator: s.Cache.Separator},
		}
		for _, a := range s.Cache.AlsoWatch {
			k := rdb.CacheKeys{RedisPrefix: redisPrefix, Prefix: a.Prefix, Separator: a.Separator}
			if a.RedisPrefix != nil {
				k.RedisPrefix = *a.RedisPrefix
			}
			opts.Cache.AlsoWatch = append(opts.Cache.AlsoWatch, k)
		}
	}
	r, err := rdb.New(client, opts)
	if err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	chain, err := producer.New(client, producer.Config{
		Prefix: s.Prefix, Connection: s.Connection, DefaultQueue: s.DefaultQueue,
		Version: s.Laravel.PayloadVersion(), Now: s.Now, ClusterHashTags: s.ClusterHashTags,
	})
	if err != nil {
		return nil, fmt.Errorf("consumer: %w", err)
	}
	c := &Consumer{s: s, rdb: r, acks: newAcks(r), chain: chain, log: s.Logger, wake: make(chan struct{}, 1), nullStore: nullStore}
	if size, ok := poolSize(client); ok && size < s.Concurrency+2 {
		c.log.Warn("redis pool smaller than the worker needs; jobs will wait for connections",
			"pool_size", size, "needed", s.Concurrency+2, "concurrency", s.Concurrency)
	}
	return c, nil
}

// poolSize reads the connection pool size of the clients go-redis makes.
func poolSize(c redis.UniversalClient) (int, bool) {
	switch cl := c.(type) {
	case *redis.Client:
		return cl.Options().PoolSize, true
	case *redis.ClusterClient:
		return cl.Options().PoolSize, true
	case *redis.Ring:
		return cl.Options().PoolSize, true
	}
	return 0, false
}

// Pause stops taking new jobs until Resume (SIGUSR2 for `php artisan queue:work`).
// Running jobs go on; the worker still stops on restart signals and cancellation.
func (c *Consumer) Pause() { c.paused.Store(true) }

// Resume takes jobs again after Pause (SIGCONT).
func (c *Consumer) Resume() {
	c.paused.Store(false)
	c.nudge()
}

// Paused reports whether Pause is in effect.
func (c *Consumer) Paused() bool { return c.paused.Load() }

func (c *Consumer) nudge() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// run is the state of one Run call.
type run struct {
	ctx     context.Context // Run's ctx: cancelled = stop popping
	hardCtx context.Context // parent of handler contexts: cancelled after the grace
	ackCtx  context.Context // Redis/DB calls that must happen even while stopping

	slots chan struct{} // one token per free concurrency slot
	wg    sync.WaitGroup

	start       time.Time
	taken       int
	restart     int64
	restartSeen bool
	nextSignals time.Time
	nextMemory  time.Time
	paused      map[string]bool // queue:pause flags, refreshed with the signals
	woken       bool            // the last idle wait ended with a notify token
	redisErr    error           // the loop's last Redis call's error, for EventLoop
	redisAt     time.Time       // when the loop last called Redis (wall clock)

	mu           sync.Mutex
	migratedAt   map[string]time.Time
	handBackTill map[string]time.Time
}

// Run works the queues until ctx is cancelled (then returns nil) or a stop condition
// is met (ErrRestart, ErrMaxJobs, ErrMaxTime, ErrQueueEmpty, ErrMemoryLimit). Either
// way no new job is taken and jobs in flight are given time to finish: all the time
// they need after a stop condition, ShutdownGrace after cancellation. A job still
// running after that stays reserved and comes back to a worker after RetryAfter; none
// is lost.
//
// Redis errors never end Run: they are logged and the call is retried with backoff.
func (c *Consumer) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer c.running.Store(false)

	hardCtx, hardCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer hardCancel()
	r := &run{
		ctx:          ctx,
		hardCtx:      hardCtx,
		ackCtx:       context.WithoutCancel(ctx),
		slots:        make(chan struct{}, c.s.Concurrency),
		start:        c.s.Now(),
		paused:       map[string]bool{},
		migratedAt:   map[string]time.Time{},
		handBackTill: map[string]time.Time{},
	}
	for range c.s.Concurrency {
		r.slots <- struct{}{}
	}
	stopAcks := c.acks.start(r.ackCtx)
	defer stopAcks()
	if !c.s.Cache.Disabled {
		// The value at start is the reference; a read error leaves "unknown", and the
		// first successful read becomes the reference instead.
		ts, ok, err := c.rdb.Cache().RestartTimestamp(ctx)
		r.redisCall(ctx, err)
		if err == nil {
			r.restart, r.restartSeen = ts, ok
		} else {
			c.log.Warn("reading the queue restart signal", "err", err)
			r.restart = -1
		}
	}
	c.log.Info("worker started", "queues", c.s.Queues, "connection", c.s.Connection, "concurrency", c.s.Concurrency)

	reason := c.loop(r)

	// In-flight jobs finish first. After a stop condition they get all the time they
	// need; once ctx is cancelled (now or later) they get ShutdownGrace. The heartbeat
	// goes on meanwhile: a worker draining long jobs is alive.
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	var grace <-chan time.Time
	if ctx.Err() != nil {
		grace = c.graceTimer()
	}
	beat := time.NewTicker(heartbeatInterval)
	defer beat.Stop()
	ctxDone := ctx.Done()
wait:
	for {
		select {
		case <-done:
			c.log.Info("worker stopped", "reason", stopReason(reason))
			return reason
		case <-ctxDone:
			ctxDone = nil
			if grace == nil {
				grace = c.graceTimer()
			}
		case <-beat.C:
			c.heartbeat(r.ackCtx, r)
		case <-grace:
			break wait
		}
	}
	// Handlers still running are told to stop; each job gets abandonWait to return
	// (its outcome is then recorded) before it is left reserved.
	hardCancel()
	select {
	case <-done:
	case <-time.After(abandonWait + ackBudget):
	}
	if n := c.abandoned.Load(); n > 0 {
		c.log.Warn("worker stopped with jobs still running; they stay reserved until retry_after", "jobs", n)
	}
	c.log.Info("worker stopped", "reason", stopReason(reason))
	return reason
}

func stopReason(err error) string {
	if err == nil {
		return "context cancelled"
	}
	return err.Error()
}

func (c *Consumer) graceTimer() <-chan time.Time {
	if c.s.ShutdownGrace < 0 {
		ch := make(chan time.Time, 1)
		ch <- time.Time{}
		return ch
	}
	return time.After(c.s.ShutdownGrace)
}

// loop takes jobs until it should stop and returns why (nil: ctx cancelled).
func (c *Consumer) loop(r *run) error {
	var redisFails int
	for {
		c.heartbeat(r.ctx, r)
		if r.ctx.Err() != nil {
			return nil
		}
		n, err := c.takeSlots(r)
		if n == 0 {
			return err
		}
		// Every stop condition is looked at between taking the slots and popping: the
		// wait for a slot may have lasted as long as the job that freed it, and PHP
		// checks them after each job, before it pops the next. Nothing is popped after
		// a stop condition was seen, and nothing a paused worker would not take.
		if r.ctx.Err() != nil {
			c.giveBack(r, n)
			return nil
		}
		if err := c.checkStop(r); err != nil {
			c.giveBack(r, n)
			return err
		}
		if c.paused.Load() {
			c.giveBack(r, n)
			c.wait(r, c.pauseSleep())
			continue
		}
		// MaxJobs counts every job popped, also those still running: never pop more
		// than the jobs left, whatever the number of free slots.
		if c.s.MaxJobs > 0 && n > c.s.MaxJobs-r.taken {
			c.giveBack(r, n-(c.s.MaxJobs-r.taken))
			n = c.s.MaxJobs - r.taken
		}

		got, active, err := c.fetch(r, n)
		if err != nil {
			redisFails++
			c.giveBack(r, n)
			r.redisCall(r.ctx, err)
			c.beat(r)
			d := backoff(redisFails)
			c.log.Error("taking jobs from redis failed; retrying", "err", err, "retry_in", d, "failures", redisFails)
			c.wait(r, d)
			continue
		}
		if active != "" {
			r.redisCall(r.ctx, nil)
		}
		redisFails = 0
		if got > 0 {
			r.taken += got
			c.giveBack(r, n-got)
			continue
		}
		c.giveBack(r, n)
		if c.s.StopWhenEmpty {
			return ErrQueueEmpty
		}
		c.idle(r, active)
	}
}

// takeSlots waits for a free slot, then takes every other free one, and returns how
// many it took: nothing is popped that no slot can run at once. While every slot is
// busy it keeps the heartbeat going and checks the stop conditions; n == 0 means the
// loop must stop, for reason (nil: ctx was cancelled).
func (c *Consumer) takeSlots(r *run) (n int, reason error) {
	select {
	case <-r.slots:
	default:
		t := time.NewTicker(heartbeatInterval)
		defer t.Stop()
	wait:
		for {
			select {
			case <-r.ctx.Done():
				return 0, nil
			case <-r.slots:
				break wait
			case <-t.C:
				c.heartbeat(r.ctx, r)
				if err := c.checkStop(r); err != nil {
					return 0, err
				}
			}
		}
	}
	n = 1
	for n < cap(r.slots) {
		select {
		case <-r.slots:
			n++
		default:
			return n, nil
		}
	}
	return n, nil
}

// giveBack returns n unused slot tokens.
func (c *Consumer) giveBack(r *run, n int) {
	for range n {
		r.slots <- struct{}{}
	}
}

// redisCall records the outcome of a Redis call of the loop for EventLoop. An error
// while ctx (the call's parent context) is cancelled says nothing about Redis.
func (r *run) redisCall(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	r.redisErr = err
	r.redisAt = time.Now()
}

// heartbeat emits EventLoop, first pinging Redis when the loop has not called it for
// heartbeatInterval (it was waiting for a slot, sleeping or draining), so that the
// event says whether Redis answers now.
func (c *Consumer) heartbeat(ctx context.Context, r *run) {
	if time.Since(r.redisAt) >= heartbeatInterval {
		pctx, cancel := context.WithTimeout(ctx, heartbeatInterval)
		err := c.rdb.Client().Ping(pctx).Err()
		cancel()
		r.redisCall(ctx, err)
	}
	c.beat(r)
}

// beat emits EventLoop with what the loop last learnt of Redis.
func (c *Consumer) beat(r *run) {
	c.emit(Event{Kind: EventLoop, Err: r.redisErr})
}

// checkStop evaluates the stop conditions PHP's stopIfNecessary checks after every
// loop, with the Redis reads throttled to SignalInterval.
func (c *Consumer) checkStop(r *run) error {
	now := time.Now()
	if c.s.MaxJobs > 0 && r.taken >= c.s.MaxJobs {
		return ErrMaxJobs
	}
	if c.s.MaxTime > 0 && c.s.Now().Sub(r.start) >= c.s.MaxTime {
		return ErrMaxTime
	}
	if c.s.MemoryLimit > 0 && !now.Before(r.nextMemory) {
		r.nextMemory = now.Add(memoryCheckInterval)
		if used := memoryInUse(); used >= uint64(c.s.MemoryLimit) {
			c.log.Warn("memory limit reached", "bytes", used, "limit", c.s.MemoryLimit)
			return ErrMemoryLimit
		}
	}
	if c.s.Cache.Disabled || now.Before(r.nextSignals) {
		return nil
	}
	r.nextSignals = now.Add(c.s.SignalInterval)
	cache := c.rdb.Cache()
	ts, ok, err := cache.RestartTimestamp(r.ctx)
	r.redisCall(r.ctx, err)
	switch {
	case err != nil:
		if r.ctx.Err() == nil {
			c.log.Warn("reading the queue restart signal", "err", err)
		}
	case r.restart == -1:
		r.restart, r.restartSeen = ts, ok
	case ok != r.restartSeen || ts != r.restart:
		c.log.Info("queue restart signal received", "timestamp", ts)
		return ErrRestart
	}
	all, paused, err := cache.Paused(r.ctx, c.s.Connection, c.s.Queues)
	r.redisCall(r.ctx, err)
	if err != nil {
		if r.ctx.Err() == nil {
			c.log.Warn("reading the queue pause flags", "err", err)
		}
		return nil
	}
	for i, q := range c.s.Queues {
		p := all || paused[i]
		if p != r.paused[q] {
			c.log.Info("queue pause flag changed", "queue", q, "paused", p)
		}
		r.paused[q] = p
	}
	return nil
}

// memoryInUse is the memory the Go runtime holds from the OS and has not returned, the
// counterpart of PHP's memory_get_usage(true).
func memoryInUse() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 || s[1].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64() - s[1].Value.Uint64()
}

// fetch pops up to n jobs from the first queue that has any, migrating due jobs first
// where the throttle allows, and starts them. It returns how many it started and the
// first queue that was neither paused nor left alone (the one to block on).
func (c *Consumer) fetch(r *run, n int) (got int, active string, err error) {
	defer func() { r.woken = false }()
	wall := time.Now()
	for _, q := range c.s.Queues {
		if r.paused[q] {
			continue
		}
		r.mu.Lock()
		till := r.handBackTill[q]
		r.mu.Unlock()
		if wall.Before(till) {
			continue
		}
		if active == "" {
			active = q
		}
		if !r.woken {
			if err := c.migrate(r, q); err != nil {
				return 0, active, err
			}
		}
		now := c.s.Now().Unix()
		jobs, err := c.rdb.PopMany(r.ctx, q, now+c.s.retryAfter, n)
		if err != nil {
			if r.ctx.Err() != nil {
				return 0, active, nil
			}
			return 0, active, err
		}
		if len(jobs) == 0 {
			continue
		}
		for _, p := range jobs {
			r.wg.Add(1)
			go c.work(r, q, p)
		}
		return len(jobs), active, nil
	}
	return 0, active, nil
}

// migrate moves due delayed jobs, then expired reservations, of queue q to its ready
// list, at most once per MigrateInterval.
func (c *Consumer) migrate(r *run, q string) error {
	wall := time.Now()
	if c.s.MigrateInterval > 0 {
		r.mu.Lock()
		last, seen := r.migratedAt[q]
		r.mu.Unlock()
		if seen && wall.Sub(last) < c.s.MigrateInterval {
			return nil
		}
	}
	now := c.s.Now().Unix()
	for _, from := range []rdb.Zset{rdb.Delayed, rdb.Reserved} {
		moved, err := c.rdb.MigrateExpired(r.ctx, from, q, now, c.s.migrationLimit)
		if err != nil {
			if r.ctx.Err() != nil {
				return nil
			}
			return err
		}
		if moved > 0 {
			c.emit(Event{Kind: EventMigrated, Queue: q, Count: int(moved), From: from.String()})
			if from == rdb.Reserved {
				c.log.Info("expired reservations moved back to the queue", "queue", q, "jobs", moved)
			}
		}
	}
	r.mu.Lock()
	r.migratedAt[q] = wall
	r.mu.Unlock()
	return nil
}

// idle waits after a round in which no queue had a job: on the notify list of the
// first active queue when BlockFor is set, else Sleep.
func (c *Consumer) idle(r *run, active string) {
	if c.s.BlockFor == nil || active == "" {
		d := c.s.Sleep
		if active == "" {
			// Every queue is paused or left alone: look again soon.
			d = min(c.pauseSleep(), c.s.unhandledDelay)
		}
		c.wait(r, d)
		return
	}
	wait := *c.s.BlockFor
	if wait == 0 || wait > rdb.BlockSlice {
		wait = rdb.BlockSlice
	}
	got, err := c.rdb.BlockForNotify(r.ctx, active, wait)
	r.redisCall(r.ctx, err)
	if err != nil && r.ctx.Err() == nil {
		c.log.Warn("waiting for jobs failed", "queue", active, "err", err)
		c.beat(r)
		c.sleep(r.ctx, retryMin)
	}
	// A token means a job was just pushed: pop it at once, as PHP does after BLPOP,
	// without first running a migration that happens to be due.
	r.woken = got
}

// pauseSleep is how long a paused worker waits between checks (PHP: --sleep, or 1 s).
func (c *Consumer) pauseSleep() time.Duration {
	if c.s.Sleep > 0 {
		return min(c.s.Sleep, c.s.SignalInterval)
	}
	return time.Second
}

// sleep waits for d, ctx or a nudge; it reports whether d passed.
func (c *Consumer) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
		return true
	case <-c.wake:
	}
	return false
}

// wait is the loop's sleep: like sleep, with a heartbeat every heartbeatInterval.
func (c *Consumer) wait(r *run, d time.Duration) {
	for d > 0 {
		slice := min(d, heartbeatInterval)
		if !c.sleep(r.ctx, slice) {
			return
		}
		if d -= slice; d > 0 {
			c.heartbeat(r.ctx, r)
		}
	}
}

// backoff is the wait before retry n (1-based) of a failing Redis call.
func backoff(n int) time.Duration {
	d := retryMin
	for i := 1; i < n && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

// retry runs op until it succeeds, ctx ends or ackBudget has passed, backing off
// between attempts; it logs each failure.
func (c *Consumer) retry(ctx context.Context, what string, op func(context.Context) error) error {
	deadline := time.Now().Add(ackBudget)
	for n := 1; ; n++ {
		err := op(ctx)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		d := backoff(n)
		c.log.Warn(what+" failed; retrying", "err", err, "retry_in", d, "attempt", n)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
	}
}

func (c *Consumer) emit(e Event) {
	if c.s.OnEvent == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = c.s.Now()
	}
	if e.Connection == "" {
		e.Connection = c.s.Connection
	}
	c.s.OnEvent(e)
}
