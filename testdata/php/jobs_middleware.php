<?php
// A job class whose middleware() returns Laravel's own job middleware, for the mixed
// PHP/Go fleet tests of package middleware, on every release bootstrap.php boots (each
// guard only where the release ships its middleware).
//
//   App\Jobs\MiddlewareGuarded   public key, guard, wait, throw; use Batchable (where the
//                                release has it: 8.0+), InteractsWithQueue, Queueable.
//     middleware() by guard:
//       overlap               (new WithoutOverlapping($this->key))->releaseAfter(7)->expireAfter(120)
//       overlap-dont-release  (new WithoutOverlapping($this->key))->dontRelease()->expireAfter(120)
//       limited               new RateLimited('fleet')
//       limited-dont-release  (new RateLimited('fleet'))->dontRelease()
//       limited-redis         new RateLimitedWithRedis('fleet')
//       throttled             (new ThrottlesExceptions(2, 300 s))->backoff(1)
//       throttled-redis       (new ThrottlesExceptionsWithRedis(2, 300 s))->backoff(1)
//       skip                  Skip::when(true)                                 11.23+
//       batch-cancelled       new SkipIfBatchCancelled                          9.49+
//       fail-on-exception     new FailOnException([RuntimeException::class])   12.19+
//       release               Release::when(true, 15)                          13.18.1+
//       none                  nothing (->through() may add some)
//     handle(): records {"event":"handle","class","key","guard","id","attempts"}, then
//     with wait set writes <wait>.started and waits (at most 20 s) for <wait> to exist,
//     then with throw set throws RuntimeException "boom".
//   The limiter 'fleet' is Limit::perMinute(3)->by('fleet'), defined at boot with the
//   RateLimiter CacheServiceProvider binds (cache.limiter, else the default store).
//

namespace {
    use Illuminate\Cache\RateLimiter;
    use Illuminate\Cache\RateLimiting\Limit;

    laraq_on_jobs_boot(function ($app) {
        if (! class_exists(Limit::class)) {
            return; // before 8.0: no named rate limiters, no job middleware
        }
        $app->singleton(RateLimiter::class, fn ($app) => new RateLimiter($app['cache']->driver($app['config']->get('cache.limiter'))));
        $app->make(RateLimiter::class)->for('fleet', fn ($job) => Limit::perMinute(3)->by('fleet'));
    });
}

namespace App\Jobs {
    use Illuminate\Bus\Batchable;
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;

    // Batchable arrived with job batches in 8.0; the class loads on every release.
    if (trait_exists(Batchable::class)) {
        trait MiddlewareGuardedBatch
        {
            use Batchable;
        }
    } else {
        trait MiddlewareGuardedBatch
        {
            public $batchId;
        }
    }

    class MiddlewareGuarded implements ShouldQueue
    {
        use MiddlewareGuardedBatch, InteractsWithQueue, Queueable;

        public $key = 'k';
        public $guard = 'none';
        public $wait = null;
        public $throw = false;

        public function middleware()
        {
            $decay = LARAQ_PEER_MAJOR >= 11 ? 300 : 5; // minutes up to 10.x
            switch ($this->guard) {
                case 'none':
                    return [];
                case 'skip':
                case 'batch-cancelled':
                case 'fail-on-exception':
                case 'release':
                    return [laraq_middleware_expr([
                        'skip' => 'Skip::when(true)',
                        'batch-cancelled' => 'new SkipIfBatchCancelled',
                        'fail-on-exception' => 'new FailOnException([RuntimeException::class])',
                        'release' => 'Release::when(true, 15)',
                    ][$this->guard])];
            }
            return [[
                'overlap' => fn () => (new \Illuminate\Queue\Middleware\WithoutOverlapping($this->key))->releaseAfter(7)->expireAfter(120),
                'overlap-dont-release' => fn () => (new \Illuminate\Queue\Middleware\WithoutOverlapping($this->key))->dontRelease()->expireAfter(120),
                'limited' => fn () => new \Illuminate\Queue\Middleware\RateLimited('fleet'),
                'limited-dont-release' => fn () => (new \Illuminate\Queue\Middleware\RateLimited('fleet'))->dontRelease(),
                'limited-redis' => fn () => new \Illuminate\Queue\Middleware\RateLimitedWithRedis('fleet'),
                'throttled' => fn () => (new \Illuminate\Queue\Middleware\ThrottlesExceptions(2, $decay))->backoff(1),
                'throttled-redis' => fn () => (new \Illuminate\Queue\Middleware\ThrottlesExceptionsWithRedis(2, $decay))->backoff(1),
            ][$this->guard]()];
        }

        public function handle()
        {
            laraq_record(['event' => 'handle', 'class' => static::class, 'key' => $this->key, 'guard' => $this->guard,
                'id' => $this->job->getJobId(), 'attempts' => $this->attempts()]);
            if ($this->wait !== null) {
                file_put_contents($this->wait . '.started', '1');
                $deadline = microtime(true) + 20;
                while (! file_exists($this->wait) && microtime(true) < $deadline) {
                    usleep(10000);
                }
            }
            if ($this->throw) {
                throw new \RuntimeException('boom');
            }
        }
    }
}
