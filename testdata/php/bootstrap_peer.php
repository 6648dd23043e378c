<?php
// Boots Laravel 5.8, 6.x, 7.x and 9.x-13.x through the shared peers' harness
// (LARAQ_PEER_HARNESS/bootstrap.php, on the tree LARAQ_PEERS_DIR/laravel-<LARAQ_PEER_TREE or
// LARAQ_PEER_MAJOR>) and then makes it look to the scripts of this directory exactly like
// bootstrap_l8.php does for 8.83:
//
//   - LARAQ_REDIS_PREFIX set to '' means no prefix here, as on 8.83; the harness would read
//     '' as unset and use the skeleton's default (laravel_database_ on 5.8-11,
//     laravel-database- on 12/13), so it is handed over as its "none" marker '-'. Unset
//     keeps the harness's per-major default. LARAQ_CACHE_PREFIX unset likewise keeps the
//     skeleton's: laravel_cache on 5.8-7.x (their config/cache.php, as 8.x's:
//     Str::slug(APP_NAME, '_').'_cache'; the harness only knows 9+ and would say
//     laravel_cache_), laravel_cache_ on 9-11 (skeleton v9.0.1+), laravel-cache- on 12/13.
//   - LARAQ_FAILED_DB (sqlite file, mysql://, pgsql://) and LARAQ_FAILED_TABLE configure the
//     database failed-job provider and the batch repository, where the harness only knows
//     its own SQLite LARAQ_DB (left unset, so it creates no tables of its own). 5.8-7.x
//     have no database-uuids provider: their skeletons' `database` driver
//     (DatabaseFailedJobProvider, a table without uuid) is bound instead, and no batches.
//   - LARAQ_CACHE_DATABASE (sqlite file, mysql://, pgsql://) makes the default cache store
//     the database store on that database (tables cache and cache_locks: ops_cache.php
//     migrate creates them with the release's own schema builder).
//   - LARAQ_APP_TIMEZONE sets app.timezone and PHP's default zone (the harness fixes UTC).
//
// The harness boots eagerly here; laraq_boot() then returns the same container.

(function () {
    $harness = getenv('LARAQ_PEER_HARNESS');
    if ($harness === false || $harness === '' || ! is_file($harness . '/bootstrap.php')) {
        fwrite(STDERR, 'bootstrap_peer.php: LARAQ_PEER_HARNESS=' . var_export($harness, true)
            . " is not the shared peers' harness directory (internal/testenv sets it to <shared>/peers/laravel/harness)\n");
        exit(2);
    }
    if (getenv('LARAQ_REDIS_PREFIX') === '') {
        putenv('LARAQ_REDIS_PREFIX=-');
    }
    $major = (int) getenv('LARAQ_PEER_MAJOR');
    if ($major < 8 && (getenv('LARAQ_CACHE_PREFIX') === false || getenv('LARAQ_CACHE_PREFIX') === '')) {
        putenv('LARAQ_CACHE_PREFIX=laravel_cache');
    }
    require_once $harness . '/bootstrap.php';
})();
require_once __DIR__ . '/bootstrap_common.php';

(function () {
    $app = laraq_boot();
    $tz = laraq_env('LARAQ_APP_TIMEZONE', 'UTC');
    $app['config']->set('app.timezone', $tz);
    date_default_timezone_set($tz);
    $spec = laraq_env('LARAQ_FAILED_DB');
    if ($spec !== null) {
        // The harness's Capsule keeps its connections in the container's config, so a
        // connection added there is one app('db') can open.
        $app['config']->set('database.connections.default', laraq_db_config($spec));
        laraq_bind_failer_and_batches($app);
    }
    $spec = laraq_env('LARAQ_CACHE_DATABASE');
    if ($spec !== null) {
        laraq_use_database_cache_store($app, $spec);
    }
    laraq_bind_optional_services($app);
})();
