<?php
// What bootstrap.php gives every script on every major, after bootstrap_l8.php (Debian's
// 8.83) or bootstrap_peer.php (the 5.8-13 harness) has defined laraq_boot() and laraq_env().

use Illuminate\Container\Container;

if (! function_exists('laraq_record')) {
    /** Appends one JSON line to the LARAQ_RECORD file (the test jobs' way of saying what they got). */
    function laraq_record(array $row): void
    {
        $file = laraq_env('LARAQ_RECORD');
        if ($file === null) {
            return;
        }
        file_put_contents($file, json_encode($row, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_PARTIAL_OUTPUT_ON_ERROR) . "\n", FILE_APPEND | LOCK_EX);
    }
}

/** Turns LARAQ_FAILED_DB (a sqlite file, mysql://… or pgsql://…) into an Illuminate connection config. */
function laraq_db_config(string $spec): array
{
    if (preg_match('~^(mysql|pgsql|postgres)://(?:([^:@]*)(?::([^@]*))?@)?([^:/]+)(?::(\d+))?/(.+)$~', $spec, $m)) {
        $driver = $m[1] === 'mysql' ? 'mysql' : 'pgsql';
        return [
            'driver' => $driver, 'host' => $m[4], 'port' => $m[5] ?: ($driver === 'mysql' ? 3306 : 5432),
            'database' => $m[6], 'username' => urldecode($m[2] ?? ''), 'password' => urldecode($m[3] ?? ''),
            'charset' => $driver === 'mysql' ? 'utf8mb4' : 'utf8', 'collation' => $driver === 'mysql' ? 'utf8mb4_unicode_ci' : null,
            'prefix' => '', 'schema' => 'public', 'search_path' => 'public', 'sslmode' => 'disable',
        ];
    }
    $file = preg_replace('~^sqlite:~', '', $spec);
    if ($file !== ':memory:' && ! file_exists($file)) {
        touch($file); // SQLiteConnector refuses a missing file
    }
    return ['driver' => 'sqlite', 'database' => $file, 'prefix' => '', 'foreign_key_constraints' => false];
}

/**
 * The database failed-job provider of the skeleton's driver (table LARAQ_FAILED_TABLE) and
 * the batch repository (table job_batches) on connection "default" of the bound 'db'
 * manager, as QueueServiceProvider and BusServiceProvider register them: `database-uuids`
 * from 8.x; before, the skeletons' `database` driver (5.8 has no driver key: a table is
 * enough), whose DatabaseFailedJobProvider is the only database provider there is, and
 * no batches (Bus::batch is 8.x).
 */
function laraq_bind_failer_and_batches(Container $app): void
{
    $table = laraq_env('LARAQ_FAILED_TABLE', 'failed_jobs');
    if (! class_exists(\Illuminate\Queue\Failed\DatabaseUuidFailedJobProvider::class)) {
        $failer = new \Illuminate\Queue\Failed\DatabaseFailedJobProvider($app['db'], 'default', $table);
        $app->instance('queue.failer', $failer);
        $app->instance(\Illuminate\Queue\Failed\FailedJobProviderInterface::class, $failer);
        return;
    }
    $failer = new \Illuminate\Queue\Failed\DatabaseUuidFailedJobProvider(
        $app['db'], 'default', $table);
    $app->instance('queue.failer', $failer);
    $app->instance(\Illuminate\Queue\Failed\FailedJobProviderInterface::class, $failer);
    $app->singleton(\Illuminate\Bus\DatabaseBatchRepository::class, fn ($app) => new \Illuminate\Bus\DatabaseBatchRepository(
        new \Illuminate\Bus\BatchFactory($app['queue']), $app['db']->connection('default'), 'job_batches'));
    $app->alias(\Illuminate\Bus\DatabaseBatchRepository::class, \Illuminate\Bus\BatchRepository::class);
}

/** Creates job_batches as the queue:batches-table stub does (the same columns on 8-13) when missing. */
function laraq_batches_migrate(): void
{
    $schema = app('db')->connection('default')->getSchemaBuilder();
    if ($schema->hasTable('job_batches')) {
        return;
    }
    $schema->create('job_batches', function (\Illuminate\Database\Schema\Blueprint $table) {
        $table->string('id')->primary();
        $table->string('name');
        $table->integer('total_jobs');
        $table->integer('pending_jobs');
        $table->integer('failed_jobs');
        $table->longText('failed_job_ids');
        $table->mediumText('options')->nullable();
        $table->integer('cancelled_at')->nullable();
        $table->integer('created_at');
        $table->integer('finished_at')->nullable();
    });
}

/**
 * The services of optional components, where the release has them: the notification
 * channel manager (NotificationServiceProvider) and, on 8.83, the broadcast manager with
 * the skeleton's 'null' connection (the shared harness binds it itself), and the default
 * broadcaster connection.
 */
function laraq_bind_optional_services(Container $app): void
{
    if (class_exists(\Illuminate\Notifications\ChannelManager::class)) {
        $app->singleton(\Illuminate\Notifications\ChannelManager::class, fn ($app) => new \Illuminate\Notifications\ChannelManager($app));
        $app->alias(\Illuminate\Notifications\ChannelManager::class, \Illuminate\Contracts\Notifications\Dispatcher::class);
        $app->alias(\Illuminate\Notifications\ChannelManager::class, \Illuminate\Contracts\Notifications\Factory::class);
    }
    if (class_exists(\Illuminate\Broadcasting\BroadcastManager::class) && ! $app->bound(\Illuminate\Contracts\Broadcasting\Factory::class)) {
        $broadcast = new \Illuminate\Broadcasting\BroadcastManager($app);
        $app->instance(\Illuminate\Broadcasting\BroadcastManager::class, $broadcast);
        $app->instance(\Illuminate\Contracts\Broadcasting\Factory::class, $broadcast);
    }
    if (class_exists(\Illuminate\Broadcasting\BroadcastManager::class) && ! $app->bound(\Illuminate\Contracts\Broadcasting\Broadcaster::class)) {
        // BroadcastServiceProvider's default connection binding, which 5.8-7.x's
        // BroadcastEvent::handle() asks for (8.x+ takes the factory).
        $app->singleton(\Illuminate\Contracts\Broadcasting\Broadcaster::class,
            fn ($app) => $app->make(\Illuminate\Broadcasting\BroadcastManager::class)->connection());
    }
}

/**
 * The skeleton's default store from 11.x (CACHE_STORE=database) on the database $spec
 * names (a sqlite file, mysql://, pgsql://): tables cache and cache_locks on connection
 * "cachedb", with the cache prefix, replacing the Redis store everywhere the container
 * hands one out. 8.83's harness binds no database manager unless it needs one: one is
 * made then.
 */
function laraq_use_database_cache_store(Container $app, string $spec): void
{
    if (! $app->bound('db')) {
        $db = new \Illuminate\Database\Capsule\Manager($app);
        $db->setEventDispatcher($app['events']);
        $db->setAsGlobal();
        $app->instance('db', $db->getDatabaseManager());
    }
    $app['config']->set('database.connections.cachedb', laraq_db_config($spec));
    $app['config']->set('cache.default', 'database');
    $app['config']->set('cache.stores.database', ['driver' => 'database', 'connection' => 'cachedb', 'table' => 'cache',
        'lock_connection' => 'cachedb', 'lock_table' => 'cache_locks']);
    $cache = new \Illuminate\Cache\CacheManager($app);
    $app->instance('cache', $cache);
    $app->instance(\Illuminate\Contracts\Cache\Factory::class, $cache);
    $app->instance(\Illuminate\Contracts\Cache\Repository::class, $cache->store());
    $app->instance('cache.store', $cache->store());
}

/** The connection prefix the queue's Redis connection really uses (options.prefix). */
function laraq_redis_prefix(): string
{
    return (string) app('config')->get('database.redis.options.prefix', '');
}

/**
 * The Redis connection of a RedisQueue (RedisQueue::getConnection(), public from 6.x;
 * 5.8 keeps it protected).
 */
function laraq_queue_redis(\Illuminate\Queue\RedisQueue $queue)
{
    $m = new ReflectionMethod($queue, 'getConnection');
    $m->setAccessible(true);
    return $m->invoke($queue);
}

/**
 * Evaluates a PHP expression with Laravel's job middleware classes and Limit imported:
 * "[(new WithoutOverlapping('k'))->releaseAfter(5)]" (middleware_op.php, dispatch.php's
 * "through", jobs_middleware.php).
 */
function laraq_middleware_expr(string $expr)
{
    $uses = 'use Illuminate\Queue\Middleware\WithoutOverlapping; use Illuminate\Queue\Middleware\RateLimited;'
        . 'use Illuminate\Queue\Middleware\RateLimitedWithRedis; use Illuminate\Queue\Middleware\ThrottlesExceptions;'
        . 'use Illuminate\Queue\Middleware\ThrottlesExceptionsWithRedis; use Illuminate\Queue\Middleware\Skip;'
        . 'use Illuminate\Queue\Middleware\SkipIfBatchCancelled; use Illuminate\Queue\Middleware\FailOnException;'
        . 'use Illuminate\Queue\Middleware\Release; use Illuminate\Cache\RateLimiting\Limit;';
    return eval($uses . ' return ' . $expr . ';');
}
