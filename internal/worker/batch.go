package worker

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/laraq/laraq/bus"
	"github.com/laraq/laraq/internal/job"
)

// Batched jobs (Bus::batch) carry their batch's id: data.batchId from 12.51, and always
// the Batchable trait's public batchId property. When one finishes, PHP's
// CallQueuedHandler updates the batch's job_batches row through the BatchRepository
// (package bus has the rules, bus/database the SQL): a success after the chain is
// continued and before the job is deleted, a failure in failed(). A Go worker does the
// same through Connection.Batches. The batch's then/catch/finally/progress callbacks are
// PHP closures in the options column: Go cannot run them. When they would run, the
// worker logs which ones did not, and leaves the row exactly as PHP would (finished_at
// set when no job is pending, cancelled_at on the first failure of a batch that does
// not allow failures), so Bus::findBatch() shows the batch finished or cancelled.

// batches records batched jobs' outcomes in job_batches.
type batches struct {
	base
	jobs   *job.Jobs
	warned sync.Map // batch ids already warned about (no batch repository)
}

// batchFor finds the batch of a finished job, or nil when the job is not batched, its
// batch is gone, or nothing can record it (logged once).
func (c *batches) batchFor(ctx context.Context, a *attempt) *bus.Batch {
	if a.job == nil {
		return nil
	}
	id := job.BatchIDOf(a.job)
	if id == "" {
		return nil
	}
	if c.cfg.Batches == nil {
		if _, warned := c.warned.LoadOrStore(id, true); !warned {
			c.log.Warn("a batched job finished but the connection has no batch repository: job_batches is not updated and the batch will not finish (laravel.Connect opens it from the application's database)",
				"batch", id, "job", a.job.Name)
		}
		return nil
	}
	var b *bus.Batch
	_, err := c.retry(ctx, a, "reading a job's batch", func(ctx context.Context) (err error) {
		b, err = c.cfg.Batches.Find(ctx, id)
		if errors.Is(err, bus.ErrNoBatch) {
			return nil
		}
		return err
	})
	if err != nil {
		c.log.Error("reading a job's batch failed; the batch is not updated", "batch", id, "job", a.job.Name, "err", err)
		return nil
	}
	return b
}

// succeeded is ensureSuccessfulBatchJobIsRecorded().
func (c *batches) succeeded(ctx context.Context, a *attempt) {
	b := c.batchFor(ctx, a)
	if b == nil {
		return
	}
	var out bus.Outcome
	_, err := c.retry(ctx, a, "recording a batched job's success", func(ctx context.Context) (err error) {
		out, err = bus.RecordSuccessfulJob(ctx, c.cfg.Batches, b, a.job.UUID, c.cfg.Now())
		return err
	})
	c.logged(a, b, out, err, "success")
}

// failed is ensureFailedBatchJobIsRecorded(), from failed().
func (c *batches) failed(ctx context.Context, a *attempt) {
	b := c.batchFor(ctx, a)
	if b == nil {
		return
	}
	var out bus.Outcome
	_, err := c.retry(ctx, a, "recording a batched job's failure", func(ctx context.Context) (err error) {
		out, err = bus.RecordFailedJob(ctx, c.cfg.Batches, b, a.job.UUID, c.cfg.Now())
		return err
	})
	c.logged(a, b, out, err, "failure")
}

func (c *batches) logged(a *attempt, b *bus.Batch, out bus.Outcome, err error, what string) {
	switch {
	case err != nil:
		c.log.Error("recording a batched job's "+what+" failed; the batch's counts are off by this job", "batch", b.ID, "job", a.job.Name, "err", err)
		return
	case out.Cancelled:
		c.log.Info("batch cancelled by its first failed job", "batch", b.ID, "name", b.Name)
	case out.Finished:
		c.log.Info("batch finished", "batch", b.ID, "name", b.Name, "failed_jobs", out.FailedJobs)
	}
	if len(out.Callbacks) > 0 {
		c.log.Warn("the batch's "+strings.Join(out.Callbacks, ", ")+" callbacks are PHP closures, which a Go worker cannot run: they did not run (the job_batches row is updated as PHP updates it)",
			"batch", b.ID, "name", b.Name, "job", a.job.Name)
	}
}

// skipCancelled is SkipIfBatchCancelled: a job of a cancelled batch whose Go type
// opts in is not handled.
func (c *batches) skipCancelled(ctx context.Context, a *attempt) bool {
	_, t := a.command(c.jobs)
	if t == nil || !t.SkipIfBatchCancelled || c.cfg.Batches == nil {
		return false
	}
	b, err := a.job.Batch(ctx)
	if err != nil || b == nil || !b.Cancelled() {
		return false
	}
	c.log.Info("job of a cancelled batch skipped (SkipIfBatchCancelled)", "batch", b.ID, "job", a.job.Name, "id", a.job.ID)
	return true
}
