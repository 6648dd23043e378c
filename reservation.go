package laraq

import (
	"sync"
	"time"
)

// The reservation of a running job: until it expires no worker migrates the job back,
// and the worker holding it may still acknowledge it.

// expiry is when jr's reservation ends at the earliest, as far as this worker knows.
func (jr *jobRun) expiry() time.Time { return time.Unix(0, jr.expires.Load()) }

// extendTo records that jr's reservation was moved to end at t.
func (jr *jobRun) extendTo(t time.Time) { jr.expires.Store(t.UnixNano()) }

// hold runs fn while keeping jr's reservation from expiring: every third of
// retry_after the reservation is moved to a full retry_after from now, for as long as
// fn runs and the job is still reserved. For steps that must finish before the job may
// leave Redis, such as writing its failed row while the database is down.
func (c *Worker) hold(r *run, jr *jobRun, fn func() error) error {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		t := time.NewTicker(max(c.reservation()/3, time.Second))
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
			}
			until := c.expiresAt(time.Now())
			held, err := c.rdb.Extend(r.ackCtx, jr.queue, jr.popped.Reserved, c.s.Now().Unix()+c.s.retryAfter)
			switch {
			case err != nil:
				c.log.Warn("extending a job's reservation failed", "queue", jr.queue, "id", c.jobID(jr), "err", err)
			case !held:
				c.log.Warn("a job's reservation was gone while it was being held", "queue", jr.queue, "id", c.jobID(jr))
				return
			default:
				jr.extendTo(until)
			}
		}
	})
	err := fn()
	close(done)
	wg.Wait()
	return err
}
