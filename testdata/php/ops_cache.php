<?php
// Reads and writes the cache store of the release bootstrap.php boots (Redis store on
// connection "cache", database LARAQ_CACHE_DB, prefix LARAQ_CACHE_PREFIX under
// LARAQ_REDIS_PREFIX), the way queue:restart, queue:pause and the worker do.
//
//   php ops_cache.php get KEY             {"value": Cache::get(KEY), "redis_key": "<physical key>"}
//   php ops_cache.php forever KEY JSON    Cache::forever(KEY, json_decode(JSON))
//   php ops_cache.php forget KEY          {"forgotten": Cache::forget(KEY)}
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
    default:
        fwrite(STDERR, "usage: ops_cache.php get|forever|forget KEY [JSON]\n");
        exit(2);
}
