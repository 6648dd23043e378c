package interop

import (
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

// Helpers of the tests that move a job class from PHP to Go (encrypted, unique, batched
// and long jobs) on every release.

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
