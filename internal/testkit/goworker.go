package testkit

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq"
)

// GoWorker runs a Go worker until stop is called; events are kept.
type GoWorker struct {
	cancel context.CancelFunc
	done   chan error
	mu     sync.Mutex
	events []laraq.Event
}

// StartGoWorker runs a worker on conn in the background until Stop or the end of the test.
func StartGoWorker(t testing.TB, conn *laraq.Connection, jobs *laraq.Jobs, cfg laraq.WorkerConfig) *GoWorker {
	t.Helper()
	g := &GoWorker{done: make(chan error, 1)}
	onEvent := cfg.OnEvent
	cfg.OnEvent = func(e laraq.Event) {
		g.mu.Lock()
		g.events = append(g.events, e)
		g.mu.Unlock()
		if onEvent != nil {
			onEvent(e)
		}
	}
	if cfg.Sleep == 0 {
		cfg.Sleep = 50 * time.Millisecond
	}
	w, err := laraq.NewWorker(conn, jobs, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	g.cancel = cancel
	go func() { g.done <- w.Run(ctx) }()
	t.Cleanup(func() { g.Stop(t) })
	return g
}

// Stop cancels the worker and waits for Run to return; an error of Run fails the test.
func (g *GoWorker) Stop(t testing.TB) {
	if g.cancel == nil {
		return
	}
	g.cancel()
	g.cancel = nil
	select {
	case err := <-g.done:
		if err != nil {
			t.Errorf("worker: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Errorf("worker did not stop")
	}
}

// Count is how many events of kind the worker emitted.
func (g *GoWorker) Count(kind laraq.EventKind) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	n := 0
	for _, e := range g.events {
		if e.Kind == kind {
			n++
		}
	}
	return n
}

// WaitFor waits until cond holds, or fails the test after d.
func WaitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
