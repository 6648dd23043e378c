<?php
// Runs Laravel's own job middleware (Illuminate\Queue\Middleware) of the booted release
// around one attempt of a probe command, the way CallQueuedHandler sends a command through
// its middleware, and says what the attempt did: the state-level half of the parity tests
// of internal/middleware.
//
//   php middleware_op.php run        stdin: the request below; stdout: the result below
//   php middleware_op.php serialize  stdin: {"middleware": EXPR}; stdout: {"serialized": base64}
//
// Request (JSON):
//   middleware  PHP expression giving the middleware array, evaluated with the middleware
//               classes and Limit imported: "[(new WithoutOverlapping('k'))->releaseAfter(5)]"
//   limiters    {"name": "PHP closure expression"}: RateLimiter::for(name, closure)
//   limiter_store  config cache.limiter (null: the default store)
//   job         {"class": "App\\Jobs\\MiddlewareProbe" or "App\\Jobs\\MiddlewareProbeNamed",
//                "display": displayName() of the latter, "uuid", "attempts",
//                "batch": null | "active" | "cancelled"}
//   handler     "ok" | "throw" (RuntimeException "boom") | "throw-logic" (LogicException "nope")
//               | "release:N" | "delete" | "fail" | "wait:PATH" (writes PATH.started, then
//               waits for PATH to exist, at most 20 s)
//   roundtrip   run the middleware after unserialize(serialize()), as a worker runs those
//               ->through() put in the payload
//   seed        what to write just before the attempt, relative to time() at that moment:
//               [{"conn": "cache"|"default", "key", "string": V} | {..., "hash": {F: V}},
//                "ttl": seconds (optional)] and [{"table": "cache"|"cache_locks", "key",
//               "value"|"owner", "expiration": V}]; every V may hold {now}, {now+N}, {now-N}
//
// Result (JSON): {"ran": bool, "released": int|null, "deleted": bool, "failed": message|null,
//   "exception": "Class: message"|null, "reported": [messages], "before": time(),
//   "after": time()} — before is read before the seed, after once the attempt is over.
namespace {
    require __DIR__ . '/bootstrap.php';
}

namespace App\Jobs {
    use Illuminate\Bus\Batchable;
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;

    class MiddlewareProbe implements ShouldQueue
    {
        use Batchable, InteractsWithQueue, Queueable;

        public $behaviour = 'ok';
        public $batchState = null;
        public $ran = false;

        public function handle()
        {
            $this->ran = true;
            $b = $this->behaviour;
            if ($b === 'throw') {
                throw new \RuntimeException('boom');
            } elseif ($b === 'throw-logic') {
                throw new \LogicException('nope');
            } elseif (str_starts_with($b, 'release:')) {
                $this->release((int) substr($b, 8));
            } elseif ($b === 'delete') {
                $this->delete();
            } elseif ($b === 'fail') {
                $this->fail(new \RuntimeException('failed by the handler'));
            } elseif (str_starts_with($b, 'wait:')) {
                $path = substr($b, 5);
                file_put_contents($path . '.started', '1');
                $deadline = microtime(true) + 20;
                while (! file_exists($path) && microtime(true) < $deadline) {
                    usleep(10000);
                }
            }
        }

        // SkipIfBatchCancelled asks $job->batch()?->cancelled(); the batch repository's
        // row is the worker's business, so the probe answers from the request.
        public function batch()
        {
            if ($this->batchState === null) {
                return null;
            }
            $cancelled = $this->batchState === 'cancelled';
            return new class($cancelled) {
                public function __construct(private bool $c) {}
                public function cancelled() { return $this->c; }
            };
        }
    }

    class MiddlewareProbeNamed extends MiddlewareProbe
    {
        public $display = '';

        public function displayName()
        {
            return $this->display;
        }
    }
}

namespace {
    use Illuminate\Cache\RateLimiter;

    /** The queue job under the probe: it records what the middleware did to it. */
    final class LaraqMiddlewareQueueJob extends \Illuminate\Queue\Jobs\Job implements \Illuminate\Contracts\Queue\Job
    {
        public $releasedWith = null;
        public $failedWith = null;

        public function __construct($container, private string $uuidValue, private int $attemptsValue, private string $class)
        {
            $this->container = $container;
            $this->queue = 'default';
            $this->connectionName = 'redis';
        }

        public function getJobId() { return 'probe'; }
        public function attempts() { return $this->attemptsValue; }
        public function getRawBody()
        {
            return json_encode(['uuid' => $this->uuidValue, 'displayName' => $this->class, 'job' => 'Illuminate\Queue\CallQueuedHandler@call',
                'data' => ['commandName' => $this->class, 'command' => ''], 'attempts' => $this->attemptsValue - 1]);
        }
        public function release($delay = 0)
        {
            parent::release($delay);
            $this->releasedWith = $delay;
        }
        public function fail($e = null)
        {
            $this->markAsFailed();
            $this->failedWith = $e;
            if (! $this->isDeleted()) {
                $this->delete();
            }
        }
    }

    function laraq_mw_time(string $v, int $now): string
    {
        return preg_replace_callback('/\{now([+-]\d+)?\}/', fn ($m) => (string) ($now + (int) ($m[1] ?? 0)), $v);
    }

    $app = laraq_boot();
    $op = $argv[1] ?? '';
    $req = json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
    $out = function ($v) {
        echo json_encode($v, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
    };

    if ($op === 'serialize') {
        try {
            $out(['serialized' => base64_encode(serialize(laraq_middleware_expr($req['middleware'])))]);
        } catch (\Throwable $e) {
            $out(['serialized' => null, 'error' => get_class($e) . ': ' . $e->getMessage()]);
        }
        exit(0);
    }
    if ($op !== 'run') {
        fwrite(STDERR, "usage: middleware_op.php run|serialize < request.json\n");
        exit(2);
    }

    // CacheServiceProvider's binding: one RateLimiter on the store cache.limiter names.
    $app['config']->set('cache.limiter', $req['limiter_store'] ?? null);
    $app->singleton(RateLimiter::class, fn ($app) => new RateLimiter($app['cache']->driver($app['config']->get('cache.limiter'))));
    foreach ($req['limiters'] ?? [] as $name => $closure) {
        $app->make(RateLimiter::class)->for($name, laraq_middleware_expr($closure));
    }
    $middleware = laraq_middleware_expr($req['middleware']);
    if ($req['roundtrip'] ?? false) {
        // What a worker runs of ->through([...]): the objects after the payload's trip.
        $middleware = unserialize(serialize($middleware));
    }

    $j = $req['job'];
    $class = $j['class'];
    $command = new $class();
    $command->behaviour = $req['handler'] ?? 'ok';
    $command->batchState = $j['batch'] ?? null;
    if (property_exists($command, 'display')) {
        $command->display = $j['display'] ?? '';
    }
    $queueJob = new LaraqMiddlewareQueueJob($app, $j['uuid'] ?? 'probe-uuid', (int) ($j['attempts'] ?? 1), $class);
    $command->setJob($queueJob);

    $before = time();
    foreach ($req['seed'] ?? [] as $s) {
        if (isset($s['table'])) {
            $row = ['key' => $s['key'], 'expiration' => (int) laraq_mw_time((string) $s['expiration'], $before)];
            if (isset($s['owner'])) {
                $row['owner'] = $s['owner'];
            } else {
                $row['value'] = laraq_mw_time($s['value'], $before);
            }
            $app['db']->connection('cachedb')->table($s['table'])->insert($row);
            continue;
        }
        $redis = $app['redis']->connection($s['conn'])->client();
        if (isset($s['hash'])) {
            $redis->hMSet($s['key'], array_map(fn ($v) => laraq_mw_time($v, $before), $s['hash']));
        } else {
            $redis->set($s['key'], laraq_mw_time($s['string'], $before));
        }
        if (isset($s['ttl'])) {
            $redis->expire($s['key'], (int) $s['ttl']);
        }
    }

    $exception = null;
    try {
        (new \Illuminate\Pipeline\Pipeline($app))->send($command)->through($middleware)->then(fn ($command) => $command->handle());
    } catch (\Throwable $e) {
        $exception = get_class($e) . ': ' . $e->getMessage();
    }
    $after = time();
    $handler = $app->make(\Illuminate\Contracts\Debug\ExceptionHandler::class);
    $out([
        'ran' => $command->ran,
        'released' => $queueJob->isReleased() ? $queueJob->releasedWith : null,
        'deleted' => $queueJob->isDeleted() && ! $queueJob->hasFailed(),
        'failed' => $queueJob->hasFailed() ? ($queueJob->failedWith ? $queueJob->failedWith->getMessage() : '') : null,
        'exception' => $exception,
        'reported' => array_map(fn ($e) => $e->getMessage(), $handler->reported ?? []),
        'before' => $before,
        'after' => $after,
    ]);
}
