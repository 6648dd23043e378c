package laraq

import (
	"context"
	"errors"
	"strings"

	"github.com/laraq/laraq/bus"
	"github.com/laraq/laraq/encryption"
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

// SkipsCancelledBatch is implemented by job types whose PHP class runs through the
// SkipIfBatchCancelled middleware (or starts handle() with `if
// ($this->batch()->cancelled()) return;`): a Go worker then does not call the handler
// for a job of a cancelled batch, and the job counts as done, as in PHP.
//
//	func (ImportRow) SkipIfBatchCancelled() {}
type SkipsCancelledBatch interface {
	SkipIfBatchCancelled()
}

// Batch reads the job's batch ($this->batch()): nil when the job is not batched or its
// batch is gone, an error when the connection has no batch repository.
func (j *JobInfo) Batch(ctx context.Context) (*bus.Batch, error) {
	id := j.batchID()
	if id == "" {
		return nil, nil
	}
	if j.ext == nil || j.ext.w == nil || j.ext.w.conn.Batches == nil {
		return nil, errors.New("laraq: no batch repository (Connection.Batches) to read batch " + id)
	}
	b, err := j.ext.w.conn.Batches.Find(ctx, id)
	if errors.Is(err, bus.ErrNoBatch) {
		return nil, nil
	}
	return b, err
}

// batchID is BatchID, from the decoded command when the envelope did not carry it.
func (j *JobInfo) batchID() string {
	if j.BatchID == "" && j.IsObjectJob() && j.mayHaveBatchID() {
		_, _ = j.Value() // sets BatchID from the batchId property
	}
	return j.BatchID
}

// batchIDProperty is how the Batchable trait's public batchId property starts in a
// serialized command.
const batchIDProperty = `s:7:"batchId";`

// mayHaveBatchID reports whether the command can hold a batchId: a plain command
// without the property's name is not decoded only to look for it (a handler that
// reads the job's raw JobInfo would otherwise pay a full decode per job).
func (j *JobInfo) mayHaveBatchID() bool {
	cmd := j.Payload.Command
	return j.cmdSet || looksEncrypted(cmd) || encryption.IsEncryptedCommand(cmd) || strings.Contains(cmd, batchIDProperty)
}

// batchFor finds the batch of a finished job, or nil when the job is not batched, its
// batch is gone, or nothing can record it (logged once).
func (c *Worker) batchFor(r *run, jr *jobRun) *bus.Batch {
	if jr.job == nil || jr.job.ext == nil {
		return nil
	}
	id := jr.job.batchID()
	if id == "" {
		return nil
	}
	if c.conn.Batches == nil {
		if _, warned := c.batchWarned.LoadOrStore(id, true); !warned {
			c.log.Warn("a batched job finished but the connection has no batch repository: job_batches is not updated and the batch will not finish (laravel.Connect opens it from the application's database)",
				"batch", id, "job", jr.job.Name)
		}
		return nil
	}
	var b *bus.Batch
	_, err := c.retry(r, jr, "reading a job's batch", func(ctx context.Context) (err error) {
		b, err = c.conn.Batches.Find(ctx, id)
		if errors.Is(err, bus.ErrNoBatch) {
			return nil
		}
		return err
	})
	if err != nil {
		c.log.Error("reading a job's batch failed; the batch is not updated", "batch", id, "job", jr.job.Name, "err", err)
		return nil
	}
	return b
}

// batchJobSucceeded is ensureSuccessfulBatchJobIsRecorded().
func (c *Worker) batchJobSucceeded(r *run, jr *jobRun) {
	b := c.batchFor(r, jr)
	if b == nil {
		return
	}
	var out bus.Outcome
	_, err := c.retry(r, jr, "recording a batched job's success", func(ctx context.Context) (err error) {
		out, err = bus.RecordSuccessfulJob(ctx, c.conn.Batches, b, jr.job.UUID, c.s.Now())
		return err
	})
	c.loggedBatch(jr, b, out, err, "success")
}

// batchJobFailed is ensureFailedBatchJobIsRecorded(), from failed().
func (c *Worker) batchJobFailed(r *run, jr *jobRun) {
	b := c.batchFor(r, jr)
	if b == nil {
		return
	}
	var out bus.Outcome
	_, err := c.retry(r, jr, "recording a batched job's failure", func(ctx context.Context) (err error) {
		out, err = bus.RecordFailedJob(ctx, c.conn.Batches, b, jr.job.UUID, c.s.Now())
		return err
	})
	c.loggedBatch(jr, b, out, err, "failure")
}

func (c *Worker) loggedBatch(jr *jobRun, b *bus.Batch, out bus.Outcome, err error, what string) {
	switch {
	case err != nil:
		c.log.Error("recording a batched job's "+what+" failed; the batch's counts are off by this job", "batch", b.ID, "job", jr.job.Name, "err", err)
		return
	case out.Cancelled:
		c.log.Info("batch cancelled by its first failed job", "batch", b.ID, "name", b.Name)
	case out.Finished:
		c.log.Info("batch finished", "batch", b.ID, "name", b.Name, "failed_jobs", out.FailedJobs)
	}
	if len(out.Callbacks) > 0 {
		c.log.Warn("the batch's "+strings.Join(out.Callbacks, ", ")+" callbacks are PHP closures, which a Go worker cannot run: they did not run (the job_batches row is updated as PHP updates it)",
			"batch", b.ID, "name", b.Name, "job", jr.job.Name)
	}
}

// skipCancelledBatch is SkipIfBatchCancelled: a job of a cancelled batch whose Go type
// opts in is not handled.
func (c *Worker) skipCancelledBatch(ctx context.Context, jr *jobRun) bool {
	_, t := c.commandOf(jr.job)
	if t == nil || !t.skipIfBatchCancelled || c.conn.Batches == nil {
		return false
	}
	b, err := jr.job.Batch(ctx)
	if err != nil || b == nil || !b.Cancelled() {
		return false
	}
	c.log.Info("job of a cancelled batch skipped (SkipIfBatchCancelled)", "batch", b.ID, "job", jr.job.Name, "id", jr.job.ID)
	return true
}
