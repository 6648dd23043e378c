package middleware

import "context"

// Next runs the rest of the pipeline: the next middleware, at the end the handler. Its
// error is the handler's, or a decision (ReleaseError, FailError, DeleteError,
// SkipError) of a middleware further in.
type Next func(ctx context.Context) error

// Middleware wraps one attempt of a job, as a PHP job middleware's handle($job, $next)
// does: it calls next to run the rest, or returns a decision instead.
type Middleware interface {
	Handle(ctx context.Context, job *Job, next Next) error
}

// Func is a Middleware written as a plain function around the next step.
type Func func(ctx context.Context, job *Job, next Next) error

// Handle calls f.
func (f Func) Handle(ctx context.Context, job *Job, next Next) error { return f(ctx, job, next) }

// Run sends one attempt through middleware, the first outermost, as Laravel's Pipeline
// does with CallQueuedHandler's list (the command's middleware(), then the middleware
// property ->through() filled), and at the end runs handler. handler should turn a panic
// into an error itself, so that ThrottlesExceptions and FailOnException see it as PHP's
// see a Throwable.
func Run(ctx context.Context, job *Job, middleware []Middleware, handler Next) error {
	if len(middleware) == 0 {
		return handler(ctx)
	}
	next := handler
	for i := len(middleware) - 1; i >= 0; i-- {
		m, inner := middleware[i], next
		next = func(ctx context.Context) error { return m.Handle(ctx, job, inner) }
	}
	return next(ctx)
}
