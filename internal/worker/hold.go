package worker

import (
	"context"
	"sync"
	"time"
)

// Laravel's worker reserves a job until now + retry_after and never extends that: a
// handler that runs longer is migrated back to the ready list by the next worker's pop
// (RedisQueue::migrateExpiredJobs) and runs a second time beside the first. A Go worker
// keeps the reservation of every job it runs alive instead: while the handler runs, the
// score of its exact reserved bytes in queues:NAME:reserved is moved to now + retry_after
// every ReservationHeartbeat (extend.lua only updates a member that still exists, so an
// acknowledged or migrated job is never brought back). PHP workers sharing the queue then
// see a reservation that has not expired and leave the job alone. The heartbeat stops
// when the handler returns (before the job is acknowledged, released or failed), when
// its context ends (timeout or shutdown: from then on retry_after applies as with PHP),
// and with the process.

// minReservationHeartbeat bounds the default interval for very short retry_after values.
const minReservationHeartbeat = 100 * time.Millisecond

// holder keeps a job's reservation alive while a step that must finish before the job
// may leave Redis runs (the watch does it for running handlers).
type holder struct{ base }

// interval is the heartbeat's interval while a handler runs, 0 when it is off.
func (h *holder) interval() time.Duration {
	switch d := h.cfg.ReservationHeartbeat; {
	case d < 0:
		return 0
	case d > 0:
		return d
	}
	return max(h.reservation()/3, minReservationHeartbeat)
}

// during runs fn while keeping a's reservation from expiring (every third of
// retry_after, whatever the handler heartbeat's setting), for steps that must finish
// before the job may leave Redis, such as writing its failed row while the database is
// down.
func (h *holder) during(ctx context.Context, a *attempt, fn func() error) error {
	stop := h.keepReserved(ctx, a, max(h.reservation()/3, time.Second))
	defer stop()
	return fn()
}

// keepReserved moves a's reservation to now + retry_after every interval until stop is
// called (stop waits for the last move) or the reservation is found gone, and records
// each new expiry in jr for the acknowledgements' retries.
func (h *holder) keepReserved(ctx context.Context, a *attempt, every time.Duration) (stop func()) {
	if len(a.popped.Reserved) == 0 {
		return func() {}
	}
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			wall := h.expiresAt(time.Now())
			until := h.cfg.Now().Unix() + h.cfg.RetryAfter
			held, err := h.cfg.RDB.ExtendReservation(ctx, a.queue, a.popped.Reserved, until)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				// The next beat tries again; the reservation lasts retry_after meanwhile.
				h.log.Warn("extending a job's reservation failed", "queue", a.queue, "id", a.id(), "err", err)
			case !held:
				h.log.Warn("a job is no longer reserved (its reservation expired before it could be extended); another worker may run it too",
					"queue", a.queue, "id", a.id(), "retry_after", h.reservation())
				return
			default:
				a.extendTo(wall)
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}
