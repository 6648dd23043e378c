<?php
// Boots laravel/horizon's Redis side on one of the Laravel 10.x/11.x peers, the way
// HorizonServiceProvider does in an application: the peer harness (LARAQ_HARNESS, the
// shared peers' harness/bootstrap.php) boots the framework; this file autoloads
// Laravel\Horizon\ from the unpacked Horizon source, adds the `horizon` Redis connection
// (a copy of horizon.use whose prefix is horizon.prefix, as Horizon::use() makes it),
// binds Horizon's repositories as singletons (ServiceBindings), replaces the queue's
// `redis` connector with Horizon's (so pushes and pops go through Laravel\Horizon\RedisQueue)
// and wires Horizon's listeners to the events (EventMap).
//
// Environment, besides the harness's own (LARAQ_PEER_MAJOR, LARAQ_PEERS_DIR,
// LARAQ_REDIS_PORT, LARAQ_REDIS_PREFIX, ...):
//   LARAQ_HARNESS            the peers' harness/bootstrap.php (required)
//   LARAQ_HORIZON_PREFIX     horizon.prefix (default laravel_horizon:)
//   LARAQ_HORIZON_TRIM       JSON object of horizon.trim minutes (default: the stock config)
//   LARAQ_HORIZON_SILENCED   JSON list of horizon.silenced classes (default [])
//   LARAQ_HORIZON_ENVS       JSON object of horizon.environments (default: the stock config's)
//   LARAQ_APP_ENV            app.env (default production)
if ((string) getenv('LARAQ_HARNESS') === '') {
    fwrite(STDERR, "horizon/bootstrap.php: set LARAQ_HARNESS to the peers' harness/bootstrap.php\n");
    exit(2);
}
require_once getenv('LARAQ_HARNESS');

use Illuminate\Contracts\Events\Dispatcher as EventsContract;
use Illuminate\Redis\RedisManager;

spl_autoload_register(function (string $class) {
    $prefix = 'Laravel\\Horizon\\';
    if (strncmp($class, $prefix, strlen($prefix)) === 0) {
        $file = getenv('LARAQ_PEERS_DIR') . '/horizon/src/' . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
        if (is_file($file)) {
            require $file;
        }
    }
});

/** The stock config/horizon.php trim settings. */
const LARAQ_HORIZON_STOCK_TRIM = [
    'recent' => 60, 'pending' => 60, 'completed' => 60,
    'recent_failed' => 10080, 'failed' => 10080, 'monitored' => 10080,
];

/** Exposes Horizon's EventMap and ServiceBindings traits, which keep their tables protected. */
final class LaraqHorizonTables
{
    use \Laravel\Horizon\EventMap;
    use \Laravel\Horizon\ServiceBindings;

    public function events(): array { return $this->events; }
}

/** Boots the harness and Horizon once and returns the container. */
function laraq_horizon_boot(): \Illuminate\Container\Container
{
    static $app = null;
    if ($app !== null) {
        return $app;
    }
    $app = laraq_boot();
    $config = $app['config'];
    $json = function (string $name, $default) {
        $v = getenv($name);
        return ($v === false || $v === '') ? $default : json_decode($v, true, 512, JSON_THROW_ON_ERROR);
    };
    $config->set('app.env', laraq_env('LARAQ_APP_ENV', 'production'));
    $config->set('horizon', [
        'use' => 'default',
        'prefix' => laraq_env('LARAQ_HORIZON_PREFIX', 'laravel_horizon:'),
        'trim' => $json('LARAQ_HORIZON_TRIM', LARAQ_HORIZON_STOCK_TRIM),
        'silenced' => $json('LARAQ_HORIZON_SILENCED', []),
        'metrics' => ['trim_snapshots' => ['job' => 24, 'queue' => 24]],
        'fast_termination' => false,
        'defaults' => [
            'supervisor-1' => [
                'connection' => 'redis', 'queue' => ['default'], 'balance' => 'auto',
                'autoScalingStrategy' => 'time', 'maxProcesses' => 1, 'maxTime' => 0,
                'maxJobs' => 0, 'memory' => 128, 'tries' => 1, 'timeout' => 60, 'nice' => 0,
            ],
        ],
        'environments' => $json('LARAQ_HORIZON_ENVS', [
            'production' => ['supervisor-1' => ['maxProcesses' => 10, 'balanceMaxShift' => 1, 'balanceCooldown' => 3]],
            'local' => ['supervisor-1' => ['maxProcesses' => 3]],
        ]),
    ]);

    // Horizon::use('default'): the horizon connection is the default one with Horizon's
    // prefix in place of the database prefix. RedisManager copies its configuration when
    // it is built, so a new manager replaces the harness's.
    \Laravel\Horizon\Horizon::use('default');
    $redis = new RedisManager($app, $config->get('database.redis.client'), $config->get('database.redis'));
    $app->instance('redis', $redis);
    $app->instance(\Illuminate\Contracts\Redis\Factory::class, $redis);

    $tables = new LaraqHorizonTables();
    foreach ($tables->serviceBindings as $key => $value) {
        is_numeric($key) ? $app->singleton($value) : $app->singleton($key, $value);
    }
    $app->singleton(\Laravel\Horizon\WaitTimeCalculator::class);

    // HorizonServiceProvider::registerQueueConnectors.
    $app['queue']->addConnector('redis', fn () => new \Laravel\Horizon\Connectors\RedisConnector($app['redis']));

    $events = $app[EventsContract::class];
    foreach ($tables->events() as $event => $listeners) {
        foreach ($listeners as $listener) {
            $events->listen($event, $listener);
        }
    }
    return $app;
}

/** The framework's own RedisQueue on the same connection: a push Horizon never sees. */
function laraq_horizon_vanilla_queue(): \Illuminate\Queue\RedisQueue
{
    $app = laraq_horizon_boot();
    $q = new \Illuminate\Queue\RedisQueue($app['redis'], 'default', 'default', (int) laraq_env('LARAQ_RETRY_AFTER', 90), null);
    $q->setContainer($app);
    $q->setConnectionName('redis');
    return $q;
}

/** The Horizon key prefix in use. */
function laraq_horizon_prefix(): string
{
    return laraq_horizon_boot()['config']->get('horizon.prefix') ?: 'horizon:';
}
