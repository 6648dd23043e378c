package laraq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/payload"
)

// Laravel Horizon (laravel/horizon 5.x) draws its dashboard from records its PHP
// listeners write to Redis on every queue event: a hash per job, lists of recent,
// pending, completed, silenced and failed jobs, tags, and throughput and runtime
// metrics per queue and per job. With Connection.Horizon set, a Worker and a Dispatcher
// write the same records at the same moments, so Go workers and Go dispatches show up
// in the dashboard PHP teams already use, beside PHP's. The records travel in the round
// trips the queue operations make anyway (see horizonState.exec): the deletions of
// finished jobs carry their completed and metrics records and the reserved records of
// jobs that started since (see acks.record), a push its pushed record inside the same
// MULTI.
//
// Horizon's bookkeeping never decides the fate of a job: a record that cannot be
// written is logged and the job goes on exactly as without Horizon.

// DefaultHorizonPrefix is the prefix Horizon falls back to when horizon.prefix is empty.
// The stock config/horizon.php sets Str::slug(APP_NAME, '_').'_horizon:' (for
// APP_NAME=Laravel: laravel_horizon:), which package laravel reads.
const DefaultHorizonPrefix = rdb.DefaultHorizonPrefix

// HorizonOptions are the settings of config/horizon.php a Go worker or dispatcher needs
// to write Horizon's records as the application's Horizon does. laravel.Load reads them
// from an application that uses Horizon.
type HorizonOptions struct {
	// Client is the Redis connection Horizon keeps its records on (horizon.use, a
	// connection of config/database.php; "default" in the stock config). Default:
	// Connection.Client. On the queue's own client the records share the queue's round
	// trips; on another they cost one more.
	Client redis.UniversalClient
	// Prefix is horizon.prefix. It replaces the connection prefix for Horizon's keys.
	// Default DefaultHorizonPrefix.
	Prefix string
	// Trim is horizon.trim. Zero fields take Horizon's defaults.
	Trim HorizonTrim
	// Silenced is horizon.silenced: job classes whose completed runs are listed as
	// silenced instead of completed. Applies to what Go dispatches (Horizon decides at
	// push time). Default none.
	Silenced []string
}

// HorizonTrim is horizon.trim: how many minutes Horizon keeps each kind of record. A
// zero field takes Horizon's default.
type HorizonTrim struct {
	Recent       int // recent_jobs; default 60
	Pending      int // a pending job's hash; default 60
	Completed    int // completed and silenced jobs; default 60
	RecentFailed int // recent_failed_jobs; default Failed
	Failed       int // failed jobs; default 10080 (a week)
	Monitored    int // jobs of monitored tags; default 10080
}

func (t HorizonTrim) rdb() rdb.HorizonTrim {
	return rdb.HorizonTrim{Recent: t.Recent, Pending: t.Pending, Completed: t.Completed,
		RecentFailed: t.RecentFailed, Failed: t.Failed, Monitored: t.Monitored}
}

// horizonState is the Horizon bookkeeping of one worker or dispatcher.
type horizonState struct {
	rec        *rdb.Horizon
	client     redis.UniversalClient // where Horizon's keys live
	shared     bool                  // client is the queue's: records ride in the queue's round trips
	connection string                // the queue connection name the records carry
	silenced   []string
	log        *slog.Logger

	sup      *supervisorRun // a worker's master and supervisor records, nil for none
	scripts  atomic.Bool    // Horizon's scripts were loaded (see loadScripts)
	failures atomic.Int64   // records that could not be written since the last log line
	loggedAt atomic.Int64   // Unix nanoseconds of that line
}

// newHorizonState returns the bookkeeping for conn, nil when Horizon is off.
func newHorizonState(conn *Connection, now func() time.Time, log *slog.Logger) (*horizonState, error) {
	o := conn.Horizon
	if o == nil {
		return nil, nil
	}
	prefix := o.Prefix
	if prefix == "" {
		prefix = DefaultHorizonPrefix
	}
	rec, err := rdb.NewHorizon(rdb.HorizonOptions{Prefix: prefix, Trim: o.Trim.rdb(), Now: now})
	if err != nil {
		return nil, fmt.Errorf("laraq: Connection.Horizon: %w", err)
	}
	client := o.Client
	if client == nil {
		client = conn.Client
	}
	if log == nil {
		log = slog.Default()
	}
	return &horizonState{rec: rec, client: client, shared: client == conn.Client, connection: conn.name(),
		silenced: o.Silenced, log: log}, nil
}

// initHorizon sets up a new worker's Horizon bookkeeping, its acknowledgements' and
// that of the dispatcher continuing its chains, which logs to the worker's log.
func (c *Worker) initHorizon(conn *Connection) error {
	hz, err := newHorizonState(conn, c.s.Now, c.log)
	if err != nil {
		return err
	}
	c.hz, c.acks.hz = hz, hz
	if c.chain.hz != nil {
		c.chain.hz.log = c.log
	}
	if c.s.HorizonSupervisor != nil {
		if hz == nil {
			return errors.New("laraq: WorkerConfig.HorizonSupervisor needs Connection.Horizon")
		}
		if hz.sup, err = c.newSupervisorRun(); err != nil {
			return err
		}
	}
	return nil
}

// exec sends the records fn queues in one pipeline of Horizon's client.
func (h *horizonState) exec(ctx context.Context, what string, fn func(p redis.Pipeliner) error) {
	var ferr error
	cmds, _ := h.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		ferr = fn(p)
		return nil
	})
	if ferr != nil {
		h.failed(what, ferr)
	}
	h.settle(ctx, what, cmds)
}

// settle finishes records sent in a pipeline: the calls a server without Horizon's
// scripts refused (NOSCRIPT, after a restart or SCRIPT FLUSH; the first calls of a
// process) are sent again with the script, and every other error is logged.
func (h *horizonState) settle(ctx context.Context, what string, cmds []redis.Cmder) {
	if _, err := h.rec.RerunNoScript(ctx, h.client, cmds); err != nil {
		h.failed(what, err)
	}
	for _, c := range cmds {
		err := c.Err()
		if err == nil {
			err = rdb.HorizonBatchErrors(c)
		}
		if err != nil && !errors.Is(err, redis.Nil) && !redis.HasErrorPrefix(err, "NOSCRIPT") {
			h.failed(what, err)
			return
		}
	}
}

// execBatch sends the records fn collects as one batch (rdb.HorizonBatch).
func (h *horizonState) execBatch(ctx context.Context, what string, fn func(b *rdb.HorizonBatch)) {
	h.exec(ctx, what, func(p redis.Pipeliner) error {
		b := &rdb.HorizonBatch{}
		fn(b)
		_, err := b.Queue(ctx, p)
		return err
	})
}

// failed logs a record that could not be written, at most once every few seconds with
// the count of those since: a Horizon that cannot be written to must not flood the log.
func (h *horizonState) failed(what string, err error) {
	n := h.failures.Add(1)
	now := time.Now().UnixNano()
	last := h.loggedAt.Load()
	if now-last < int64(10*time.Second) || !h.loggedAt.CompareAndSwap(last, now) {
		return
	}
	h.failures.Add(-n)
	h.log.Warn("writing Horizon's records failed; the jobs are not affected, the dashboard misses them",
		"records", what, "failures", n, "err", err)
}

// hzJob is what a worker keeps of one job for Horizon.
type hzJob struct {
	job     rdb.HorizonJob
	started time.Time    // when the job was taken, on the Horizon clock: the start of the runtime
	failure *rdb.Failure // set when the job is failed: its deletion records that
}

// horizonReserved records a starting job as reserved (Horizon's JobReserved: status
// reserved, the reserved copy, reserved_at) and keeps what the job's other records
// need. It runs in the job's goroutine, before the handler: the payload is read there,
// not in the loop that pops for every job. The record goes through the acknowledgement
// batcher, which keeps it before the job's completion record, so the job does not wait
// for it.
func (c *Worker) horizonReserved(r *run, jr *jobRun, env *payload.Envelope) {
	h := c.hz
	if h == nil || jr.popped.Invalid != nil || len(jr.popped.Reserved) == 0 {
		return
	}
	// env is the popped copy's: the keys Horizon reads are the reserved copy's too.
	j, err := rdb.NewHorizonJob(env, h.connection, jr.queue, jr.popped.Reserved)
	if err != nil {
		// Horizon cannot key it either; the worker fails it as unreadable.
		c.log.Debug("job not recorded for Horizon", "queue", jr.queue, "err", err)
		return
	}
	// The runtime starts now, as Horizon's Stopwatch starts on JobReserved, right after
	// the pop, whenever the record itself is written.
	hz := &hzJob{job: j, started: h.rec.Now()}
	jr.hz = hz
	c.acks.recordReserved(r.ackCtx, hz, func(ctx context.Context, b *rdb.HorizonBatch) {
		_, _ = h.rec.Reserved(ctx, b, hz.job)
	})
}

// horizonReleased records a released job (JobReleased: status pending, the reserved
// copy).
func (c *Worker) horizonReleased(r *run, jr *jobRun) {
	if c.hz == nil || jr.hz == nil {
		return
	}
	j := jr.hz.job
	c.acks.record(r.ackCtx, "released", func(ctx context.Context, b *rdb.HorizonBatch) {
		_ = c.hz.rec.Released(ctx, b, j)
	})
}

// horizonHandedBack records a job handed back to its queue with its attempt unspent:
// pending again, with the bytes now in the ready list.
func (c *Worker) horizonHandedBack(r *run, jr *jobRun, back bool) {
	if c.hz == nil || jr.hz == nil || !back {
		return
	}
	j := jr.hz.job
	j.Payload = jr.popped.Job
	c.acks.record(r.ackCtx, "released", func(ctx context.Context, b *rdb.HorizonBatch) {
		_ = c.hz.rec.Released(ctx, b, j)
	})
}

// horizonFailing notes the exception text of a job being failed, the text of its
// failed row: the deletion that follows records it failed instead of completed.
func (c *Worker) horizonFailing(jr *jobRun, exception string) {
	if c.hz != nil && jr.hz != nil {
		jr.hz.failure = &rdb.Failure{Exception: exception}
	}
}

// finished queues the records of a job deleted from :reserved: failed (JobDeleted with
// hasFailed, then JobFailed), or completed with its metrics (JobDeleted). With
// reserved (a completed job only), the job's reserved record was not sent: it goes with
// the completion.
func (h *horizonState) finished(ctx context.Context, p redis.Scripter, j *hzJob, reserved bool) {
	if j.failure != nil {
		if err := h.rec.Failed(ctx, p, j.job, *j.failure); err != nil {
			h.failed("failed", err)
		}
		return
	}
	if reserved {
		if _, err := h.rec.ReservedCompleted(ctx, p, j.job); err != nil {
			h.failed("completed", err)
			return
		}
	} else if err := h.rec.Completed(ctx, p, j.job); err != nil {
		h.failed("completed", err)
		return
	}
	h.rec.Metrics(ctx, p, j.job.Queue, j.job.Name, j.started)
}

// migrateExpired is rdb.MigrateExpired, and with Horizon the moved jobs are recorded as
// pending again (JobsMigrated).
func (c *Worker) migrateExpired(ctx context.Context, from rdb.Zset, queue string, now int64) (int64, error) {
	if c.hz == nil {
		return c.rdb.MigrateExpired(ctx, from, queue, now, c.s.migrationLimit)
	}
	moved, err := c.rdb.MigrateExpiredJobs(ctx, from, queue, now, c.s.migrationLimit)
	if err != nil || len(moved) == 0 {
		return int64(len(moved)), err
	}
	jobs := make([]rdb.HorizonJob, 0, len(moved))
	for _, m := range moved {
		j, err := rdb.HorizonJobFromPayload(m, c.hz.connection, queue)
		if err != nil {
			continue
		}
		jobs = append(jobs, j)
	}
	c.acks.record(ctx, "migrated", func(ctx context.Context, b *rdb.HorizonBatch) {
		_ = c.hz.rec.Migrated(ctx, b, jobs...)
	})
	return int64(len(moved)), nil
}

// reservedAndDeleted finds the completed jobs whose reserved record comes before their
// deletion in reqs; nil when there are none.
func reservedAndDeleted(reqs []*deleteReq) map[*hzJob]bool {
	var reserving, both map[*hzJob]bool
	for _, r := range reqs {
		switch {
		case r.reserves != nil:
			if reserving == nil {
				reserving = make(map[*hzJob]bool)
			}
			reserving[r.reserves] = true
		case r.record == nil && r.hz != nil && r.hz.failure == nil && reserving[r.hz]:
			if both == nil {
				both = make(map[*hzJob]bool)
			}
			both[r.hz] = true
		}
	}
	return both
}

// deleteOne deletes one job outside a batch, with its Horizon records when it has any.
func (a *acks) deleteOne(ctx context.Context, queue string, reserved []byte, hz *hzJob) (bool, error) {
	if a.hz == nil || hz == nil {
		return a.rdb.DeleteReserved(ctx, queue, reserved)
	}
	r := &deleteReq{job: rdb.Finished{Queue: queue, Reserved: reserved}, hz: hz}
	a.deleteMany(ctx, []*deleteReq{r})
	return r.deleted, r.err
}

// record sends Horizon records through the batcher, in the pipeline of the deletions
// handed over with it, after every request handed over before: a job's reserved record
// always precedes its completed record, which its deletion hands over later. It does
// not wait. Without a running batcher it sends them at once.
func (a *acks) record(ctx context.Context, what string, fn func(ctx context.Context, b *rdb.HorizonBatch)) {
	a.send(ctx, &deleteReq{record: fn, what: what})
}

// recordReserved is record for job's reserved record, fn. When the job's deletion
// travels in the same batch, the batch sends both records as one call
// (rdb.Horizon.ReservedCompleted) instead of fn.
func (a *acks) recordReserved(ctx context.Context, job *hzJob, fn func(ctx context.Context, b *rdb.HorizonBatch)) {
	a.send(ctx, &deleteReq{record: fn, what: "reserved", reserves: job})
}

func (a *acks) send(ctx context.Context, req *deleteReq) {
	if b := a.batcher.Load(); b != nil {
		b.mu.RLock()
		if !b.closed {
			b.inflight.Add(1)
			b.mu.RUnlock()
			req.release = b.inflight.Done
			select {
			case b.reqs <- req:
			case <-ctx.Done():
				b.inflight.Done()
			}
			return
		}
		b.mu.RUnlock()
	}
	a.hz.execBatch(ctx, req.what, func(b *rdb.HorizonBatch) { req.record(ctx, b) })
}

// deleteMany sends a batch of requests: the deletions of finished jobs
// (rdb.DeleteReservedMany), whose results it sets, and Horizon's records, in the order
// of the requests: those of the batcher's record requests, and for each deletion its
// completed and metrics, or failed, records. With Horizon's keys on the queue's client
// they go in the pipeline of the deletions, after them; otherwise in a pipeline of their
// own right after. PHP's Horizon records a deletion (JobDeleted) whether or not the
// reservation was still there: a job whose reservation had expired is recorded finished
// by the worker that finished it.
func (a *acks) deleteMany(ctx context.Context, reqs []*deleteReq) {
	h := a.hz
	jobs := make([]rdb.Finished, 0, len(reqs))
	dels := make([]*deleteReq, 0, len(reqs))
	records := false
	for _, r := range reqs {
		if r.record != nil {
			records = true
			continue
		}
		jobs = append(jobs, r.job)
		dels = append(dels, r)
		records = records || r.hz != nil
	}
	if h == nil || !records {
		deleted, errs, _ := a.rdb.DeleteReservedMany(ctx, jobs)
		for i, r := range dels {
			r.deleted, r.err = deleted[i], errs[i]
		}
		return
	}
	// Every record of the requests, in their order, as one batch: one script call. A
	// job whose reserved record and deletion are both here has them sent together.
	together := reservedAndDeleted(reqs)
	queue := func(p redis.Pipeliner) {
		b := &rdb.HorizonBatch{}
		for _, r := range reqs {
			switch {
			case r.record != nil:
				if r.reserves == nil || !together[r.reserves] {
					r.record(ctx, b)
				}
			case r.hz != nil && r.err == nil:
				h.finished(ctx, b, r.hz, together[r.hz])
			}
		}
		if _, err := b.Queue(ctx, p); err != nil {
			h.failed("records", err)
		}
	}
	if !h.shared || len(jobs) == 0 {
		if len(jobs) > 0 {
			deleted, errs, _ := a.rdb.DeleteReservedMany(ctx, jobs)
			for i, r := range dels {
				r.deleted, r.err = deleted[i], errs[i]
			}
		}
		h.exec(ctx, "records", func(p redis.Pipeliner) error { queue(p); return nil })
		return
	}
	deleted, errs, extra, _ := a.rdb.DeleteReservedManyAnd(ctx, jobs, queue)
	for i, r := range dels {
		r.deleted, r.err = deleted[i], errs[i]
	}
	h.settle(ctx, "records", extra)
}
