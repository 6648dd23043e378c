package laraq

import "time"

// The reservation of a running job: until it expires no worker migrates the job back,
// and the worker holding it may still acknowledge it.

// expiry is when jr's reservation ends at the earliest, as far as this worker knows.
func (jr *jobRun) expiry() time.Time { return time.Unix(0, jr.expires.Load()) }

// extendTo records that jr's reservation was moved to end at t.
func (jr *jobRun) extendTo(t time.Time) { jr.expires.Store(t.UnixNano()) }

// hold runs fn while keeping jr's reservation from expiring (keepReserved, every third
// of retry_after, whatever the handler heartbeat's setting), for steps that must finish
// before the job may leave Redis, such as writing its failed row while the database is
// down.
func (c *Worker) hold(r *run, jr *jobRun, fn func() error) error {
	stop := c.keepReserved(r.ackCtx, jr, max(c.reservation()/3, time.Second))
	defer stop()
	return fn()
}
