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
func (c *Worker) fetch(r *run, n int) (got int, active string, err error) {
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
