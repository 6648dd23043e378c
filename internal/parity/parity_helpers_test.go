package parity

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

// runPHPStep runs Laravel's own Worker (work.php) for at most one job. A worker the
// timeout handler killed is reported by died; any other failure ends the test.
func runPHPStep(t *testing.T, env testenv.PHPEnv, args ...string) (output string, died bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := env.Command("work.php", args...)
	cmd := exec.CommandContext(ctx, base.Path, base.Args[1:]...)
	cmd.Env = base.Env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return string(out), true
		}
	}
	if err != nil {
		t.Fatalf("work.php %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), false
}
