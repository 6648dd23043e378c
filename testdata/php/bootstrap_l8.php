<?php
// Boots the pieces of a Laravel 8.83 application that the queue needs, without a full app:
// container, config, Redis (phpredis or predis), queue manager, events (with the queue
// resolver queued listeners need), bus, encrypter, cache, the database failed-job provider
// and batch repository, and (when Debian's php-illuminate-notifications is installed) the
// notification channel manager. Debian's php-illuminate-* packages provide the classes.
// Loaded by bootstrap.php when LARAQ_PEER_MAJOR is unset or 8; 10-13 boot through the
// shared harness instead (bootstrap_peer.php).
//
// Everything is configured through environment variables so the Go tests can point PHP at
// the same redis-server and key prefix they use:
//   LARAQ_REDIS_HOST (127.0.0.1)  LARAQ_REDIS_PORT (6379)  LARAQ_REDIS_DB (0)
//   LARAQ_REDIS_PREFIX ('')       LARAQ_REDIS_CLIENT (phpredis|predis)
//   LARAQ_CACHE_DB (1)            LARAQ_CACHE_PREFIX (laravel_cache)
//   LARAQ_RETRY_AFTER (90)        LARAQ_BLOCK_FOR ('' = null)
//   LARAQ_FAILED_DB ('' = none; a sqlite file path, or a PDO-style spec mysql://… / pgsql://…)
//   LARAQ_FAILED_TABLE (failed_jobs)  LARAQ_APP_TIMEZONE (UTC)
//   LARAQ_RECORD (file the test jobs append their JSON records to)
//   LARAQ_CACHE_DATABASE (a sqlite file, mysql://… or pgsql://…: the default cache store is the
//                          database store there, as on 10-13; laraq_use_database_cache_store)
//   LARAQ_APP_KEY (the encrypter key, base64:...; the harness's fixed key by default)
error_reporting(E_ALL & ~E_DEPRECATED);

require_once __DIR__ . '/autoload_l8.php';

const LARAQ_PEER_MAJOR = 8;
const LARAQ_PEER_TAG = 'v8.83';
const LARAQ_DEFAULT_APP_KEY = 'base64:bGFyYXEtcGVlci10ZXN0LWtleS0zMi1ieXRlcyEhISE=';

use Illuminate\Bus\Dispatcher as BusDispatcher;
use Illuminate\Cache\CacheManager;
use Illuminate\Container\Container;
use Illuminate\Contracts\Bus\Dispatcher as BusDispatcherContract;
use Illuminate\Contracts\Bus\QueueingDispatcher;
use Illuminate\Contracts\Debug\ExceptionHandler;
use Illuminate\Database\Capsule\Manager as DB;
use Illuminate\Encryption\Encrypter;
use Illuminate\Events\Dispatcher as EventDispatcher;
use Illuminate\Queue\Capsule\Manager as Queue;
use Illuminate\Queue\Failed\NullFailedJobProvider;
use Illuminate\Redis\RedisManager;
use Illuminate\Support\Facades\Facade;

function laraq_env(string $name, $default = null)
{
    $v = getenv($name);
    return ($v === false || $v === '') ? $default : $v;
}

/** Prints an exception as the tests want to see it and keeps the worker going. */
final class LaraqExceptionHandler implements ExceptionHandler
{
    public array $reported = [];
    public function report(Throwable $e) { $this->reported[] = $e; fwrite(STDERR, 'reported: ' . get_class($e) . ': ' . $e->getMessage() . "\n"); }
    public function shouldReport(Throwable $e) { return true; }
    public function render($request, Throwable $e) { throw $e; }
    public function renderForConsole($output, Throwable $e) { fwrite(STDERR, (string) $e . "\n"); }
}

/** Boots the container once and returns it. */
function laraq_boot(): Container
{
    static $app = null;
    if ($app !== null) {
        return $app;
    }
    $app = new Container();
    Container::setInstance($app);
    Facade::setFacadeApplication($app);
    $app->instance(Container::class, $app);
    $app->instance(\Illuminate\Contracts\Container\Container::class, $app);
    $app->instance('app', $app);

    $redisConn = [
        'host' => laraq_env('LARAQ_REDIS_HOST', '127.0.0.1'),
        'port' => (int) laraq_env('LARAQ_REDIS_PORT', 6379),
        'password' => null,
        'database' => (int) laraq_env('LARAQ_REDIS_DB', 0),
    ];
    $cacheConn = $redisConn;
    $cacheConn['database'] = (int) laraq_env('LARAQ_CACHE_DB', 1);
    $blockFor = laraq_env('LARAQ_BLOCK_FOR');
    $config = new \Illuminate\Config\Repository([
        'app' => ['name' => 'laravel', 'timezone' => laraq_env('LARAQ_APP_TIMEZONE', 'UTC'),
            'key' => laraq_env('LARAQ_APP_KEY', LARAQ_DEFAULT_APP_KEY), 'cipher' => 'AES-256-CBC'],
        'broadcasting' => ['default' => 'null', 'connections' => ['null' => ['driver' => 'null']]],
        'database' => [
            'redis' => [
                'client' => laraq_env('LARAQ_REDIS_CLIENT', 'phpredis'),
                'options' => ['prefix' => laraq_env('LARAQ_REDIS_PREFIX', '')],
                'default' => $redisConn,
                'cache' => $cacheConn,
            ],
        ],
        'cache' => [
            'default' => 'redis',
            'stores' => ['redis' => ['driver' => 'redis', 'connection' => 'cache', 'lock_connection' => 'default']],
            'prefix' => laraq_env('LARAQ_CACHE_PREFIX', 'laravel_cache'),
        ],
        'queue' => [
            'default' => 'redis',
            'connections' => [
                'redis' => [
                    'driver' => 'redis',
                    'connection' => 'default',
                    'queue' => 'default',
                    'retry_after' => (int) laraq_env('LARAQ_RETRY_AFTER', 90),
                    'block_for' => $blockFor === null ? null : (int) $blockFor,
                    'after_commit' => false,
                ],
            ],
        ],
    ]);
    $app->instance('config', $config);
    date_default_timezone_set($config->get('app.timezone'));

    // EventServiceProvider: the dispatcher resolves the queue for queued listeners.
    $events = new EventDispatcher($app);
    $events->setQueueResolver(fn () => $app->make(\Illuminate\Contracts\Queue\Factory::class));
    $app->instance('events', $events);
    $app->instance(\Illuminate\Contracts\Events\Dispatcher::class, $events);

    $redis = new RedisManager($app, $config->get('database.redis.client'), $config->get('database.redis'));
    $app->instance('redis', $redis);
    $app->instance(\Illuminate\Contracts\Redis\Factory::class, $redis);

    // EncryptionServiceProvider: without a bound encrypter, 8.x serializes a
    // ShouldBeEncrypted job in the clear (Queue::createObjectPayload checks bound()).
    $key = $config->get('app.key');
    $encrypter = new Encrypter(base64_decode(substr($key, 7)), $config->get('app.cipher'));
    $app->instance('encrypter', $encrypter);
    $app->instance(\Illuminate\Contracts\Encryption\Encrypter::class, $encrypter);

    $cache = new CacheManager($app);
    $app->instance('cache', $cache);
    $app->instance(\Illuminate\Contracts\Cache\Factory::class, $cache);
    $app->instance(\Illuminate\Contracts\Cache\Repository::class, $cache->store());
    $app->instance('cache.store', $cache->store());

    $queue = new Queue($app);
    $queue->addConnection($config->get('queue.connections.redis'), 'redis');
    $queue->getQueueManager()->setDefaultDriver('redis');
    $queue->setAsGlobal();
    $app->instance('queue', $queue->getQueueManager());
    $app->instance(\Illuminate\Contracts\Queue\Factory::class, $queue->getQueueManager());
    $app->bind('queue.connection', fn () => $queue->getQueueManager()->connection());

    $bus = new BusDispatcher($app, fn ($connection = null) => $queue->getQueueManager()->connection($connection));
    $app->instance(BusDispatcher::class, $bus);
    $app->instance(BusDispatcherContract::class, $bus);
    $app->instance(QueueingDispatcher::class, $bus);

    $handler = new LaraqExceptionHandler();
    $app->instance(ExceptionHandler::class, $handler);

    $failedSpec = laraq_env('LARAQ_FAILED_DB');
    if ($failedSpec !== null) {
        $db = new DB($app);
        $db->addConnection(laraq_db_config($failedSpec));
        $db->setEventDispatcher($events);
        $db->setAsGlobal();
        $app->instance('db', $db->getDatabaseManager());
        laraq_bind_failer_and_batches($app);
    } else {
        $app->instance('queue.failer', new NullFailedJobProvider());
    }
    $cacheSpec = laraq_env('LARAQ_CACHE_DATABASE');
    if ($cacheSpec !== null) {
        laraq_use_database_cache_store($app, $cacheSpec);
    }
    laraq_bind_optional_services($app);
    return $app;
}

if (! function_exists('app')) {
    function app($abstract = null, array $parameters = [])
    {
        $c = Container::getInstance();
        return $abstract === null ? $c : $c->make($abstract, $parameters);
    }
}

if (! function_exists('dispatch')) {
    /** Laravel's helper, reduced to what chains need: dispatch now, through the bus. */
    function dispatch($job)
    {
        return app(BusDispatcherContract::class)->dispatch($job);
    }
}

if (! function_exists('event')) {
    /** Laravel's helper (Foundation, which Debian does not package): dispatch an event. */
    function event(...$args)
    {
        return app('events')->dispatch(...$args);
    }
}

if (! function_exists('now')) {
    function now($tz = null)
    {
        return \Illuminate\Support\Carbon::now($tz);
    }
}
