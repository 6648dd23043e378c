package worker

import (
	"context"
	"errors"
	"testing"
	"time"
)

type ctxKey struct{}

// TestHandlerCtx: the handler's context behaves as context.WithDeadline's would for what a
// handler can see: deadline, values, Done, Err, Cause, and contexts derived from it.
func TestHandlerCtx(t *testing.T) {
	parent, stop := context.WithCancel(context.WithValue(context.Background(), ctxKey{}, "v"))
	defer stop()
	var c handlerCtx
	dl := time.Now().Add(time.Hour)
	c.reset(parent, dl)
	if d, ok := c.Deadline(); !ok || !d.Equal(dl) {
		t.Fatalf("deadline %v %v", d, ok)
	}
	if c.Value(ctxKey{}) != "v" || c.Err() != nil {
		t.Fatalf("value %v err %v", c.Value(ctxKey{}), c.Err())
	}
	child, cancelChild := context.WithTimeout(&c, time.Hour)
	defer cancelChild()
	fired := make(chan struct{})
	stopAfter := context.AfterFunc(&c, func() { close(fired) })
	defer stopAfter()
	done := c.Done()
	c.cancel(context.DeadlineExceeded)
	select {
	case <-done:
	case <-time.After(time.Second):
		t.Fatal("Done not closed")
	}
	select {
	case <-child.Done():
	case <-time.After(time.Second):
		t.Fatal("a derived context was not cancelled")
	}
	select {
	case <-fired:
	case <-time.After(time.Second):
		t.Fatal("AfterFunc did not run")
	}
	if !errors.Is(c.Err(), context.DeadlineExceeded) || !errors.Is(context.Cause(&c), context.DeadlineExceeded) ||
		!errors.Is(child.Err(), context.DeadlineExceeded) {
		t.Errorf("err %v cause %v child %v", c.Err(), context.Cause(&c), child.Err())
	}
	c.cancel(context.Canceled) // a second cancel changes nothing
	if !errors.Is(c.Err(), context.DeadlineExceeded) {
		t.Errorf("err after a second cancel: %v", c.Err())
	}

	var d handlerCtx
	d.reset(parent, time.Time{})
	d.cancel(context.Canceled) // before anyone asked for Done
	select {
	case <-d.Done():
	default:
		t.Fatal("Done of a cancelled context is open")
	}
	if _, ok := d.Deadline(); ok {
		t.Error("a deadline without timeout")
	}
	// Every job's context is cancelled when it ends, mostly without a Done asked for:
	// that costs no allocation.
	// (The contexts live in their attempts, allocated before, as here.)
	ctxs, i := make([]handlerCtx, 101), 0
	if n := testing.AllocsPerRun(100, func() {
		e := &ctxs[i]
		i++
		e.reset(parent, time.Time{})
		e.cancel(context.Canceled)
	}); n != 0 {
		t.Errorf("cancelling a context nobody waited on: %v allocations, want 0", n)
	}
}
