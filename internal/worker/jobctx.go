package worker

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"time"
)

// handlerCtx is the context a handler runs with: the run's hard-stop context's values,
// the job's deadline, and its cancellation, which the watch decides (the timeout, the
// hard stop) instead of a timer and a cancelCtx per job. It lives inside the attempt, so
// that a job costs no context allocation, and it is a context.Context in every way a
// handler can see: Deadline reports the timeout, Err is context.DeadlineExceeded after
// it and context.Canceled after a hard stop, and contexts derived from it are cancelled
// with it (it offers AfterFunc, which the context package uses for that).
type handlerCtx struct {
	parent   context.Context // for Value: the values of the Run's context
	deadline time.Time       // zero: no timeout

	mu     sync.Mutex
	done   atomic.Pointer[chan struct{}] // made on first Done, or closedDone
	err    error
	afters map[*afterFunc]struct{}
}

type afterFunc struct{ f func() }

// closedDone is the Done channel of a context cancelled before anyone asked for one,
// which such a context stores as closedDonePtr: most handlers never ask, and every job's
// context is cancelled when it ends, so this spares an allocation per job.
var (
	closedDone    = func() chan struct{} { c := make(chan struct{}); close(c); return c }()
	closedDonePtr = &closedDone
)

// reset readies c for a new attempt under parent.
func (c *handlerCtx) reset(parent context.Context, deadline time.Time) {
	c.parent, c.deadline = parent, deadline
}

func (c *handlerCtx) Deadline() (time.Time, bool) { return c.deadline, !c.deadline.IsZero() }

// Value is the Run's context's, except the context package's own marker of the nearest
// cancelCtx (an *int key whose value is a *context.cancelCtx): a handlerCtx is cancelled
// on its own, so context.Cause and derived contexts must not take the Run's for it.
func (c *handlerCtx) Value(key any) any {
	v := c.parent.Value(key)
	if _, isInt := key.(*int); isInt && v != nil && reflect.TypeOf(v).String() == "*context.cancelCtx" {
		return nil
	}
	return v
}

func (c *handlerCtx) Done() <-chan struct{} {
	if d := c.done.Load(); d != nil {
		return *d
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if d := c.done.Load(); d != nil {
		return *d
	}
	ch := make(chan struct{})
	c.done.Store(&ch)
	return ch
}

func (c *handlerCtx) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// cancel ends the context with err (context.DeadlineExceeded or context.Canceled); a
// second cancel does nothing.
func (c *handlerCtx) cancel(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	if d := c.done.Load(); d != nil {
		close(*d)
	} else {
		c.done.Store(closedDonePtr)
	}
	afters := c.afters
	c.afters = nil
	c.mu.Unlock()
	for a := range afters {
		go a.f()
	}
}

// AfterFunc runs f in its own goroutine once c is done, as context.AfterFunc does; the
// context package calls it to cancel the contexts a handler derives from c. stop keeps f
// from running and reports whether it did.
func (c *handlerCtx) AfterFunc(f func()) (stop func() bool) {
	a := &afterFunc{f: f}
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		go f()
		return func() bool { return false }
	}
	if c.afters == nil {
		c.afters = map[*afterFunc]struct{}{}
	}
	c.afters[a] = struct{}{}
	c.mu.Unlock()
	return func() bool {
		c.mu.Lock()
		defer c.mu.Unlock()
		_, ok := c.afters[a]
		delete(c.afters, a)
		return ok
	}
}

var _ context.Context = (*handlerCtx)(nil)
