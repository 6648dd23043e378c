package worker

import (
	"context"
	"fmt"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/payload"
)

// One job's trip through the worker, top to bottom: parse the popped payload, decide
// (Laravel's Worker::process: a job failed before, no handler, tries already exceeded,
// superseded by a later dispatch), run the handler (run.go), settle its outcome
// (settle.go), free the slot.

// processor works the jobs the fetch stage popped, one goroutine each.
type processor struct {
	base
	jobs      *job.Jobs
	env       *job.Env // what every JobInfo is given
	rules     rules
	books     *bookkeeping
	debouncer *debouncer
	runner    *runner
	settler   *settler
}

// failedLookupTimeout bounds failedBefore's lookup.
const failedLookupTimeout = 5 * time.Second

// work runs one popped job and then frees its slot, unless a handler that outlived its
// context was taken over (see runner.run): the takeover freed the slot, and work
// reports that the goroutine is gone.
func (p *processor) work(r *run, t task) (gone bool) {
	a := &attempt{queue: t.queue, popped: t.popped}
	a.extendTo(t.expires)
	var env *payload.Envelope
	var err error
	if t.popped.Invalid == nil {
		// Parsed once, here, for Horizon's reserved record and for the run.
		env, err = payload.Parse(t.popped.Job)
	}
	if err == nil && env != nil {
		p.books.jobReserved(r.ackCtx, a, env)
	}
	if p.process(r, a, env, err) {
		return true
	}
	r.finish(p.cfg.Rest, a)
	return false
}

// process follows Worker::process for one job, whose payload parsed to env (or failed
// to parse with err). It reports whether the job was taken over by the run stage's
// watchdog.
func (p *processor) process(r *run, a *attempt, env *payload.Envelope, err error) (takenOver bool) {
	if a.popped.Invalid != nil {
		p.settler.invalid(a)
		return false
	}
	if err == nil {
		err = env.Runnable()
	}
	if err != nil {
		// Nothing to run and nothing a retry could change: keep it as a failed job.
		p.settler.fail(r, a, fmt.Errorf("unreadable job payload: %w", err), 0)
		return false
	}
	a.job = p.jobInfo(a, env)
	if row := p.failedBefore(r, a); row != nil {
		p.settler.alreadyFailed(r, a, row)
		return false
	}
	h, registered, ok := job.LookupWithMiddleware(p.jobs, a.job.Class)
	if !ok {
		p.settler.unhandled(r, a)
		return false
	}
	p.emit(job.Event{Kind: job.EventProcessing, Queue: a.queue, Job: a.job})
	if e := p.rules.alreadyExceeded(a); e != nil {
		// Usually a job that timed out before (its attempt was counted but it never
		// finished): PHP fails it before running it again.
		p.settler.fail(r, a, e, 0)
		p.emit(job.Event{Kind: job.EventException, Queue: a.queue, Job: a.job, Err: e})
		return false
	}
	switch superseded, err := p.debouncer.superseded(r.ackCtx, a); {
	case err != nil:
		p.settler.handleException(r, a, err, 0)
		return false
	case superseded:
		p.settler.superseded(r, a)
		return false
	}
	return p.runner.run(r, a, h, registered)
}

// jobInfo is the JobInfo of a parsed attempt: what Laravel's RedisJob offers.
func (p *processor) jobInfo(a *attempt, env *payload.Envelope) *job.JobInfo {
	info := &a.info
	*info = job.JobInfo{
		ID:         env.ID,
		UUID:       env.UUID,
		Attempt:    int(env.Attempts) + 1,
		Queue:      a.queue,
		Connection: p.cfg.Connection,
		Name:       env.Name(),
		Class:      job.ClassOf(env),
		Payload:    env,
		Raw:        a.popped.Job,
		Reserved:   a.popped.Reserved,
	}
	if b := env.BatchID; b != nil {
		info.BatchID = *b
	}
	job.Attach(info, p.env, p.jobs)
	return info
}

// failedBefore finds the failed row of a job that was failed before and came back: its
// failed row was written (the row goes in before the deletion, so that a database outage
// cannot lose the job) but its worker stopped before deleting it, and the reservation
// expired. PHP would not run it again — its worker deletes first — so neither does
// laraq (settler.alreadyFailed). Only a job popped before (attempt > 1) is looked up:
// `queue:retry` pushes a failed job with its uuid and attempts 0, and forgets the row
// after. A failed store that cannot be read lets the job run.
func (p *processor) failedBefore(r *run, a *attempt) *failed.Record {
	j := a.job
	if j.Attempt <= 1 || j.UUID == "" || p.cfg.NullStore {
		return nil
	}
	// One attempt, bounded: a failed store that is down must not hold the job up.
	ctx, cancel := context.WithTimeout(r.ackCtx, failedLookupTimeout)
	row, err := p.cfg.Failed.Find(ctx, j.UUID)
	cancel()
	if err != nil || row == nil || row.UUID != j.UUID || row.Queue != a.queue {
		return nil
	}
	return row
}
