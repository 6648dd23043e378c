package laraq

import (
	"context"
	"runtime/metrics"
	"time"

	"github.com/laraq/laraq/internal/rdb"
)

// loop takes jobs until it should stop and returns why (nil: ctx cancelled).
func (c *Worker) loop(r *run) error {
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
		if isAuthError(err) {
			// A wrong password does not get better by retrying: stop, naming the server.
			c.giveBack(r, n)
			r.redisCall(r.ctx, err)
			c.beat(r)
			return authError(c.conn.Client, err)
		}
		if err != nil {
			redisFails++
			c.giveBack(r, n)
			r.redisCall(r.ctx, err)
			c.beat(r)
			d := retryDelay(redisFails)
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
func (c *Worker) takeSlots(r *run) (n int, reason error) {
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
func (c *Worker) giveBack(r *run, n int) {
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
func (c *Worker) heartbeat(ctx context.Context, r *run) {
	if time.Since(r.redisAt) >= heartbeatInterval {
		pctx, cancel := context.WithTimeout(ctx, heartbeatInterval)
		err := c.rdb.Client().Ping(pctx).Err()
		cancel()
		if err == nil && rdb.IsOutOfMemory(r.redisErr) {
			err = r.redisErr // a PING writes nothing: Redis refuses pops until one succeeds
		}
		r.redisCall(ctx, err)
	}
	c.beat(r)
}

// beat emits EventLoop with what the loop last learnt of Redis.
func (c *Worker) beat(r *run) {
	c.emit(Event{Kind: EventLoop, Err: r.redisErr})
}

// checkStop evaluates the stop conditions PHP's stopIfNecessary checks after every
// loop, with the Redis reads throttled to SignalInterval.
func (c *Worker) checkStop(r *run) error {
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
	if c.s.cacheDisabled || now.Before(r.nextSignals) {
		return nil
	}
	r.nextSignals = now.Add(c.s.SignalInterval)
	cache := c.cache
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
	all, paused, err := cache.Paused(r.ctx, c.s.connection, c.s.Queues)
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
//
// Every pop carries a ticket (rdb.PopTicket). When a pop fails, its reply may have been
// lost after Redis reserved jobs: the next fetch asks again with the same ticket before
// anything else (see settlePop), so those jobs are run or handed back, never left
// reserved with nobody to run them.
func (c *Worker) fetch(r *run, n int) (got int, active string, err error) {
	if r.pending != nil {
		return c.settlePop(r.ctx, r, n)
	}
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
		sent := time.Now()
		jobs, err := c.rdb.PopTicket(r.ctx, q, now+c.s.retryAfter, n, c.ticket(r))
		if err != nil {
			if rdb.IsOutOfMemory(err) {
				// Redis refused the pop (maxmemory, noeviction): it reserved nothing and
				// there is no reply to ask for again.
				return 0, active, err
			}
			r.pending = &pendingPop{queue: q, max: n, expires: c.expiresAt(sent)}
			if r.ctx.Err() != nil {
				return 0, active, nil
			}
			return 0, active, err
		}
		r.popSeq++
		if len(jobs) == 0 {
			continue
		}
		c.start(r, q, jobs, c.expiresAt(sent))
		return len(jobs), active, nil
	}
	return 0, active, nil
}

// pendingPop is a pop whose reply never arrived: Redis may have reserved jobs for it.
type pendingPop struct {
	queue   string
	max     int
	expires time.Time // when the reservations it may have made expire, at the earliest
}

// ticket is the ticket of the run's next pop.
func (c *Worker) ticket(r *run) rdb.Ticket {
	// The reply must outlive every retry of the worker; past the reservation's expiry
	// its jobs belong to whichever worker migrates them anyway.
	return rdb.Ticket{Owner: r.owner, Seq: r.popSeq, Keep: max(2*c.reservation(), time.Minute)}
}

// reservation is how long a reservation lasts (retry_after).
func (c *Worker) reservation() time.Duration { return time.Duration(c.s.retryAfter) * time.Second }

// expiresAt is when a reservation made at t expires, on the wall clock: the score is
// whole seconds, so it can end up to a second less than retry_after after t.
func (c *Worker) expiresAt(t time.Time) time.Time {
	return t.Truncate(time.Second).Add(c.reservation())
}

// settlePop asks again, with the same ticket, for the jobs of the pop whose reply was
// lost, and runs up to n of them. Jobs it cannot run now — more than n, the worker is
// stopping or the queue paused, or so little of the reservation is left that another
// worker may take the job while this one starts it — are handed back to the head of
// their queue with their attempt unspent (rdb.Unreserve), as if never popped.
func (c *Worker) settlePop(ctx context.Context, r *run, n int) (got int, active string, err error) {
	p := r.pending
	jobs, err := c.rdb.PopTicket(ctx, p.queue, c.s.Now().Unix()+c.s.retryAfter, p.max, c.ticket(r))
	if err != nil {
		return 0, p.queue, err
	}
	r.pending = nil
	r.popSeq++
	if len(jobs) == 0 {
		return 0, p.queue, nil
	}
	run := n
	if r.ctx.Err() != nil || r.paused[p.queue] || c.paused.Load() || time.Until(p.expires) < settleMargin {
		run = 0
	}
	run = min(run, len(jobs))
	c.log.Warn("a pop's reply was lost; asked Redis again for the jobs it reserved",
		"queue", p.queue, "jobs", len(jobs), "running", run, "handed_back", len(jobs)-run)
	for _, j := range jobs[run:] {
		c.handBack(r, p.queue, j)
	}
	c.start(r, p.queue, jobs[:run], p.expires)
	return run, p.queue, nil
}

func (c *Worker) logInvalid(q string, e *rdb.InvalidJobError) {
	c.log.Error("payload cannot be reserved; moved to the invalid list (a PHP worker would have lost it)",
		"queue", q, "key", e.Key, "reason", e.Reason)
}

// settleAtStop settles a pop whose reply was lost after the loop stopped: its jobs are
// handed back, retrying until Redis answers, the reservation expires or the shutdown
// grace ends.
func (c *Worker) settleAtStop(r *run) {
	defer r.wg.Done()
	p := r.pending
	for n := 1; ; n++ {
		_, _, err := c.settlePop(r.ackCtx, r, 0)
		if err == nil {
			return
		}
		d := retryDelay(n)
		if r.ackCtx.Err() != nil || isAuthError(err) || !time.Now().Add(d).Before(p.expires) {
			c.log.Error("a pop's reply was lost and Redis did not answer again before the worker stopped; its jobs, if any, stay reserved until retry_after",
				"queue", p.queue, "err", err)
			return
		}
		c.log.Warn("asking Redis again for the jobs of a lost pop failed; retrying", "queue", p.queue, "err", err, "retry_in", d)
		c.sleep(r.ackCtx, d)
	}
}

// settleMargin is the least reservation time a settled job must have left to be run.
const settleMargin = 5 * time.Second

// start runs popped jobs, one goroutine each.
func (c *Worker) start(r *run, q string, jobs []rdb.PoppedJob, expires time.Time) {
	for _, p := range jobs {
		r.wg.Add(1)
		go c.work(r, q, p, expires)
	}
}

// handBack returns a job this worker popped but will not run to the head of its queue,
// its attempt unspent. A payload the pop moved to the invalid list stays there.
func (c *Worker) handBack(r *run, q string, p rdb.PoppedJob) {
	if p.Invalid != nil {
		c.logInvalid(q, p.Invalid)
		return
	}
	back, err := c.rdb.Unreserve(r.ackCtx, q, p.Job, p.Reserved)
	switch {
	case err != nil:
		c.log.Error("handing back a job this worker will not run failed; it stays reserved until retry_after",
			"queue", q, "err", err)
	case !back:
		c.log.Warn("a job to hand back was no longer reserved; it is already back in the queue", "queue", q)
	}
}

// migrate moves due delayed jobs, then expired reservations, of queue q to its ready
// list, at most once per MigrateInterval.
func (c *Worker) migrate(r *run, q string) error {
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
		moved, err := c.migrateExpired(r.ctx, from, q, now)
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
func (c *Worker) idle(r *run, active string) {
	if c.s.blockFor == nil || active == "" {
		d := c.s.Sleep
		if active == "" {
			// Every queue is paused or left alone: look again soon.
			d = min(c.pauseSleep(), c.s.unhandledDelay)
		}
		c.wait(r, d)
		return
	}
	wait := *c.s.blockFor
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
func (c *Worker) pauseSleep() time.Duration {
	if c.s.Sleep > 0 {
		return min(c.s.Sleep, c.s.SignalInterval)
	}
	return time.Second
}

// sleep waits for d, ctx or a nudge; it reports whether d passed.
func (c *Worker) sleep(ctx context.Context, d time.Duration) bool {
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
func (c *Worker) wait(r *run, d time.Duration) {
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
