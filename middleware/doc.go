// Package middleware is Laravel's job middleware (Illuminate\Queue\Middleware) in Go:
// WithoutOverlapping, RateLimited, RateLimitedWithRedis, ThrottlesExceptions,
// ThrottlesExceptionsWithRedis, Skip, SkipIfBatchCancelled, FailOnException and 13.x's
// Release (ReleaseWhen here), with the keys, values and expiries each Laravel release
// writes, so that PHP and Go workers of one fleet share one overlap lock, one rate limit
// and one exception count.
//
// Each is a laraq.Middleware: Handle(ctx, job, next) wraps one attempt, running the rest
// through next or deciding instead, with laraq's own outcome errors — laraq.ReleaseAfter
// (the job comes back after a delay, the attempt counted, as $job->release() in a PHP
// middleware), laraq.Delete(), laraq.Fail(err), or a skip (the job is done without
// running, as CallQueuedHandler completes a job whose middleware returned without
// calling $next) — each wrapped in a *laraq.MiddlewareDecision that names the
// middleware, so that events, logs and metrics can say "released by WithoutOverlapping".
//
// A job type declares its middleware as its PHP class does, computed from the command:
//
//	func (j SyncOrder) Middleware() []laraq.Middleware {
//		return []laraq.Middleware{
//			middleware.WithoutOverlapping(strconv.Itoa(j.OrderID)).ReleaseAfter(10 * time.Second),
//			middleware.RateLimited("orders"),
//		}
//	}
//
// and the worker declares the named limits PHP defines with RateLimiter::for:
//
//	cfg.Limiters = middleware.NewLimiters().For("orders", func(*laraq.JobInfo) []middleware.Limit {
//		return []middleware.Limit{middleware.PerMinute(10)}
//	})
//
// A worker also runs, with no Go declaration, the middleware PHP put in the payload with
// ->through([...]) (Decoders.Through), and those a spec gives a class by name
// (ParseClassMiddleware: `laraq work --middleware`).
//
// # Where the state lives
//
// What PHP resolves from the container, Env holds: the default cache store (Cache::class)
// for WithoutOverlapping's lock, the limiter store (cache.limiter) for the RateLimiter of
// RateLimited and ThrottlesExceptions — Laravel's Redis store or cache/database's
// Store, through cache.Store —, the default Redis connection for the DurationLimiter of
// the WithRedis variants, the named limiters, the clock. A worker builds it from its
// Connection and puts it once in its handlers' context (WithEnv); outside a worker a
// Laravel middleware fails with ErrNoEnv rather than run the job unguarded. Every store
// operation is the one PHP's Repository makes, in the same order (package rdb owns the
// key names and scripts), so a Go worker makes the round trips a PHP worker makes and
// leaves the same keys, values and TTLs; the parity tests compare both, key by key, on
// every release the peers run.
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
