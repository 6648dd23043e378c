package cli

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/laraq/laraq"
)

// Run is the whole program for a main package: it reads os.Args, stops gracefully on
// SIGTERM or SIGINT, and returns the exit status for os.Exit. A second SIGTERM or SIGINT
// while the first one's graceful stop runs ends the process at once, as an operator
// pressing Ctrl-C twice expects; jobs still reserved then come back after retry_after.
func Run(jobs *laraq.Jobs, opts ...Option) int {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		stop() // restores the default action: the next signal terminates the process
	}()
	return Main(ctx, os.Args[1:], append([]Option{WithJobs(jobs)}, opts...)...)
}
