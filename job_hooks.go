package laraq

import (
	"context"
	"errors"
	"strings"
	"time"
)

// jobFailed is what CallQueuedHandler::failed() does besides the command's failed()
// method, which Go cannot run: release the unique lock (except
// ShouldBeUniqueUntilProcessing), then record the failure in the job's batch.
func (c *Worker) jobFailed(r *run, jr *jobRun, cause error) {
	c.uniqueAfterRun(r, jr, "on failure")
	c.batchJobFailed(r, jr)
}

// failedBefore finishes a job that was failed before and came back: its failed row was
// written (the row goes in before the deletion, so that a database outage cannot lose
// the job) but its worker stopped before deleting it, and the reservation expired. PHP
// would not run it again — its worker deletes first — so neither does laraq: the job is
// deleted, the failure's hooks run (unique lock, batch), and it counts as failed. Only
// a job popped before (attempt > 1) is looked up: `queue:retry` pushes a failed job with
// its uuid and attempts 0, and forgets the row after. It reports whether the job was
// such a job; a failed store that cannot be read lets the job run.
func (c *Worker) failedBefore(r *run, jr *jobRun) bool {
	j := jr.job
	if j.Attempt <= 1 || j.UUID == "" || c.s.nullStore {
		return false
	}
	// One attempt, bounded: a failed store that is down must not hold the job up.
	ctx, cancel := context.WithTimeout(r.ackCtx, failedLookupTimeout)
	row, err := c.s.failed.Find(ctx, j.UUID)
	cancel()
	if err != nil || row == nil || row.UUID != j.UUID || row.Queue != jr.queue {
		return false
	}
	c.log.Warn("job came back after its failed row was written (its worker stopped before deleting it); deleting it without running it again",
		"queue", jr.queue, "id", j.ID, "failed_row", row.ID)
	jr.failed = true
	cause := errors.New(headline(row.Exception))
	c.horizonFailing(jr, row.Exception)
	c.deleteReserved(r, jr)
	c.jobFailed(r, jr, cause)
	c.emit(Event{Kind: EventFailed, Queue: jr.queue, Job: j, Err: cause})
	return true
}

// failedLookupTimeout bounds failedBefore's lookup.
const failedLookupTimeout = 5 * time.Second

// headline is the first line of an exception text.
func headline(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}
