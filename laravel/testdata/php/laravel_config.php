<?php
// Loads a Laravel application's .env and config files with the Laravel release
// LARAQ_PEER_MAJOR names (8: Debian's php-illuminate-* 8.83; 10-13: the shared peers'
// src/Illuminate trees through their harness autoloader) and prints, as one JSON object,
// the configuration values laraq reads from the same files.
//
//   php laravel_config.php APP_ROOT [ENV_FILE] [FRAMEWORK_CONFIG_DIR] [cache]
//
// What runs is the framework's own code: phpdotenv on Illuminate\Support\Env's immutable
// repository (LoadEnvironmentVariables), env(), Str::slug(), the application's
// config/*.php required as LoadConfiguration requires them and, on 11+, merged over the
// framework's own config files by LoadConfiguration::loadConfigurationFile() (their
// directory is FRAMEWORK_CONFIG_DIR, since the peer trees hold src/Illuminate only; none:
// no merge). Not run: the HTTP kernel and service providers, which the peers do not have
// (Symfony HttpKernel is missing). In their place a container answers the path helpers
// database_path(), storage_path(), base_path() … as Application does (joinPaths), and on
// 8.83, which has no Foundation package at all, helper functions of the same meaning.
// A cached configuration (bootstrap/cache/config.php) is read instead, as Laravel does;
// with "cache" the configuration loaded is first written there as `php artisan
// config:cache` writes it (var_export).
error_reporting(E_ALL & ~E_DEPRECATED);

$root = rtrim($argv[1] ?? '', '/');
$envFile = $argv[2] ?? '';
$baseDir = $argv[3] ?? '';
if ($root === '' || ! is_dir($root)) {
    fwrite(STDERR, "usage: laravel_config.php APP_ROOT [ENV_FILE] [FRAMEWORK_CONFIG_DIR]\n");
    exit(2);
}
$major = (int) (getenv('LARAQ_PEER_MAJOR') ?: 8);
if ($major >= 10) {
    require getenv('LARAQ_PEER_HARNESS') . '/autoload.php';
    require_once 'Dotenv/autoload.php'; // vlucas/phpdotenv, which the peer trees do not carry
} else {
    require_once 'Dotenv/autoload.php';
    require_once 'Illuminate/Support/autoload.php';
    require_once 'Illuminate/Config/autoload.php';
    require_once 'Illuminate/Container/autoload.php';
    require_once 'Illuminate/Redis/autoload.php';
}

// PHP 8.4's PDO driver subclass, which the 12.x/13.x framework's config/database.php names
// (composer brings symfony/polyfill-php84 for it; Debian 12's PHP 8.2 has neither).
if (! class_exists('Pdo\\Mysql') && defined('PDO::MYSQL_ATTR_SSL_CA')) {
    eval('namespace Pdo; class Mysql { const ATTR_SSL_CA = \\PDO::MYSQL_ATTR_SSL_CA; }');
}

/** Application's path helpers, without the rest of Application. */
final class LaraqPaths extends Illuminate\Container\Container
{
    public function __construct(public string $base) {}
    public function joinPaths($basePath, $path = '') { return $basePath . ($path != '' ? '/' . ltrim($path, '/') : ''); }
    public function basePath($path = '') { return $this->joinPaths($this->base, $path); }
    public function configPath($path = '') { return $this->joinPaths($this->base . '/config', $path); }
    public function databasePath($path = '') { return $this->joinPaths($this->base . '/database', $path); }
    public function storagePath($path = '') { return $this->joinPaths($this->base . '/storage', $path); }
    public function resourcePath($path = '') { return $this->joinPaths($this->base . '/resources', $path); }
    public function publicPath($path = '') { return $this->joinPaths($this->base . '/public', $path); }
    public function langPath($path = '') { return $this->joinPaths($this->base . '/lang', $path); }
    public function appPath($path = '') { return $this->joinPaths($this->base . '/app', $path); }
}
$paths = new LaraqPaths($root);
Illuminate\Container\Container::setInstance($paths);
foreach (['base_path' => 'basePath', 'config_path' => 'configPath', 'database_path' => 'databasePath',
    'storage_path' => 'storagePath', 'resource_path' => 'resourcePath', 'public_path' => 'publicPath',
    'lang_path' => 'langPath', 'app_path' => 'appPath'] as $fn => $method) {
    if (! function_exists($fn)) { // 8.83: no Foundation helpers
        eval("function $fn(\$path = '') { return Illuminate\\Container\\Container::getInstance()->$method(\$path); }");
    }
}

$cached = $root . '/bootstrap/cache/config.php';
if (is_file($cached)) {
    $items = require $cached; // LoadConfiguration: the cached items, .env not loaded
    $config = new Illuminate\Config\Repository($items);
} else {
    // LoadEnvironmentVariables.
    $dir = $envFile === '' ? $root : dirname($envFile);
    $name = $envFile === '' ? '.env' : basename($envFile);
    Dotenv\Dotenv::create(Illuminate\Support\Env::getRepository(), $dir, $name)->safeLoad();

    $config = new Illuminate\Config\Repository();
    $files = [];
    foreach (glob($root . '/config/*.php') as $f) {
        $files[basename($f, '.php')] = $f;
    }
    ksort($files, SORT_NATURAL);
    if ($major >= 11) {
        // LoadConfiguration::loadConfigurationFiles, with the framework's files from $baseDir.
        $loader = new class($baseDir) extends Illuminate\Foundation\Bootstrap\LoadConfiguration {
            public function __construct(private string $dir) {}
            public function base(): array
            {
                $config = [];
                foreach ($this->dir === '' ? [] : glob($this->dir . '/*.php') as $file) {
                    $config[basename($file, '.php')] = require $file;
                }
                return $config;
            }
            public function load($repository, $name, $path, array $base): array
            {
                return $this->loadConfigurationFile($repository, $name, $path, $base);
            }
        };
        $base = $loader->base();
        foreach (array_diff_key($base, $files) as $name => $items) {
            $config->set($name, $items);
        }
        foreach ($files as $name => $path) {
            $base = $loader->load($config, $name, $path, $base);
        }
        foreach ($base as $name => $items) {
            $config->set($name, $items);
        }
    } else {
        foreach ($files as $name => $path) {
            $config->set($name, require $path); // 8.x-10.x: the application's files alone
        }
    }
}

if (($argv[4] ?? '') === 'cache') {
    @mkdir($root . '/bootstrap/cache', 0777, true);
    file_put_contents($cached, '<?php return ' . var_export($config->all(), true) . ';' . PHP_EOL);
}

$queueConn = $config->get('queue.connections.redis');
$store = $config->get('cache.default');

// With LARAQ_REDIS_PORT: the prefix the PHP client of the queue's and the cache store's
// Redis connections really applies (RedisManager and its connector merge the global and
// the connection's options), connecting to that server instead of the configured one.
$clientPrefix = function (?string $name) use ($config) {
    $port = getenv('LARAQ_REDIS_PORT');
    $redis = $config->get('database.redis');
    if ($port === false || $port === '' || $name === null || ! isset($redis[$name])) {
        return null;
    }
    unset($redis[$name]['url']);
    $redis[$name] = array_merge($redis[$name], ['host' => '127.0.0.1', 'port' => (int) $port, 'password' => null, 'username' => null]);
    $client = $redis['client'] ?? 'phpredis';
    $conn = (new Illuminate\Redis\RedisManager(new Illuminate\Container\Container, $client, $redis))->connection($name);
    return $client === 'predis'
        ? (string) ($conn->client()->getOptions()->prefix ? $conn->client()->getOptions()->prefix->getPrefix() : '')
        : (string) $conn->client()->getOption(Redis::OPT_PREFIX);
};
$storeConfig = $config->get("cache.stores.$store") ?? [];
$failedDb = $config->get('queue.failed.database') ?? $config->get('database.default');
// CacheManager::createDatabaseDriver: the store's connection, else the default one.
$cacheDb = ($storeConfig['driver'] ?? null) === 'database'
    ? ($storeConfig['connection'] ?? $config->get('database.default')) : null;
echo json_encode([
    'prefix' => $config->get('database.redis.options.prefix'),
    'queue_client_prefix' => $clientPrefix($queueConn['connection'] ?? 'default'),
    'cache_client_prefix' => $clientPrefix(($storeConfig['driver'] ?? null) === 'redis'
        ? ($storeConfig['connection'] ?? 'default') : ($config->get('cache.stores.redis.connection') ?? 'default')),
    'redis_client' => $config->get('database.redis.client'),
    'redis_default' => $config->get('database.redis.default'),
    'redis_cache' => $config->get('database.redis.cache'),
    'cache_default' => $store,
    'cache_prefix' => $storeConfig['prefix'] ?? $config->get('cache.prefix'),
    'cache_connection' => $config->get('cache.stores.redis.connection'),
    'queue_default' => $config->get('queue.default'),
    'queue_connection' => $queueConn['connection'] ?? null,
    'queue' => $queueConn['queue'] ?? null,
    'retry_after' => $queueConn['retry_after'] ?? null,
    'block_for' => $queueConn['block_for'] ?? null,
    'after_commit' => $queueConn['after_commit'] ?? null,
    'failed' => $config->get('queue.failed'),
    'failed_connection' => $failedDb,
    'failed_connection_config' => $config->get("database.connections.$failedDb"),
    'database_default' => $config->get('database.default'),
    'cache_db_connection_config' => $cacheDb === null ? null : $config->get("database.connections.$cacheDb"),
    'cache_lock_lottery' => $cacheDb === null ? null : ($storeConfig['lock_lottery'] ?? [2, 100]),
    'cache_lock_timeout' => $cacheDb === null ? null : ($storeConfig['lock_timeout'] ?? 86400),
    'timezone' => $config->get('app.timezone'),
    'cipher' => $config->get('app.cipher'),
], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
