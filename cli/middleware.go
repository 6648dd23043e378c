package cli

import (
	"flag"
	"fmt"
	"os"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/middleware"
)

const middlewareUsage = `
Job middleware: a Go worker runs Laravel's job middleware (WithoutOverlapping,
RateLimited, ThrottlesExceptions ...) with the keys, values and expiries PHP's write, so
that both share one overlap lock and one rate limit: those ->through() put in a payload,
those the Go types of this binary declare, and, for classes without Go type (--forward),
those given by name:

  --middleware 'App\Jobs\SyncOrder=without-overlapping:orderId,release-after=10'
  --middleware 'App\Jobs\SendMail=rate-limited:emails;throttles-exceptions,max-attempts=5,backoff=60'
  --limiter 'emails=10/minute,by-property=userId;1000/day'

the key taken from the command's property as the class's middleware() takes it
($this->orderId). Both flags repeat; --middleware-file FILE holds one spec a line (a
limiter's line starts with "limiter "; # starts a comment). A rate limiter the PHP
application defines with RateLimiter::for must be declared with the same name and limits.
docs/middleware.md lists every middleware and option.`

// middlewareFlags are work's --middleware, --limiter and --middleware-file.
type middlewareFlags struct {
	specs *middleware.Specs
	file  string
}

func addMiddlewareFlags(fs *flag.FlagSet) *middlewareFlags {
	m := &middlewareFlags{specs: middleware.NewSpecs()}
	fs.Func("middleware", "run Laravel job middleware around a class's jobs: `CLASS=MIDDLEWARE[;MIDDLEWARE...]` (repeatable)",
		func(s string) error { return m.specs.AddMiddleware(s) })
	fs.Func("limiter", "declare a rate limiter as PHP's RateLimiter::for: `NAME=LIMIT[;LIMIT...]`, e.g. emails=10/minute (repeatable)",
		func(s string) error { return m.specs.AddLimiter(s) })
	fs.StringVar(&m.file, "middleware-file", "", "read --middleware and --limiter specs from `FILE`, one a line")
	return m
}

// apply reads the file and puts the specs in cfg.
func (m *middlewareFlags) apply(cfg *laraq.WorkerConfig) error {
	if m.file != "" {
		f, err := os.Open(m.file)
		if err != nil {
			return fmt.Errorf("--middleware-file: %v", err)
		}
		defer f.Close()
		if err := m.specs.ReadFile(f); err != nil {
			return fmt.Errorf("--middleware-file %s: %v", m.file, err)
		}
	}
	cfg.ClassMiddleware, cfg.Limiters = m.specs.Classes, m.specs.Limiters
	return nil
}
