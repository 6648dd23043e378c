package laraq_test

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// Helpers of the tests that move a job class from PHP to Go (encrypted, unique, batched
// and long jobs) on every release.

// peerRelease is the exact release a major's peer runs.
// phpFleet is PHP workers (work.php, Laravel's own Worker) running in the background.
type phpFleet struct {
	t    testing.TB
	cmds []*exec.Cmd
	out  []*bytes.Buffer
	wg   sync.WaitGroup
}

// startFleet starts n work.php daemons with args; stop ends them (SIGTERM: each finishes
// its current job, as under supervisor).
func startFleet(t testing.TB, env testenv.PHPEnv, n int, args ...string) *phpFleet {
	t.Helper()
	f := &phpFleet{t: t}
	for range n {
		cmd := env.Command("work.php", args...)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			f.stop()
			t.Fatalf("work.php: %v", err)
		}
		f.cmds = append(f.cmds, cmd)
		f.out = append(f.out, &out)
		f.wg.Add(1)
		go func() { defer f.wg.Done(); _ = cmd.Wait() }()
	}
	t.Cleanup(f.stop)
	return f
}

func (f *phpFleet) stop() {
	for _, c := range f.cmds {
		if c.Process != nil {
			_ = c.Process.Signal(syscall.SIGTERM)
		}
	}
	done := make(chan struct{})
	go func() { f.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		for _, c := range f.cmds {
			_ = c.Process.Kill()
		}
		<-done
	}
	f.cmds = nil
}

// output is what the PHP workers printed.
func (f *phpFleet) output() string {
	var b strings.Builder
	for _, o := range f.out {
		b.WriteString(o.String())
	}
	return b.String()
}

// goWorker runs a Go worker until stop is called; events are kept.
type goWorker struct {
	cancel context.CancelFunc
	done   chan error
	mu     sync.Mutex
	events []laraq.Event
}

func startGoWorker(t testing.TB, conn *laraq.Connection, jobs *laraq.Jobs, cfg laraq.WorkerConfig) *goWorker {
	t.Helper()
	g := &goWorker{done: make(chan error, 1)}
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
	t.Cleanup(func() { g.stop(t) })
	return g
}

func (g *goWorker) stop(t testing.TB) {
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

// count is how many events of kind the worker emitted.
func (g *goWorker) count(kind laraq.EventKind) int {
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

// waitFor waits until cond holds, or fails the test after d.
func waitFor(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
