<?php
// Reads and writes the cache store of the release bootstrap.php boots (Redis store on
// connection "cache", database LARAQ_CACHE_DB, prefix LARAQ_CACHE_PREFIX under
// LARAQ_REDIS_PREFIX), the way queue:restart, queue:pause and the worker do.
//
//   php ops_cache.php get KEY             {"value": Cache::get(KEY), "redis_key": "<physical key>"}
//   php ops_cache.php forever KEY JSON    Cache::forever(KEY, json_decode(JSON))
//   php ops_cache.php forget KEY          {"forgotten": Cache::forget(KEY)}
//   php ops_cache.php add KEY JSON SECONDS  {"added": Cache::add(KEY, json_decode(JSON), SECONDS)}
//   php ops_cache.php increment KEY       {"value": Cache::increment(KEY)}
//   php ops_cache.php lock NAME SECONDS OWNER   {"acquired": Cache::lock(NAME, SECONDS, OWNER)->acquire()}
//   php ops_cache.php lock-owner NAME     {"owner": the lock's current owner or null}
//   php ops_cache.php migrate             creates the database store's cache and cache_locks
//                                         tables with the columns of the 11+ make:cache-table stub
require __DIR__ . '/bootstrap.php';

$app = laraq_boot();
$cache = $app['cache.store'];
[$op, $key] = [$argv[1] ?? '', $argv[2] ?? ''];
$out = function ($v) {
    echo json_encode($v, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
};
switch ($op) {
    case 'get':
        $out(['value' => $cache->get($key), 'redis_key' => laraq_redis_prefix() . $cache->getStore()->getPrefix() . $key]);
        break;
    case 'forever':
        $cache->forever($key, json_decode($argv[3] ?? 'null', true, 512, JSON_THROW_ON_ERROR));
        $out(['ok' => true]);
        break;
    case 'forget':
        $out(['forgotten' => $cache->forget($key)]);
        break;
    case 'add':
        $out(['added' => $cache->add($key, json_decode($argv[3] ?? 'null', true, 512, JSON_THROW_ON_ERROR), (int) ($argv[4] ?? 0))]);
        break;
    case 'increment':
        $out(['value' => $cache->increment($key)]);
        break;
    case 'lock':
        $out(['acquired' => $cache->lock($key, (int) ($argv[3] ?? 0), $argv[4] ?? null)->acquire()]);
        break;
    case 'lock-owner':
        $lock = $cache->lock($key);
        $owner = (fn () => $this->getCurrentOwner())->call($lock);
        $out(['owner' => $owner === false ? null : $owner]);
        break;
    case 'migrate':
        $schema = $app['db']->connection('cachedb')->getSchemaBuilder();
        $schema->create('cache', function ($table) {
            $table->string('key')->primary();
            $table->mediumText('value');
            $table->bigInteger('expiration')->index();
        });
        $schema->create('cache_locks', function ($table) {
            $table->string('key')->primary();
            $table->string('owner');
            $table->bigInteger('expiration')->index();
        });
        $out(['ok' => true]);
        break;
    default:
        fwrite(STDERR, "usage: ops_cache.php get|forever|forget|add|increment|lock|lock-owner|migrate KEY [ARGS]\n");
        exit(2);
}
