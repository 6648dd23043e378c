package worker

import (
	"context"

	"github.com/laraq/laraq/internal/horizon"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/payload"
)

// Laravel Horizon's records of a worker's jobs (package internal/horizon has the rest).
// They travel through the acknowledgement batcher, in the round trips the queue
// operations make anyway, and never decide the fate of a job: a record that cannot be
// written is logged and the job goes on exactly as without Horizon.

// bookkeeping writes Horizon's records of the jobs a worker takes; without Horizon (hz nil)
// it writes nothing.
type bookkeeping struct {
	base
	hz   *horizon.Recorder
	acks *acks
}

// jobReserved records a starting job as reserved (Horizon's JobReserved: status
// reserved, the reserved copy, reserved_at) and keeps what the job's other records
// need. It runs in the job's goroutine, before the handler: the payload is read there,
// not in the loop that pops for every job. The record goes through the acknowledgement
// batcher, which keeps it before the job's completion record, so the job does not wait
// for it.
func (k *bookkeeping) jobReserved(ctx context.Context, a *attempt, env *payload.Envelope) {
	h := k.hz
	if h == nil || a.popped.Invalid != nil || len(a.popped.Reserved) == 0 {
		return
	}
	// env is the popped copy's: the keys Horizon reads are the reserved copy's too.
	j, err := rdb.NewHorizonJob(env, h.Connection, a.queue, a.popped.Reserved)
	if err != nil {
		// Horizon cannot key it either; the worker fails it as unreadable.
		k.log.Debug("job not recorded for Horizon", "queue", a.queue, "err", err)
		return
	}
	// The runtime starts now, as Horizon's Stopwatch starts on JobReserved, right after
	// the pop, whenever the record itself is written.
	hz := &horizon.Job{Job: j, Started: h.Rec.Now()}
	a.hz = hz
	k.acks.recordReserved(ctx, hz, func(ctx context.Context, b *rdb.HorizonBatch) {
		_, _ = h.Rec.Reserved(ctx, b, hz.Job)
	})
}

// jobReleased records a released job (JobReleased: status pending, the reserved
// copy).
func (k *bookkeeping) jobReleased(ctx context.Context, a *attempt) {
	if k.hz == nil || a.hz == nil {
		return
	}
	j := a.hz.Job
	k.acks.record(ctx, "released", func(ctx context.Context, b *rdb.HorizonBatch) {
		_ = k.hz.Rec.Released(ctx, b, j)
	})
}

// jobHandedBack records a job handed back to its queue with its attempt unspent:
// pending again, with the bytes now in the ready list.
func (k *bookkeeping) jobHandedBack(ctx context.Context, a *attempt, back bool) {
	if k.hz == nil || a.hz == nil || !back {
		return
	}
	j := a.hz.Job
	j.Payload = a.popped.Job
	k.acks.record(ctx, "released", func(ctx context.Context, b *rdb.HorizonBatch) {
		_ = k.hz.Rec.Released(ctx, b, j)
	})
}

// jobFailing notes the exception text of a job being failed, the text of its
// failed row: the deletion that follows records it failed instead of completed.
func (k *bookkeeping) jobFailing(a *attempt, exception string) {
	if k.hz != nil && a.hz != nil {
		a.hz.Failure = &rdb.Failure{Exception: exception}
	}
}

// migrateExpired is rdb.MigrateExpired, and with Horizon the moved jobs are recorded as
// pending again (JobsMigrated).
func (k *bookkeeping) migrateExpired(ctx context.Context, from rdb.Zset, queue string, now int64) (int64, error) {
	if k.hz == nil {
		return k.cfg.RDB.MigrateExpired(ctx, from, queue, now, k.cfg.MigrationLimit)
	}
	moved, err := k.cfg.RDB.MigrateExpiredJobs(ctx, from, queue, now, k.cfg.MigrationLimit)
	if err != nil || len(moved) == 0 {
		return int64(len(moved)), err
	}
	jobs := make([]rdb.HorizonJob, 0, len(moved))
	for _, m := range moved {
		j, err := rdb.HorizonJobFromPayload(m, k.hz.Connection, queue)
		if err != nil {
			continue
		}
		jobs = append(jobs, j)
	}
	k.acks.record(ctx, "migrated", func(ctx context.Context, b *rdb.HorizonBatch) {
		_ = k.hz.Rec.Migrated(ctx, b, jobs...)
	})
	return int64(len(moved)), nil
}
