package worker

import (
	"cmp"
	"context"
	"errors"
	"runtime/metrics"
	"sync/atomic"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
)

// The fetch stage: the worker's main loop. It takes free concurrency slots, checks the
// stop conditions queue:work checks after every job (max jobs, max time, memory, the
// restart and pause signals), migrates due delayed jobs and expired reservations,
// pops as many jobs as it has free slots from the first queue that has some (the slots of
// finished jobs whose deletions ride the pop included, see acks.riding), and hands each
// to the processor on a goroutine of its own. When no queue has a job it blocks on
// the notify list (block_for) or sleeps.

const (
	// heartbeatInterval is the longest the loop goes without an EventLoop: while it
	// waits for a slot, sleeps or drains, it wakes this often, pings Redis when it has
	// not called it for as long, and reports.
	heartbeatInterval = 2 * time.Second
	// memoryCheckInterval throttles MemoryLimit checks.
	memoryCheckInterval = time.Second
)

// Reasons Run returns when the worker stopped by itself (laraq re-exports them).
var (
	ErrRestart     = errors.New("laraq: queue restart signal received")
	ErrMaxJobs     = errors.New("laraq: maximum number of jobs reached")
	ErrMaxTime     = errors.New("laraq: maximum run time reached")
	ErrQueueEmpty  = errors.New("laraq: queues are empty")
	ErrMemoryLimit = errors.New("laraq: memory limit exceeded")
)

// fetcher takes jobs from the queues.
type fetcher struct {
	base
	books     *bookkeeping
	acks      *acks // the deletions that ride the pops
	processor *processor
	paused    atomic.Bool // Worker.Pause
}

// fetchRun is the fetch loop's state in one Run.
type fetchRun struct {
	*run

	// ctx is the loop's: cancelled when Run's ctx is, or when the other loop stopped
	// (see fetcher.loops). A pop already sent is not cancelled by it.
	ctx    context.Context
	helper bool // the second loop: only the first emits EventLoop

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
	migratedAt  map[string]time.Time

	owner   string      // names this run's pop tickets
	popSeq  int64       // the sequence number of the next pop's ticket
	pending *pendingPop // a pop whose reply was lost, to settle before the next

	refusals
}

// helperMin is the least concurrency at which a second fetch loop runs beside the first
// (see loops): below it a pop carries too few jobs for two to pay.
const helperMin = 32

// loops runs the fetch loop l and, when finished jobs' deletions ride the pops
// (acks.mayRide) and the worker has helperMin slots or more, the loop helper beside it:
// while one loop waits for its pop's reply or reads it, Redis runs the other's. They
// share the slots, the riders and the stop conditions, each with its own pop tickets;
// the first to stop stops the other's waits, not a pop it sent. It returns the loops
// that ran and the first one's reason to stop (nil: Run's ctx was cancelled).
func (f *fetcher) loops(l, helper *fetchRun) (ran []*fetchRun, reason error) {
	l.ctx = l.run.ctx
	if !f.acks.mayRide || f.cfg.Concurrency < helperMin {
		return []*fetchRun{l}, f.loop(l)
	}
	ctx, stop := context.WithCancel(l.run.ctx)
	defer stop()
	l.ctx, helper.ctx, helper.helper = ctx, ctx, true
	helper.restart, helper.restartSeen = l.restart, l.restartSeen
	var helperReason error
	done := make(chan struct{})
	go func() {
		defer close(done)
		helperReason = f.loop(helper)
		stop()
	}()
	reason = f.loop(l)
	stop()
	<-done
	return []*fetchRun{l, helper}, cmp.Or(reason, helperReason)
}

// loop takes jobs until it should stop and returns why (nil: ctx cancelled).
func (f *fetcher) loop(l *fetchRun) error {
	var redisFails int
	for {
		f.heartbeat(l.ctx, l)
		if l.ctx.Err() != nil {
			return nil
		}
		n, ok, err := f.takeSlots(l)
		if !ok {
			return err
		}
		// Every stop condition is looked at between taking the slots and popping: the
		// wait for a slot may have lasted as long as the job that freed it, and PHP
		// checks them after each job, before it pops the next. Nothing is popped after
		// a stop condition was seen, and nothing a paused worker would not take.
		if l.ctx.Err() != nil {
			f.giveBack(l, n)
			return nil
		}
		if err := f.checkStop(l); err != nil {
			f.giveBack(l, n)
			return err
		}
		if f.paused.Load() {
			f.giveBack(l, n)
			f.wait(l, f.pauseSleep())
			continue
		}
		// The deletions waiting for this pop bring their jobs' slots (acks.riding).
		riders := f.acks.takeRiders()
		for _, r := range riders {
			if r.freed {
				n++
			}
		}
		if n == 0 {
			if len(riders) > 0 {
				f.acks.sendRiding(l.ackCtx, riders, nil)
			}
			continue
		}
		// MaxJobs counts every job popped, also those still running: never pop more
		// than the jobs left, whatever the number of free slots. (No deletion rides
		// with MaxJobs.)
		if f.cfg.MaxJobs > 0 && n > f.cfg.MaxJobs-l.taken {
			f.giveBack(l, n-(f.cfg.MaxJobs-l.taken))
			n = f.cfg.MaxJobs - l.taken
		}

		got, active, kept, err := f.fetch(l, n, riders)
		n -= kept // the slots of deletions that failed stay with their jobs
		if err != nil {
			f.giveBack(l, n)
			l.redisCall(l.ctx, err)
			f.beat(l)
			if stop := f.refused(l, err); stop != nil {
				return stop
			}
			redisFails++
			d := retryDelay(redisFails)
			f.log.Error("taking jobs from redis failed; retrying", "err", err, "retry_in", d, "failures", redisFails)
			f.wait(l, d)
			continue
		}
		if active != "" {
			l.redisCall(l.ctx, nil)
		}
		redisFails, l.failingSince = 0, time.Time{}
		if got > 0 {
			l.taken += got
			f.giveBack(l, n-got)
			continue
		}
		f.giveBack(l, n)
		if f.cfg.StopWhenEmpty {
			// A skipped queue is not known to be empty.
			if err := f.skippedError(l); err != nil {
				return err
			}
			return ErrQueueEmpty
		}
		if err := f.idle(l, active); err != nil {
			return err
		}
	}
}

// takeSlots waits for a free slot, or for finished jobs' deletions that wait for a pop
// and bring their slots (acks.riding), then takes every other free slot, and returns
// how many it took: nothing is popped that no slot can run at once. While every slot is
// busy it keeps the heartbeat going and checks the stop conditions; !ok means the loop
// must stop, for reason (nil: ctx was cancelled).
func (f *fetcher) takeSlots(l *fetchRun) (n int, ok bool, reason error) {
	select {
	case <-l.slots:
		n = 1
	case <-f.acks.rode:
	default:
		t := time.NewTicker(heartbeatInterval)
		defer t.Stop()
	wait:
		for {
			select {
			case <-l.ctx.Done():
				return 0, false, nil
			case <-l.slots:
				n = 1
				break wait
			case <-f.acks.rode:
				break wait
			case <-t.C:
				f.heartbeat(l.ctx, l)
				if err := f.checkStop(l); err != nil {
					return 0, false, err
				}
			}
		}
	}
	for n < cap(l.slots) {
		select {
		case <-l.slots:
			n++
		default:
			return n, true, nil
		}
	}
	return n, true, nil
}

// giveBack returns n unused slot tokens.
func (f *fetcher) giveBack(l *fetchRun, n int) {
	for range n {
		l.slots <- struct{}{}
	}
}

// redisCall records the outcome of a Redis call of the loop for EventLoop. An error
// while ctx (the call's parent context) is cancelled says nothing about Redis.
func (l *fetchRun) redisCall(ctx context.Context, err error) {
	if ctx.Err() != nil {
		return
	}
	l.redisErr = err
	l.redisAt = time.Now()
}

// heartbeat emits EventLoop, first pinging Redis when the loop has not called it for
// heartbeatInterval (it was waiting for a slot, sleeping or draining), so that the
// event says whether Redis answers now.
func (f *fetcher) heartbeat(ctx context.Context, l *fetchRun) {
	if l.helper {
		return
	}
	if time.Since(l.redisAt) >= heartbeatInterval {
		pctx, cancel := context.WithTimeout(ctx, heartbeatInterval)
		err := f.cfg.RDB.Client().Ping(pctx).Err()
		cancel()
		if err == nil && rdb.RefusesPops(l.redisErr) {
			err = l.redisErr // a PING writes nothing: Redis refuses pops until one succeeds
		}
		l.redisCall(ctx, err)
	}
	f.beat(l)
}

// beat emits EventLoop with what the loop last learnt of Redis, or, while Redis answers
// but every queue is skipped, why no job can be taken.
func (f *fetcher) beat(l *fetchRun) {
	if l.helper {
		return
	}
	err := l.redisErr
	if err == nil {
		err = f.unworkable(l)
	}
	f.emit(job.Event{Kind: job.EventLoop, Err: err})
}

// checkStop evaluates the stop conditions PHP's stopIfNecessary checks after every
// loop, with the Redis reads throttled to SignalInterval.
func (f *fetcher) checkStop(l *fetchRun) error {
	now := time.Now()
	if f.cfg.MaxJobs > 0 && l.taken >= f.cfg.MaxJobs {
		return ErrMaxJobs
	}
	if f.cfg.MaxTime > 0 && f.cfg.Now().Sub(l.start) >= f.cfg.MaxTime {
		return ErrMaxTime
	}
	if f.cfg.MemoryLimit > 0 && !now.Before(l.nextMemory) {
		l.nextMemory = now.Add(memoryCheckInterval)
		if used := memoryInUse(); used >= uint64(f.cfg.MemoryLimit) {
			f.log.Warn("memory limit reached", "bytes", used, "limit", f.cfg.MemoryLimit)
			return ErrMemoryLimit
		}
	}
	if f.cfg.CacheDisabled || now.Before(l.nextSignals) {
		return nil
	}
	l.nextSignals = now.Add(f.cfg.SignalInterval)
	cache := f.cfg.Signals
	ts, ok, err := cache.RestartTimestamp(l.ctx)
	l.redisCall(l.ctx, err)
	switch {
	case err != nil:
		if stop := refusedSignal(err); stop != nil {
			return stop
		}
		if l.ctx.Err() == nil {
			f.log.Warn("reading the queue restart signal", "err", err)
		}
	case l.restart == -1:
		l.restart, l.restartSeen = ts, ok
	case ok != l.restartSeen || ts != l.restart:
		f.log.Info("queue restart signal received", "timestamp", ts)
		return ErrRestart
	}
	all, paused, err := cache.Paused(l.ctx, f.cfg.Connection, f.cfg.Queues)
	l.redisCall(l.ctx, err)
	if err != nil {
		if stop := refusedSignal(err); stop != nil {
			return stop
		}
		if l.ctx.Err() == nil {
			f.log.Warn("reading the queue pause flags", "err", err)
		}
		return nil
	}
	for i, q := range f.cfg.Queues {
		p := all || paused[i]
		if p != l.paused[q] {
			f.log.Info("queue pause flag changed", "queue", q, "paused", p)
		}
		l.paused[q] = p
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
//
// riders are finished jobs' deletions to send before the first pop, in its pipeline, or
// on their own when no pop is sent; kept is how many of them failed (their slots stay
// with their jobs: n counted them).
func (f *fetcher) fetch(l *fetchRun, n int, riders []*deleteReq) (got int, active string, kept int, err error) {
	defer func() {
		if riders != nil {
			kept += f.acks.sendRiding(l.ackCtx, riders, nil)
		}
	}()
	if p := l.pending; p != nil {
		got, active, err = f.settlePop(l.ctx, l, n)
		if f.skip(l, p.queue, err) {
			// The jobs it may have reserved come back after retry_after.
			l.pending = nil
			return 0, "", 0, nil
		}
		return got, active, 0, err
	}
	defer func() { l.woken = false }()
	popKept := 0
	wall := time.Now()
	for _, q := range f.cfg.Queues {
		if l.paused[q] || l.leftAlone(q, wall) || l.skipping(q, wall) {
			continue
		}
		// A skipped queue's try migrates too: its :delayed or :reserved may be the key
		// that is broken.
		if !l.woken || l.skipped[q] != nil {
			if err := f.migrate(l, q); err != nil {
				if f.skip(l, q, err) {
					continue
				}
				return 0, cmp.Or(active, q), popKept, err
			}
		}
		now := f.cfg.Now().Unix()
		sent := time.Now()
		jobs, failed, err := f.pop(l, q, now+f.cfg.RetryAfter, n, riders)
		riders, popKept = nil, popKept+failed
		if err != nil {
			if f.skip(l, q, err) {
				continue
			}
			if rdb.IsOutOfMemory(err) || rdb.IsConfigError(err) {
				// Redis refused the pop (maxmemory, a replica, a slot clash, an ACL
				// user denied the script): it reserved nothing and there is no reply to
				// ask for again.
				return 0, cmp.Or(active, q), popKept, err
			}
			l.pending = &pendingPop{queue: q, max: n, expires: f.expiresAt(sent)}
			if l.ctx.Err() != nil {
				return 0, cmp.Or(active, q), popKept, nil
			}
			return 0, cmp.Or(active, q), popKept, err
		}
		l.popSeq++
		l.popSucceeded()
		f.resume(l, q)
		if active == "" {
			active = q
		}
		if len(jobs) == 0 {
			continue
		}
		f.start(l, q, jobs, f.expiresAt(sent))
		return len(jobs), active, popKept, nil
	}
	return 0, active, popKept, nil
}

// pop pops up to n jobs from q with the run's next ticket, after riders, finished jobs'
// deletions and Horizon's records (acks.riding), in the same round trip; failed is how
// many deletions that brought a slot failed.
func (f *fetcher) pop(l *fetchRun, q string, reserveUntil int64, n int, riders []*deleteReq) (jobs []rdb.PoppedJob, failed int, err error) {
	if len(riders) == 0 {
		// Run's ctx: the other loop's stop does not cancel a pop sent.
		jobs, err = f.cfg.RDB.PopTicket(l.run.ctx, q, reserveUntil, n, f.ticket(l))
		return jobs, 0, err
	}
	// The riders' own context: the loop's may be cancelled while the pop is sent, and
	// a finished job's deletion must still be made.
	pop, err := f.cfg.RDB.PipelinedPopTicket(l.ackCtx, q, reserveUntil, n, f.ticket(l))
	if err != nil {
		return nil, f.acks.sendRiding(l.ackCtx, riders, nil), err
	}
	failed = f.acks.sendRiding(l.ackCtx, riders, pop)
	jobs, err = pop.Result(l.ackCtx)
	return jobs, failed, err
}

// pendingPop is a pop whose reply never arrived: Redis may have reserved jobs for it.
type pendingPop struct {
	queue   string
	max     int
	expires time.Time // when the reservations it may have made expire, at the earliest
}

// ticket is the ticket of the run's next pop.
func (f *fetcher) ticket(l *fetchRun) rdb.Ticket {
	// The reply must outlive every retry of the worker; past the reservation's expiry
	// its jobs belong to whichever worker migrates them anyway.
	return rdb.Ticket{Owner: l.owner, Seq: l.popSeq, Keep: max(2*f.reservation(), time.Minute)}
}

// reservation is how long a reservation lasts (retry_after).
func (f *fetcher) reservation() time.Duration { return time.Duration(f.cfg.RetryAfter) * time.Second }

// expiresAt is when a reservation made at t expires, on the wall clock: the score is
// whole seconds, so it can end up to a second less than retry_after after t.
func (f *fetcher) expiresAt(t time.Time) time.Time {
	return t.Truncate(time.Second).Add(f.reservation())
}

// settlePop asks again, with the same ticket, for the jobs of the pop whose reply was
// lost, and runs up to n of them. Jobs it cannot run now — more than n, the worker is
// stopping or the queue paused, or so little of the reservation is left that another
// worker may take the job while this one starts it — are handed back to the head of
// their queue with their attempt unspent (rdb.Unreserve), as if never popped.
func (f *fetcher) settlePop(ctx context.Context, l *fetchRun, n int) (got int, active string, err error) {
	p := l.pending
	jobs, err := f.cfg.RDB.PopTicket(ctx, p.queue, f.cfg.Now().Unix()+f.cfg.RetryAfter, p.max, f.ticket(l))
	if err != nil {
		return 0, p.queue, err
	}
	l.pending = nil
	l.popSeq++
	if len(jobs) == 0 {
		return 0, p.queue, nil
	}
	run := n
	if l.ctx.Err() != nil || l.paused[p.queue] || f.paused.Load() || time.Until(p.expires) < settleMargin {
		run = 0
	}
	run = min(run, len(jobs))
	f.log.Warn("a pop's reply was lost; asked Redis again for the jobs it reserved",
		"queue", p.queue, "jobs", len(jobs), "running", run, "handed_back", len(jobs)-run)
	for _, j := range jobs[run:] {
		f.handBack(l, p.queue, j)
	}
	f.start(l, p.queue, jobs[:run], p.expires)
	return run, p.queue, nil
}

// settleAtStop settles a pop whose reply was lost after the loop stopped: its jobs are
// handed back, retrying until Redis answers, the reservation expires or the shutdown
// grace ends.
func (f *fetcher) settleAtStop(l *fetchRun) {
	defer l.wg.Done()
	p := l.pending
	for n := 1; ; n++ {
		_, _, err := f.settlePop(l.ackCtx, l, 0)
		if err == nil {
			return
		}
		d := retryDelay(n)
		if l.ackCtx.Err() != nil || rdb.IsAuthError(err) || rdb.IsConfigError(err) || !time.Now().Add(d).Before(p.expires) {
			f.log.Error("a pop's reply was lost and Redis did not answer again before the worker stopped; its jobs, if any, stay reserved until retry_after",
				"queue", p.queue, "err", err)
			return
		}
		f.log.Warn("asking Redis again for the jobs of a lost pop failed; retrying", "queue", p.queue, "err", err, "retry_in", d)
		l.sleep(l.ackCtx, d)
	}
}

// settleMargin is the least reservation time a settled job must have left to be run.
const settleMargin = 5 * time.Second

// start hands popped jobs to the goroutines of the slots they took (run.serve).
func (f *fetcher) start(l *fetchRun, q string, jobs []rdb.PoppedJob, expires time.Time) {
	for _, p := range jobs {
		l.wg.Add(1)
		l.tasks <- task{queue: q, popped: p, expires: expires}
	}
}

// handBack returns a job this worker popped but will not run to the head of its queue,
// its attempt unspent. A payload the pop moved to the invalid list stays there.
func (f *fetcher) handBack(l *fetchRun, q string, p rdb.PoppedJob) {
	if p.Invalid != nil {
		logInvalid(f.log, q, p.Invalid)
		return
	}
	back, err := f.cfg.RDB.Unreserve(l.ackCtx, q, p.Job, p.Reserved)
	switch {
	case err != nil:
		f.log.Error("handing back a job this worker will not run failed; it stays reserved until retry_after",
			"queue", q, "err", err)
	case !back:
		f.log.Warn("a job to hand back was no longer reserved; it is already back in the queue", "queue", q)
	}
}

// migrate moves due delayed jobs, then expired reservations, of queue q to its ready
// list, at most once per MigrateInterval.
func (f *fetcher) migrate(l *fetchRun, q string) error {
	wall := time.Now()
	if f.cfg.MigrateInterval > 0 {
		last, seen := l.migratedAt[q]
		if seen && wall.Sub(last) < f.cfg.MigrateInterval {
			return nil
		}
	}
	now := f.cfg.Now().Unix()
	for _, from := range []rdb.Zset{rdb.Delayed, rdb.Reserved} {
		moved, err := f.books.migrateExpired(l.ctx, from, q, now)
		if err != nil {
			if l.ctx.Err() != nil {
				return nil
			}
			return err
		}
		if moved > 0 {
			f.emit(job.Event{Kind: job.EventMigrated, Queue: q, Count: int(moved), From: from.String()})
			if from == rdb.Reserved {
				f.log.Info("expired reservations moved back to the queue", "queue", q, "jobs", moved)
			}
		}
	}
	l.migratedAt[q] = wall
	return nil
}

// idle waits after a round in which no queue had a job: on the notify list of the
// first active queue when BlockFor is set, else Sleep. It returns the error Run stops
// with when Redis refused the wait for a reason no retry heals.
func (f *fetcher) idle(l *fetchRun, active string) error {
	if f.cfg.BlockFor == nil || active == "" {
		d := f.cfg.Sleep
		if active == "" {
			// Every queue is paused, left alone or skipped: look again soon.
			d = min(f.pauseSleep(), f.cfg.UnhandledDelay)
		}
		f.wait(l, d)
		return nil
	}
	wait := *f.cfg.BlockFor
	if wait == 0 || wait > rdb.BlockSlice {
		wait = rdb.BlockSlice
	}
	got, err := f.cfg.RDB.BlockForNotify(l.ctx, active, wait)
	l.redisCall(l.ctx, err)
	if err != nil && l.ctx.Err() == nil && !f.skip(l, active, err) {
		if stop := f.refused(l, err); stop != nil {
			return stop
		}
		f.log.Warn("waiting for jobs failed", "queue", active, "err", err)
		f.beat(l)
		l.sleep(l.ctx, retryMin)
	}
	// A token means a job was just pushed: pop it at once, as PHP does after BLPOP,
	// without first running a migration that happens to be due.
	l.woken = got
	return nil
}

// pauseSleep is how long a paused worker waits between checks (PHP: --sleep, or 1 s).
func (f *fetcher) pauseSleep() time.Duration {
	if f.cfg.Sleep > 0 {
		return min(f.cfg.Sleep, f.cfg.SignalInterval)
	}
	return time.Second
}

// wait is the loop's sleep: like sleep, with a heartbeat every heartbeatInterval.
func (f *fetcher) wait(l *fetchRun, d time.Duration) {
	for d > 0 {
		slice := min(d, heartbeatInterval)
		if !l.sleep(l.ctx, slice) {
			return
		}
		if d -= slice; d > 0 {
			f.heartbeat(l.ctx, l)
		}
	}
}

// forgetTickets deletes the run's pop tickets once nothing can ask for them again.
func (f *fetcher) forgetTickets(ctx context.Context, l *fetchRun) {
	if l.pending != nil {
		return
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if err := f.cfg.RDB.ForgetTickets(fctx, l.owner, f.cfg.Queues); err != nil {
		f.log.Debug("deleting the pop tickets failed; they expire", "err", err)
	}
}
