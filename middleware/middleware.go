package middleware

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/laraq/laraq/internal/job"
)

// Run sends one attempt of job through middleware, the first outermost, as Laravel's
// Pipeline does with CallQueuedHandler's list, and at the end runs handler. A worker
// builds its own pipeline (the worker's, the registration's, the command's and the
// payload's middleware); Run is for tests and for code that composes middleware itself.
// handler should turn a panic into an error itself, so that ThrottlesExceptions and
// FailOnException see it as PHP's see a Throwable.
func Run(ctx context.Context, info *job.JobInfo, middleware []job.Middleware, handler job.Next) error {
	next := handler
	for i := len(middleware) - 1; i >= 0; i-- {
		m, inner := middleware[i], next
		next = func(ctx context.Context) error { return m.Handle(ctx, info, inner) }
	}
	return next(ctx)
}

// Name is the name a middleware's decisions are reported under: Laravel's class name
// (without namespace) for the middleware of this package, the Name() of any other that
// has that method, else "".
func Name(m job.Middleware) string {
	if n, ok := m.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}

// The decisions a middleware takes instead of running the rest of the pipeline are
// laraq's own outcome errors — job.ReleaseAfter, job.Delete(), job.Fail(err), or a skip
// — wrapped in a *job.MiddlewareDecision naming the middleware.

// released is $job->release($seconds) by the middleware by.
func released(by string, seconds int64) error {
	return releasedFor(by, time.Duration(max(seconds, 0))*time.Second)
}

func releasedFor(by string, d time.Duration) error {
	return &job.MiddlewareDecision{By: by, Err: job.ReleaseAfter(d)}
}

// skipped is a return without calling $next: the job is done without running.
func skipped(by string) error { return &job.MiddlewareDecision{By: by} }

// deleted is $job->delete().
func deleted(by string) error { return &job.MiddlewareDecision{By: by, Err: job.Delete()} }

// failed is $job->fail($err).
func failed(by string, err error) error {
	return &job.MiddlewareDecision{By: by, Err: job.Fail(err)}
}

// isDecision says err is an outcome rather than an exception (see job.IsDecision).
func isDecision(err error) bool { return job.IsDecision(err) }

// ErrNoEnv is the error of a Laravel middleware run without a worker's environment
// (WithEnv): outside a worker, in a unit test of a handler, it cannot reach the stores
// its state lives in.
var ErrNoEnv = errors.New("needs the worker's environment (the cache stores, Redis and named limiters): it runs inside a laraq worker, or under middleware.WithEnv")

// envOf is the attempt's environment, or an error naming the middleware.
func envOf(ctx context.Context, by string) (*Env, error) {
	if env := EnvFrom(ctx); env != nil {
		return env, nil
	}
	return nil, fmt.Errorf("%s %w", by, ErrNoEnv)
}
