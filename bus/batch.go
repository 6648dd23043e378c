package bus

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/laraq/laraq/phpser"
)

// Batch is one row of job_batches as BatchRepository::find() reads it.
type Batch struct {
	ID           string
	Name         string
	TotalJobs    int
	PendingJobs  int
	FailedJobs   int
	FailedJobIDs []string
	Options      Options
	CreatedAt    time.Time
	CancelledAt  *time.Time
	FinishedAt   *time.Time
}

// Cancelled reports whether the batch was cancelled ($batch->cancelled()).
func (b *Batch) Cancelled() bool { return b.CancelledAt != nil }

// Finished reports whether the batch has finished ($batch->finished()).
func (b *Batch) Finished() bool { return b.FinishedAt != nil }

// Options is what Go reads of the batch's serialized options: allowFailures and which
// callbacks (PHP closures) the batch has.
type Options struct {
	AllowFailures bool
	// Callbacks names the callbacks the batch holds, sorted: any of "catch", "failure",
	// "finally", "progress", "then".
	Callbacks []string
}

// Has reports whether the batch has callbacks of this kind ("then", "catch", ...).
func (o Options) Has(kind string) bool {
	for _, c := range o.Callbacks {
		if c == kind {
			return true
		}
	}
	return false
}

// ParseOptions reads the serialize()d options array of a job_batches row (the caller
// undoes PostgreSQL's base64 first). An empty or undecodable column gives empty options
// and an error, as PHP's unserialize() failing gives [] (10.x+).
func ParseOptions(serialized string) (Options, error) {
	var o Options
	if serialized == "" {
		return o, nil
	}
	v, err := phpser.DecodeString(serialized)
	if err != nil {
		return o, fmt.Errorf("bus: batch options: %w", err)
	}
	if v.Kind() != phpser.KindArray {
		return o, fmt.Errorf("bus: batch options are a PHP %s, not an array", v.Kind())
	}
	for _, e := range v.Entries() {
		if e.Key.IsInt() {
			continue
		}
		name := e.Key.Str()
		val := e.Value.Deref()
		switch name {
		case "allowFailures":
			// Arr::get($options, 'allowFailures', false) === true
			o.AllowFailures = val.Kind() == phpser.KindBool && val.Bool()
		case "then", "catch", "finally", "progress", "failure":
			if val.Kind() == phpser.KindArray && val.Len() > 0 {
				o.Callbacks = append(o.Callbacks, name)
			}
		}
	}
	sort.Strings(o.Callbacks)
	return o, nil
}

// Counts are a batch's pending and failed job counts after an update
// (UpdatedBatchJobCounts).
type Counts struct {
	PendingJobs, FailedJobs int
}

// AllJobsHaveRanExactlyOnce is UpdatedBatchJobCounts::allJobsHaveRanExactlyOnce(): every
// job still pending has failed, when the finally callbacks run.
func (c Counts) AllJobsHaveRanExactlyOnce() bool { return c.PendingJobs-c.FailedJobs == 0 }

// ErrNoBatch is returned for a batch id without a row (pruned or deleted): PHP's
// $command->batch() is then null and nothing is recorded.
var ErrNoBatch = errors.New("bus: no such batch")

// Repository is the application's job_batches table, the operations of Laravel's
// BatchRepository a worker needs. Times are Unix seconds, as Laravel stores them.
type Repository interface {
	// Find reads a batch; ErrNoBatch when there is none.
	Find(ctx context.Context, id string) (*Batch, error)
	// DecrementPendingJobs is decrementPendingJobs(): in one transaction holding the
	// row's lock, pending_jobs - 1 and the job's uuid removed from failed_job_ids.
	DecrementPendingJobs(ctx context.Context, id, jobUUID string) (Counts, error)
	// IncrementFailedJobs is incrementFailedJobs(): failed_jobs + 1 and the uuid added to
	// failed_job_ids, likewise.
	IncrementFailedJobs(ctx context.Context, id, jobUUID string) (Counts, error)
	// MarkAsFinished sets finished_at to now.
	MarkAsFinished(ctx context.Context, id string, now time.Time) error
	// Cancel sets cancelled_at and finished_at to now.
	Cancel(ctx context.Context, id string, now time.Time) error
	// Close releases the repository's resources.
	Close() error
}

// Outcome is what recording a job did to its batch.
type Outcome struct {
	Counts
	Finished  bool // the batch is finished now (no job pending)
	Cancelled bool // this failure cancelled the batch
	// Callbacks are the PHP callbacks Laravel would have run now, in its order, which
	// Go cannot: "progress", "then", "failure", "catch", "finally".
	Callbacks []string
}

// RecordSuccessfulJob is Batch::recordSuccessfulJob(): decrement pending_jobs, mark the
// batch finished when none is pending. It reports the callbacks PHP would run.
func RecordSuccessfulJob(ctx context.Context, repo Repository, b *Batch, jobUUID string, now time.Time) (Outcome, error) {
	counts, err := repo.DecrementPendingJobs(ctx, b.ID, jobUUID)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Counts: counts}
	if b.Options.Has("progress") {
		out.Callbacks = append(out.Callbacks, "progress")
	}
	if counts.PendingJobs == 0 {
		if err := repo.MarkAsFinished(ctx, b.ID, now); err != nil {
			return out, err
		}
		out.Finished = true
		if b.Options.Has("then") {
			out.Callbacks = append(out.Callbacks, "then")
		}
	}
	if counts.AllJobsHaveRanExactlyOnce() && b.Options.Has("finally") {
		out.Callbacks = append(out.Callbacks, "finally")
	}
	return out, nil
}

// RecordFailedJob is Batch::recordFailedJob(): increment failed_jobs, cancel the batch on
// its first failure unless it allows failures. It reports the callbacks PHP would run.
func RecordFailedJob(ctx context.Context, repo Repository, b *Batch, jobUUID string, now time.Time) (Outcome, error) {
	counts, err := repo.IncrementFailedJobs(ctx, b.ID, jobUUID)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{Counts: counts}
	if counts.FailedJobs == 1 && !b.Options.AllowFailures {
		if err := repo.Cancel(ctx, b.ID, now); err != nil {
			return out, err
		}
		out.Cancelled = true
	}
	if b.Options.AllowFailures {
		for _, k := range []string{"progress", "failure"} {
			if b.Options.Has(k) {
				out.Callbacks = append(out.Callbacks, k)
			}
		}
	}
	if counts.FailedJobs == 1 && b.Options.Has("catch") {
		out.Callbacks = append(out.Callbacks, "catch")
	}
	if counts.AllJobsHaveRanExactlyOnce() && b.Options.Has("finally") {
		out.Callbacks = append(out.Callbacks, "finally")
	}
	return out, nil
}
