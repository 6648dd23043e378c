package worker

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"
)

// The watch: one goroutine per Run supervises every running handler, instead of a timer,
// a context and a heartbeat goroutine per job. It ends a handler's context at its
// timeout (or at the hard stop), takes the job over when the handler has not returned
// abandonWait later — so a handler that ignores its context cannot block the worker —,
// and keeps the reservation of a long-running job alive (see hold.go: the reservation
// heartbeat). A job shorter than the heartbeat's interval costs it two map operations.

// The states of a running handler (attempt.state): the first to leave running wins.
const (
	handlerRunning int32 = iota
	handlerReturned
	handlerAbandoned
)

// watch supervises the handlers of one Run.
type watch struct {
	base
	settler   *settler
	abandoned *atomic.Int64 // handlers still running after their job was given up on
	every     time.Duration // the reservation heartbeat's interval; 0: off

	mu      sync.Mutex
	beat    sync.Cond // an extension finished
	running map[*attempt]struct{}
	wake    chan struct{} // an earlier deadline than the one the loop sleeps to
	next    time.Time     // when the loop wakes next
}

func newWatch(b base, s *settler, abandoned *atomic.Int64, every time.Duration) *watch {
	w := &watch{base: b, settler: s, abandoned: abandoned, every: every,
		running: map[*attempt]struct{}{}, wake: make(chan struct{}, 1)}
	w.beat.L = &w.mu
	return w
}

// start runs the watch for r until stop is called.
func (w *watch) start(r *run) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.loop(r, quit)
	}()
	return func() {
		close(quit)
		<-done
	}
}

// add registers a's handler, about to run with a.timeout (≤ 0: none).
func (w *watch) add(r *run, a *attempt) {
	a.started = time.Now()
	var deadline time.Time
	if a.timeout > 0 {
		deadline = a.started.Add(a.timeout)
	}
	a.hctx.reset(r.hardCtx, deadline)
	a.state.Store(handlerRunning)
	w.mu.Lock()
	w.running[a] = struct{}{}
	if w.every > 0 && len(a.popped.Reserved) > 0 {
		a.nextBeat = a.started.Add(w.every)
	}
	first := w.earliest(a)
	nudge := !first.IsZero() && (w.next.IsZero() || first.Before(w.next))
	w.mu.Unlock()
	if nudge {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// remove unregisters a's handler, which returned, and waits for an extension of its
// reservation under way, so that what the settle stage does next runs with no heartbeat
// left. false: the watch took the job over first (the handler came back too late).
func (w *watch) remove(a *attempt) bool {
	if !a.state.CompareAndSwap(handlerRunning, handlerReturned) {
		return false
	}
	w.mu.Lock()
	delete(w.running, a)
	for a.beating {
		w.beat.Wait()
	}
	w.mu.Unlock()
	return true
}

// earliest is a's next moment of interest: its deadline, its takeover, its next beat.
// w.mu is held.
func (w *watch) earliest(a *attempt) time.Time {
	var t time.Time
	consider := func(x time.Time) {
		if !x.IsZero() && (t.IsZero() || x.Before(t)) {
			t = x
		}
	}
	if a.hctx.Err() == nil {
		if d, ok := a.hctx.Deadline(); ok {
			consider(d)
		}
		consider(a.nextBeat)
	}
	consider(a.abandonAt)
	return t
}

func (w *watch) loop(r *run, quit chan struct{}) {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	hardStop := r.hardCtx.Done()
	for {
		next := w.tick(r, time.Now())
		d := time.Hour
		if !next.IsZero() {
			d = max(time.Until(next), time.Millisecond)
		}
		timer.Reset(d)
		select {
		case <-quit:
			return
		case <-hardStop:
			hardStop = nil
		case <-w.wake:
		case <-timer.C:
		}
	}
}

// tick does what is due at now: ends the contexts whose deadline passed (or all, after
// the hard stop), takes over the jobs whose handler did not return abandonWait later,
// starts the extensions of reservations due; it returns when it is next needed.
func (w *watch) tick(r *run, now time.Time) time.Time {
	var takeovers, beats []*attempt
	hard := r.hardCtx.Err() != nil
	w.mu.Lock()
	next := time.Time{}
	for a := range w.running {
		if a.hctx.Err() == nil {
			if dl, ok := a.hctx.Deadline(); ok && !now.Before(dl) {
				a.hctx.cancel(context.DeadlineExceeded)
				a.abandonAt = now.Add(abandonWait)
			} else if hard {
				a.hctx.cancel(context.Canceled)
				a.abandonAt = now.Add(abandonWait)
			}
		}
		if !a.abandonAt.IsZero() && !now.Before(a.abandonAt) {
			if a.state.CompareAndSwap(handlerRunning, handlerAbandoned) {
				delete(w.running, a)
				takeovers = append(takeovers, a)
				continue
			}
		}
		if a.hctx.Err() == nil && !a.beating && !a.nextBeat.IsZero() && !now.Before(a.nextBeat) {
			a.beating = true
			beats = append(beats, a)
		}
		if t := w.earliest(a); !t.IsZero() && (next.IsZero() || t.Before(next)) && !a.beating {
			next = t
		}
	}
	w.next = next
	w.mu.Unlock()
	for _, a := range takeovers {
		go w.takeOver(r, a)
	}
	for _, a := range beats {
		go w.extend(a)
	}
	return next
}

// takeOver settles a job whose handler outlived its context by abandonWait: the timeout
// rules, or, at the hard stop, nothing (the job stays reserved until retry_after), and
// frees its slot, with a new goroutine for it. Whatever the handler returns later is only logged (runner.run).
func (w *watch) takeOver(r *run, a *attempt) {
	w.abandoned.Add(1)
	if errors.Is(a.hctx.Err(), context.DeadlineExceeded) {
		w.settler.timedOut(r, a, a.timeout, time.Since(a.started))
	} else {
		w.log.Warn("job still running at shutdown; it stays reserved until retry_after",
			"job", a.job.Name, "id", a.job.ID, "queue", a.queue)
	}
	go r.serve() // the slot's goroutine is the abandoned handler's
	r.finish(w.cfg.Rest, a)
}

// extend moves a's reservation to now + retry_after, and the next beat an interval on;
// a reservation found gone is not extended again (another worker may have the job).
func (w *watch) extend(a *attempt) {
	wall := w.expiresAt(time.Now())
	until := w.cfg.Now().Unix() + w.cfg.RetryAfter
	held, err := w.cfg.RDB.ExtendReservation(&a.hctx, a.queue, a.popped.Reserved, until)
	w.mu.Lock()
	a.beating = false
	switch {
	case a.hctx.Err() != nil:
	case err != nil:
		// The next beat tries again; the reservation lasts retry_after meanwhile.
		w.log.Warn("extending a job's reservation failed", "queue", a.queue, "id", a.id(), "err", err)
		a.nextBeat = time.Now().Add(w.every)
	case !held:
		w.log.Warn("a job is no longer reserved (its reservation expired before it could be extended); another worker may run it too",
			"queue", a.queue, "id", a.id(), "retry_after", w.reservation())
		a.nextBeat = time.Time{}
	default:
		a.extendTo(wall)
		a.nextBeat = time.Now().Add(w.every)
	}
	w.beat.Broadcast()
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}
