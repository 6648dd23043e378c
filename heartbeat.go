package laraq

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

// reservationHeartbeat is the interval of the heartbeat, 0 when it is off.
func (c *Worker) reservationHeartbeat() time.Duration {
	switch d := c.s.ReservationHeartbeat; {
	case d < 0:
		return 0
	case d > 0:
		return d
	}
	return max(time.Duration(c.s.retryAfter)*time.Second/3, minReservationHeartbeat)
}

// callHolding runs the handler while the job's reservation is kept alive, and stops the
// heartbeat before returning, so that whatever the caller does next with the job
// (delete, release, fail) runs with no heartbeat left.
func (c *Worker) callHolding(ctx context.Context, jr *jobRun, h handlerFunc) error {
	stop := c.holdReservation(ctx, jr)
	defer stop()
	return call(ctx, h, jr.job)
}

// holdReservation starts the heartbeat of one running job; stop ends it and waits for it.
func (c *Worker) holdReservation(ctx context.Context, jr *jobRun) (stop func()) {
	every := c.reservationHeartbeat()
	if every <= 0 {
		return func() {}
	}
	return c.keepReserved(ctx, jr, every)
}

// keepReserved moves jr's reservation to now + retry_after every interval until stop is
// called (stop waits for the last move) or the reservation is found gone, and records
// each new expiry in jr for the acknowledgements' retries.
func (c *Worker) keepReserved(ctx context.Context, jr *jobRun, every time.Duration) (stop func()) {
	if len(jr.popped.Reserved) == 0 {
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
			wall := c.expiresAt(time.Now())
			until := c.s.Now().Unix() + c.s.retryAfter
			held, err := c.rdb.ExtendReservation(ctx, jr.queue, jr.popped.Reserved, until)
			switch {
			case ctx.Err() != nil:
				return
			case err != nil:
				// The next beat tries again; the reservation lasts retry_after meanwhile.
				c.log.Warn("extending a job's reservation failed", "queue", jr.queue, "id", c.jobID(jr), "err", err)
			case !held:
				c.log.Warn("a job is no longer reserved (its reservation expired before it could be extended); another worker may run it too",
					"queue", jr.queue, "id", c.jobID(jr), "retry_after", c.conn.retryAfter())
				return
			default:
				jr.extendTo(wall)
			}
		}
	})
	return func() {
		cancel()
		wg.Wait()
	}
}
