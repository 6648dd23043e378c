package worker

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/laraq/laraq/internal/job"
)

// The run stage: the handler, under the job's timeout, inside its pipeline (the
// middleware PHP's CallQueuedHandler runs around handle()), while the job's reservation
// is kept alive. Its result goes to the settle stage.

// runner runs handlers.
type runner struct {
	base
	settler *settler
	holder  *holder
	uniques *uniques
	batches *batches
	props   *properties
	// abandoned counts handlers still running after their job was given up on.
	abandoned *atomic.Int64
}

// run runs the handler under the job's timeout, on the job's own goroutine, and
// settles its outcome. When the job's context ends (timeout or hard stop) and the
// handler has not returned abandonWait later, a watchdog takes the job over: it settles
// the timeout (or leaves the job reserved at shutdown) and frees the slot, so a handler
// that ignores its context cannot block the worker; whatever that handler returns later
// is only logged. takenOver reports that case.
func (n *runner) run(r *run, a *attempt, h job.HandlerFunc) (takenOver bool) {
	timeout := n.cfg.Timeout
	if t := a.job.Payload.Timeout; t != nil {
		// PHP arms pcntl_alarm(max(timeout, 0)); alarm 0 means none.
		timeout = time.Duration(*t) * time.Second
		if *t <= 0 || *t > int64(365*24*time.Hour/time.Second) {
			timeout = -1
		}
	}
	var hctx context.Context
	var cancel context.CancelFunc
	if timeout > 0 {
		hctx, cancel = context.WithTimeout(r.hardCtx, timeout)
	} else {
		hctx, cancel = context.WithCancel(r.hardCtx)
	}
	defer cancel()

	const (
		running = iota
		returned
		abandoned
	)
	var state atomic.Int32
	start := time.Now()
	stopWatch := context.AfterFunc(hctx, func() {
		time.AfterFunc(abandonWait, func() {
			if !state.CompareAndSwap(running, abandoned) {
				return
			}
			n.abandoned.Add(1)
			if errors.Is(hctx.Err(), context.DeadlineExceeded) {
				n.settler.timedOut(r, a, timeout, time.Since(start))
			} else {
				n.log.Warn("job still running at shutdown; it stays reserved until retry_after",
					"job", a.job.Name, "id", a.job.ID, "queue", a.queue)
			}
			r.finish(n.cfg.Rest)
		})
	})
	err := n.call(hctx, a, h)
	stopWatch()
	if !state.CompareAndSwap(running, returned) {
		n.abandoned.Add(-1)
		n.log.Warn("abandoned handler returned", "job", a.job.Name, "id", a.job.ID, "err", err)
		return true
	}
	n.props.check(a)
	n.settler.applyOutcome(r, a, err, time.Since(start), timeout, errors.Is(hctx.Err(), context.DeadlineExceeded))
	return false
}

// call runs the job's pipeline while its reservation is kept alive, and stops the
// heartbeat before returning, so that whatever the settle stage does next with the job
// (delete, release, fail) runs with no heartbeat left. A panic anywhere in the pipeline
// becomes a *job.PanicError.
func (n *runner) call(ctx context.Context, a *attempt, h job.HandlerFunc) error {
	stop := n.holder.whileRunning(ctx, a)
	defer stop()
	return job.Call(ctx, n.pipeline(a, h), a.job)
}

// pipeline is what CallQueuedHandler::dispatchThroughMiddleware runs: the job's
// middleware in order (a job of a cancelled batch whose type says SkipIfBatchCancelled
// goes no further; then the worker's middleware), then, just before the handler, the
// release of a ShouldBeUniqueUntilProcessing job's lock (or just after, when the handler
// named it).
func (n *runner) pipeline(a *attempt, h job.HandlerFunc) job.HandlerFunc {
	handle := func(ctx context.Context, info *job.JobInfo) error {
		n.uniques.beforeHandle(ctx, a)
		err := h(ctx, info)
		n.uniques.afterHandler(ctx, a)
		return err
	}
	mw := n.cfg.Middleware
	return func(ctx context.Context, info *job.JobInfo) error {
		if n.batches.skipCancelled(ctx, a) {
			return nil
		}
		if len(mw) == 0 {
			return handle(ctx, info)
		}
		var next func(i int) job.Next
		next = func(i int) job.Next {
			return func(ctx context.Context) error {
				if i == len(mw) {
					return handle(ctx, info)
				}
				return mw[i].Handle(ctx, info, next(i+1))
			}
		}
		return next(0)(ctx)
	}
}
