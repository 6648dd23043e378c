// Package middleware is Laravel's job middleware (Illuminate\Queue\Middleware) in Go:
// WithoutOverlapping, RateLimited, RateLimitedWithRedis, ThrottlesExceptions,
// ThrottlesExceptionsWithRedis, Skip, SkipIfBatchCancelled, FailOnException and 13.x's
// Release (ReleaseWhen here), with the keys, values and expiries each Laravel release
// writes, so that PHP and Go workers of one fleet share one overlap lock, one rate limit
// and one exception count.
//
// A middleware wraps one attempt of a job: Handle(ctx, job, next) runs the rest through
// next, or returns a decision instead — ReleaseError (the job comes back after a delay),
// SkipError (completed without running, as CallQueuedHandler completes a job whose
// middleware returned without calling $next), DeleteError, FailError. Run sends an attempt
// through a list of them, the first outermost, as Laravel's Pipeline does.
//
//	limiters := middleware.NewLimiters().For("emails", func(*middleware.Job) []middleware.Limit {
//		return []middleware.Limit{middleware.PerMinute(10)}
//	})
//	env := &middleware.Env{Cache: store, Redis: durationLimiter, Limiters: limiters}
//	job := &middleware.Job{Class: `App\Jobs\SendMail`, UUID: uuid, Env: env}
//	err := middleware.Run(ctx, job, []middleware.Middleware{
//		middleware.WithoutOverlapping("order-7").ReleaseAfter(time.Minute).ExpireAfter(3 * time.Minute),
//		middleware.RateLimited("emails"),
//	}, handler)
//
// # Where the state lives
//
// What PHP resolves from the container, Env holds: the default cache store (Cache::class)
// for WithoutOverlapping's lock, the limiter store (cache.limiter) for the RateLimiter of
// RateLimited and ThrottlesExceptions — either rdb.RedisStore or cache/database's Store,
// through cache.Store —, the default Redis connection for the DurationLimiter of the
// WithRedis variants, the named limiters PHP defines with RateLimiter::for (Limiters),
// the clock. Every store operation is the one PHP's Repository makes, in the same order
// (package rdb owns the key names and scripts), so a Go worker makes the round trips a
// PHP worker makes and leaves the same keys, values and TTLs; the parity tests compare
// both, key by key, on every release the peers run.
//
// # Per release
//
// Env.Release picks the key shapes: WithoutOverlapping names the job by its class, from
// 12.41 by its displayName(), hashed with xxh128 from 12.54; ThrottlesExceptions hashes
// the class with md5 up to 11.x, xxh128 from 12.0, the displayName() from 12.41; the
// RateLimiter reads its counter under a twice-cleaned key before 9.14; limits that share
// a key get fallback keys from 11.29. docs/middleware.md lists every difference.
//
// # From the payload
//
// ->through([...]) serializes middleware objects into the command's middleware property;
// Decoders.Through turns them into their Go forms (LaravelDecoders knows Laravel's
// classes), and fails with an *UnknownMiddlewareError for any other class, so that the
// worker fails the job rather than run it unguarded.
package middleware
