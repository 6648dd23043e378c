package horizon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/rdb"
)

// Laravel Horizon (laravel/horizon 5.x) draws its dashboard from records its PHP
// listeners write to Redis on every queue event: a hash per job, lists of recent,
// pending, completed, silenced and failed jobs, tags, and throughput and runtime
// metrics per queue and per job. With Connection.Horizon set, a Worker and a Dispatcher
// write the same records at the same moments, so Go workers and Go dispatches show up
// in the dashboard PHP teams already use, beside PHP's. The records travel in the round
// trips the queue operations make anyway (see Recorder.Exec): the deletions of
// finished jobs carry their completed and metrics records and the reserved records of
// jobs that started since (the worker's acknowledgement batcher), a push its pushed record inside the same
// MULTI.
//
// Horizon's bookkeeping never decides the fate of a job: a record that cannot be
// written is logged and the job goes on exactly as without Horizon.

// Recorder is the Horizon bookkeeping of one worker or dispatcher.
type Recorder struct {
	Rec        *rdb.Horizon
	Client     redis.UniversalClient // where Horizon's keys live
	Shared     bool                  // Client is the queue's: records ride in the queue's round trips
	Connection string                // the queue connection name the records carry
	Silenced   []string              // horizon.silenced
	Log        *slog.Logger

	scripts  atomic.Bool  // Horizon's scripts were loaded (see LoadScripts)
	failures atomic.Int64 // records that could not be written since the last log line
	loggedAt atomic.Int64 // Unix nanoseconds of that line
}

// Options are what a Recorder is made from: config/horizon.php's settings, and the
// queue connection it records for.
type Options struct {
	Client      redis.UniversalClient // horizon.use's client; nil: QueueClient
	QueueClient redis.UniversalClient
	Prefix      string // horizon.prefix; "": rdb.DefaultHorizonPrefix
	Trim        rdb.HorizonTrim
	Silenced    []string
	Connection  string // the queue connection's name
	Now         func() time.Time
	Log         *slog.Logger // nil: slog.Default()
}

// New returns the bookkeeping for a queue connection.
func New(o Options) (*Recorder, error) {
	prefix := o.Prefix
	if prefix == "" {
		prefix = rdb.DefaultHorizonPrefix
	}
	rec, err := rdb.NewHorizon(rdb.HorizonOptions{Prefix: prefix, Trim: o.Trim, Now: o.Now})
	if err != nil {
		return nil, fmt.Errorf("laraq: Connection.Horizon: %w", err)
	}
	client := o.Client
	if client == nil {
		client = o.QueueClient
	}
	log := o.Log
	if log == nil {
		log = slog.Default()
	}
	return &Recorder{Rec: rec, Client: client, Shared: client == o.QueueClient, Connection: o.Connection,
		Silenced: o.Silenced, Log: log}, nil
}

// Exec sends the records fn queues in one pipeline of Horizon's client.
func (h *Recorder) Exec(ctx context.Context, what string, fn func(p redis.Pipeliner) error) {
	var ferr error
	cmds, _ := h.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
		ferr = fn(p)
		return nil
	})
	if ferr != nil {
		h.Failed(what, ferr)
	}
	h.Settle(ctx, what, cmds)
}

// Settle finishes records sent in a pipeline: the calls a server without Horizon's
// scripts refused (NOSCRIPT, after a restart or SCRIPT FLUSH; the first calls of a
// process) are sent again with the script, and every other error is logged.
func (h *Recorder) Settle(ctx context.Context, what string, cmds []redis.Cmder) {
	if _, err := h.Rec.RerunNoScript(ctx, h.Client, cmds); err != nil {
		h.Failed(what, err)
	}
	for _, c := range cmds {
		err := c.Err()
		if err == nil {
			err = rdb.HorizonBatchErrors(c)
		}
		if err != nil && !errors.Is(err, redis.Nil) && !redis.HasErrorPrefix(err, "NOSCRIPT") {
			h.Failed(what, err)
			return
		}
	}
}

// ExecBatch sends the records fn collects as one batch (rdb.HorizonBatch).
func (h *Recorder) ExecBatch(ctx context.Context, what string, fn func(b *rdb.HorizonBatch)) {
	h.Exec(ctx, what, func(p redis.Pipeliner) error {
		b := &rdb.HorizonBatch{}
		fn(b)
		_, err := b.Queue(ctx, p)
		return err
	})
}

// Failed logs a record that could not be written, at most once every few seconds with
// the count of those since: a Horizon that cannot be written to must not flood the log.
func (h *Recorder) Failed(what string, err error) {
	n := h.failures.Add(1)
	now := time.Now().UnixNano()
	last := h.loggedAt.Load()
	if now-last < int64(10*time.Second) || !h.loggedAt.CompareAndSwap(last, now) {
		return
	}
	h.failures.Add(-n)
	h.Log.Warn("writing Horizon's records failed; the jobs are not affected, the dashboard misses them",
		"records", what, "failures", n, "err", err)
}

// Job is what a worker keeps of one job for Horizon.
type Job struct {
	Job     rdb.HorizonJob
	Started time.Time    // when the job was taken, on the Horizon clock: the start of the runtime
	Failure *rdb.Failure // set when the job is failed: its deletion records that
}

// Finished queues the records of a job deleted from :reserved: failed (JobDeleted with
// hasFailed, then JobFailed), or completed with its metrics (JobDeleted). With
// reserved (a completed job only), the job's reserved record was not sent: it goes with
// the completion.
func (h *Recorder) Finished(ctx context.Context, p redis.Scripter, j *Job, reserved bool) {
	if j.Failure != nil {
		if err := h.Rec.Failed(ctx, p, j.Job, *j.Failure); err != nil {
			h.Failed("failed", err)
		}
		return
	}
	if reserved {
		if _, err := h.Rec.ReservedCompleted(ctx, p, j.Job); err != nil {
			h.Failed("completed", err)
			return
		}
	} else if err := h.Rec.Completed(ctx, p, j.Job); err != nil {
		h.Failed("completed", err)
		return
	}
	h.Rec.Metrics(ctx, p, j.Job.Queue, j.Job.Name, j.Started)
}

// LoadScripts sends Horizon's scripts to the server once. A push's record must run
// inside the push's MULTI: a script missing there would be run again only after the job
// is already visible to workers.
func (h *Recorder) LoadScripts(ctx context.Context) {
	if h.scripts.Load() {
		return
	}
	if err := h.Rec.LoadScripts(ctx, h.Client); err != nil {
		h.Failed("scripts", err)
		return
	}
	h.scripts.Store(true)
}
