package chaos

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Proc is a child process whose stdout and stderr go to files, so that what it wrote
// before a kill -9 is still there to read. It dies with the test process
// (parent-death signal).
type Proc struct {
	Name   string
	Stdout string // path of the stdout file
	Stderr string // path of the stderr file

	cmd     *exec.Cmd
	started time.Time
	done    chan struct{}

	mu       sync.Mutex
	err      error     // Wait's result
	exited   time.Time // when Wait returned
	killedAt time.Time // when Kill9 was sent (zero if never)
	termAt   time.Time // when the first SIGTERM was sent (zero if never)
}

// StartProc starts cmd with its output in dir/name.out and dir/name.err.
func StartProc(dir, name string, cmd *exec.Cmd) (*Proc, error) {
	p := &Proc{Name: name, Stdout: filepath.Join(dir, name+".out"), Stderr: filepath.Join(dir, name+".err"), cmd: cmd, done: make(chan struct{})}
	out, err := os.Create(p.Stdout)
	if err != nil {
		return nil, err
	}
	defer out.Close()
	errf, err := os.Create(p.Stderr)
	if err != nil {
		return nil, err
	}
	defer errf.Close()
	cmd.Stdout, cmd.Stderr = out, errf
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("chaos: starting %s: %w", name, err)
	}
	p.started = time.Now()
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.err, p.exited = err, time.Now()
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

// Pid is the process id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Running reports whether the process has not exited yet.
func (p *Proc) Running() bool {
	select {
	case <-p.done:
		return false
	default:
		return true
	}
}

// Done is closed when the process has exited.
func (p *Proc) Done() <-chan struct{} { return p.done }

// Kill9 sends SIGKILL, waits for the process to be gone and records when it was seen
// gone: the process may still run for a while after the signal is sent (a loaded
// machine delays its delivery), so only the time after the exit is certain to follow
// everything the process did.
func (p *Proc) Kill9() time.Time {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.killedAt.IsZero() {
		p.killedAt = time.Now()
	}
	return p.killedAt
}

// Signal sends sig; the first SIGTERM's time is recorded.
func (p *Proc) Signal(sig syscall.Signal) error {
	if sig == syscall.SIGTERM {
		p.mu.Lock()
		if p.termAt.IsZero() {
			p.termAt = time.Now()
		}
		p.mu.Unlock()
	}
	return p.cmd.Process.Signal(sig)
}

// Wait waits up to d for the process to exit and returns its exit status (-1 when it
// was killed by a signal).
func (p *Proc) Wait(d time.Duration) (int, error) {
	if p.Running() {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-p.done:
		case <-t.C:
			return 0, fmt.Errorf("chaos: %s still running after %s", p.Name, d)
		}
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		return 0, nil
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode(), nil
	}
	return 0, p.err
}

// WaitLog waits up to d until the process' stdout or stderr contains s; it fails when
// the process exits first.
func (p *Proc) WaitLog(s string, d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		for _, f := range []string{p.Stderr, p.Stdout} {
			if b, err := os.ReadFile(f); err == nil && strings.Contains(string(b), s) {
				return nil
			}
		}
		if !p.Running() {
			return fmt.Errorf("chaos: %s exited before writing %q:\n%s", p.Name, s, p.Output(4000))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("chaos: %s did not write %q within %s:\n%s", p.Name, s, d, p.Output(4000))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// ExitStatus is the exit status once the process has exited (-1: ended by a signal).
func (p *Proc) ExitStatus() (code int, exited bool) {
	if p.Running() {
		return 0, false
	}
	code, _ = p.Wait(0)
	return code, true
}

// KilledAt is when Kill9 saw the process gone; zero when it was never sent.
func (p *Proc) KilledAt() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.killedAt
}

// StopTime is how long the process took to exit after its first SIGTERM; zero when it
// got none or has not exited.
func (p *Proc) StopTime() time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.termAt.IsZero() || p.exited.IsZero() {
		return 0
	}
	return p.exited.Sub(p.termAt)
}

// Output returns the tails of stdout and stderr, for failure messages.
func (p *Proc) Output(max int) string {
	tail := func(path string) string {
		b, _ := os.ReadFile(path)
		if len(b) > max {
			b = b[len(b)-max:]
		}
		return string(b)
	}
	return fmt.Sprintf("--- %s stdout (tail)\n%s\n--- %s stderr (tail)\n%s", p.Name, tail(p.Stdout), p.Name, tail(p.Stderr))
}
