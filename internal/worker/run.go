package worker

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/middleware"
)

// The run stage: the handler, under the job's timeout, inside its pipeline (the
// middleware PHP's CallQueuedHandler runs around handle()), while the job's reservation
// is kept alive. Its result goes to the settle stage.

// runner runs handlers.
type runner struct {
	base
	jobs    *job.Jobs
	settler *settler
	watch   *watch
	uniques *uniques
	batches *batches
	props   *properties
	// abandoned counts handlers still running after their job was given up on.
	abandoned *atomic.Int64
}

// run runs the handler under the job's timeout, on the job's own goroutine, and
// settles its outcome. When the job's context ends (timeout or hard stop) and the
// handler has not returned abandonWait later, the watch takes the job over: it settles
// the timeout (or leaves the job reserved at shutdown) and frees the slot, so a handler
// that ignores its context cannot block the worker; whatever that handler returns later
// is only logged. takenOver reports that case.
func (n *runner) run(r *run, a *attempt, h job.HandlerFunc, registered []job.Middleware) (takenOver bool) {
	a.timeout = n.cfg.Timeout
	if t := a.job.Payload.Timeout; t != nil {
		// PHP arms pcntl_alarm(max(timeout, 0)); alarm 0 means none.
		a.timeout = time.Duration(*t) * time.Second
		if *t <= 0 || *t > int64(365*24*time.Hour/time.Second) {
			a.timeout = -1
		}
	}
	n.watch.add(r, a) // the timeout, the reservation heartbeat
	err := job.Call(&a.hctx, n.pipeline(a, h, registered), a.job)
	if !n.watch.remove(a) {
		n.abandoned.Add(-1)
		n.log.Warn("abandoned handler returned", "job", a.job.Name, "id", a.job.ID, "err", err)
		return true
	}
	n.props.check(a)
	timedOut := errors.Is(a.hctx.Err(), context.DeadlineExceeded)
	n.settler.applyOutcome(r, a, err, time.Since(a.started), a.timeout, timedOut)
	a.hctx.cancel(context.Canceled) // what the handler started with its context ends with it
	return false
}

// pipeline is what CallQueuedHandler::dispatchThroughMiddleware runs, after what a Go
// worker adds outermost (a job of a cancelled batch whose type says SkipIfBatchCancelled
// goes no further; the worker's middleware; the registration's): the class's
// middleware() — those the worker's config gives the class by name, then its Go type's
// Middleware() —, then those ->through() put in the payload; at the end the release of
// a ShouldBeUniqueUntilProcessing job's lock (or just after the handler, when the handler
// named it), then the handler, whose panic becomes an exception the middleware see, as
// PHP's see a Throwable.
func (n *runner) pipeline(a *attempt, h job.HandlerFunc, registered []job.Middleware) job.HandlerFunc {
	handle := func(ctx context.Context, info *job.JobInfo) error {
		n.uniques.beforeHandle(ctx, a)
		err := h(ctx, info)
		n.uniques.afterHandler(ctx, a)
		return err
	}
	return func(ctx context.Context, info *job.JobInfo) error {
		if n.batches.skipCancelled(ctx, a) {
			return &job.MiddlewareDecision{By: "SkipIfBatchCancelled"}
		}
		ms, err := n.middleware(a, registered)
		if err != nil {
			return err
		}
		if len(ms) == 0 {
			return handle(ctx, info)
		}
		var next func(i int) job.Next
		next = func(i int) job.Next {
			if i == len(ms) {
				return func(ctx context.Context) error { return job.Call(ctx, handle, info) }
			}
			return func(ctx context.Context) error { return handleNamed(ctx, ms[i], info, next(i+1)) }
		}
		return next(0)(ctx)
	}
}

// middleware is the attempt's list, outermost first; nil for a job without any (the
// common case, which costs a few map lookups and a scan of the command's text). A
// ->through() object this worker cannot run, or a command its Go type cannot hold,
// fails the job rather than let it run without the guard PHP would have applied.
func (n *runner) middleware(a *attempt, registered []job.Middleware) ([]job.Middleware, error) {
	var ms []job.Middleware
	ms = append(ms, n.cfg.Middleware...)
	ms = append(ms, registered...)
	ms = append(ms, n.cfg.ClassMiddleware[a.job.Class]...)
	if cmd, _ := a.command(n.jobs); a.traits != nil && a.traits.Middleware {
		if a.cmdErr != nil {
			return nil, a.cmdErr // a *DecodeError: PHP could not unserialize it either
		}
		if m, ok := cmd.(job.MiddlewareMethod); ok {
			own := m.Middleware()
			for i, x := range own {
				if x == nil {
					return nil, job.Fail(fmt.Errorf("%s: Middleware() returned a nil middleware at %d", a.job.Class, i))
				}
			}
			ms = append(ms, own...)
		}
	}
	through, err := n.through(a)
	if err != nil {
		return nil, err
	}
	return append(ms, through...), nil
}

// throughMarker opens Queueable's public middleware property in serialize() output; a
// command whose every one holds the empty array (its default, which SerializesModels
// from 9.4 also leaves out) carries no ->through() middleware.
const throughMarker = `s:10:"middleware";a:`

// through reads the middleware ->through() put in the payload (Queueable's middleware
// property) into their Go forms. An encrypted command is decrypted to look.
func (n *runner) through(a *attempt) ([]job.Middleware, error) {
	info := a.job
	if !info.IsObjectJob() {
		return nil, nil
	}
	if c := info.Payload.Command; !job.LooksEncrypted(c) && !job.MayHold(c, throughMarker, "0:{}") {
		return nil, nil
	}
	cmd, err := info.Value()
	if err != nil {
		return nil, err // a *DecodeError fails the job, a *DecryptError is retried, as in PHP
	}
	ms, err := n.cfg.ThroughDecoders.Through(cmd)
	if err != nil {
		return nil, job.Fail(err)
	}
	return ms, nil
}

// handleNamed runs one middleware and names it on a decision it took itself, one it
// did not take from the rest: Laravel's middleware name theirs; an application's own
// returning job.ReleaseAfter, Delete or Fail is named by its Name() or Go type.
func handleNamed(ctx context.Context, m job.Middleware, info *job.JobInfo, next job.Next) error {
	var inner error
	called := false
	err := m.Handle(ctx, info, func(ctx context.Context) error {
		called = true
		inner = next(ctx)
		return inner
	})
	if err == nil || called && inner != nil && errors.Is(err, inner) || !job.IsDecision(err) {
		return err
	}
	var d *job.MiddlewareDecision
	if errors.As(err, &d) {
		return err
	}
	return &job.MiddlewareDecision{By: middlewareName(m), Err: err}
}

// middlewareName names a middleware in events and logs.
func middlewareName(m job.Middleware) string {
	if name := middleware.Name(m); name != "" {
		return name
	}
	if _, ok := m.(job.MiddlewareFunc); ok {
		return "MiddlewareFunc"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", m), "*")
}
