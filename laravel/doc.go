// Package config reads a Laravel application's queue configuration the way the PHP side
// sees it, so that laraq talks to the same Redis keys, cache keys and failed-job table as
// `php artisan queue:work`.
//
// Load reads the application's .env file with phpdotenv 5's rules (Laravel 8+): quoting,
// escapes, multi-line values, `${NAME}` references resolved against the process
// environment and earlier lines (an unknown reference stays as written, `$NAME` without
// braces is plain text), and Laravel's immutable repository, where a variable already in
// the process environment wins over the file. Values then go through env()'s keywords:
// `null`, `true`, `false`, `empty` and their parenthesised forms, and one pair of
// surrounding quotes is removed. The reader is checked against phpdotenv itself. (godotenv
// is not used: it expands `$NAME` without braces, which silently corrupts passwords
// containing "$".)
//
// # Derived values
//
// The Redis connection prefix and the cache prefix default to Str::slug(APP_NAME) plus a
// suffix that depends on the skeleton the application was created from:
//
//	skeleton            redis prefix          cache prefix       cache key of K
//	5.8–8.x             laravel_database_     laravel_cache      laravel_database_laravel_cache:K
//	9.x–10.x            laravel_database_     laravel_cache_     laravel_database_laravel_cache_:K
//	11.x                laravel_database_     laravel_cache_     laravel_database_laravel_cache_K
//	12.x (≥ v12.1.0)    laravel-database-     laravel-cache-     laravel-database-laravel-cache-K
//
// With Sources.LaravelRoot, Load reads the expressions in the application's own
// config/database.php and config/cache.php, its config/app.php timezone and the installed
// framework version, so nothing needs guessing; without it the version (Sources or
// LARAQ_LARAVEL_VERSION) and PrefixStyle decide. Slug is Laravel's Str::slug,
// transliteration table included (checked code point by code point against PHP).
//
// The connection prefix is derived only for a known application: an .env file
// (Sources.EnvFile, LARAQ_ENV_FILE), a LaravelRoot, or an APP_NAME. With none of them
// Config.Prefix is empty (keys are plain queues:NAME) unless REDIS_PREFIX or
// LARAQ_REDIS_PREFIX say otherwise; the cache prefix is still the version's default, so
// the restart key is then laravel_cache_illuminate:queue:restart (11.x scheme).
//
// When no framework is at hand, the version is guessed from the keys of the .env file,
// which each skeleton's .env.example names differently: FILESYSTEM_DRIVER or MIX_* (or
// only CACHE_DRIVER / BROADCAST_DRIVER) give 8, FILESYSTEM_DISK or VITE_* next to
// CACHE_DRIVER give 10 (9 with MIX_*), CACHE_STORE, BROADCAST_CONNECTION or
// APP_MAINTENANCE_DRIVER give 11. Config.Origins["LaravelVersion"] then reads
// "inferred from .env keys CACHE_DRIVER, FILESYSTEM_DRIVER, MIX_PUSHER_APP_KEY". Without
// any of these, DefaultLaravelVersion (11) applies. An explicit version always wins.
// A guess can be wrong, and then the worker would never see `php artisan queue:restart`;
// Config.AlternativeCacheKeys therefore lists the other versions' schemes of the table
// above, under which `laraq work` reads the restart and pause signals too (keeping
// whatever the application states: CACHE_PREFIX, REDIS_PREFIX). With a named version
// there are none.
//
// # Precedence
//
// Highest first:
//
//  1. Sources.Flags, keyed by LARAQ_* name (the CLI maps --redis to LARAQ_REDIS_URL,
//     --prefix to LARAQ_REDIS_PREFIX, --queue to LARAQ_REDIS_QUEUE, --database to LARAQ_DATABASE)
//  2. LARAQ_<NAME> in the process environment: every Laravel variable NAME below can be
//     overridden as LARAQ_<NAME>, taken literally (no env() keywords)
//  3. NAME in the process environment (Laravel's env() reads it before .env)
//  4. the .env file (Sources.EnvFile, or LaravelRoot/.env, or .env.<APP_ENV>)
//  5. the application's config files (LaravelRoot), then the skeleton default
//
// LARAQ_* overrides of a single part of the Redis connection (host, port, user, password,
// database) also win over REDIS_URL; the application's own REDIS_HOST etc. do not, as in
// Laravel, where the URL's parts replace them.
//
//	variable                 default (skeleton)              used for
//	APP_NAME                 laravel                         the prefixes
//	APP_KEY                  -                               AppKey (base64: decoded), Encryption
//	APP_PREVIOUS_KEYS        - (11.x+)                       Encryption: older keys tried in order
//	app.cipher               AES-256-CBC (config/app.php)    Encryption
//	APP_TIMEZONE             UTC (8–10: config/app.php)      failed_at of failed jobs
//	REDIS_URL                -                               both connections
//	REDIS_HOST, REDIS_PORT   127.0.0.1, 6379                 both connections
//	REDIS_USERNAME           -                               ACL user
//	REDIS_PASSWORD           null                            AUTH
//	REDIS_DB                 0                               queue connection
//	REDIS_CACHE_DB           1                               cache connection
//	REDIS_CACHE_CONNECTION   cache (11.x+)                   "default": cache on REDIS_DB
//	REDIS_PREFIX             see above ("" without an app)   Prefix
//	REDIS_QUEUE              default                         Queue
//	REDIS_QUEUE_RETRY_AFTER  90 (11.x+; before: 90 fixed)    RetryAfter
//	QUEUE_CONNECTION         sync (≤10), database (11+)      a warning when not redis
//	CACHE_DRIVER/CACHE_STORE file (≤10) / database (11+)     a warning when not redis
//	CACHE_PREFIX             see above                       CachePrefix
//	QUEUE_FAILED_DRIVER      database-uuids                  FailedDriver
//	QUEUE_FAILED_TABLE       failed_jobs                     FailedTable
//	DB_CONNECTION, DB_HOST, DB_PORT, DB_DATABASE, DB_USERNAME, DB_PASSWORD,
//	DB_URL (11+) / DATABASE_URL (≤10)                        FailedDatabase
//
// laraq's own settings (environment or Flags):
//
//	LARAQ_LARAVEL_VERSION    major version, e.g. 8 or 12.40 (default: the framework under
//	                         LaravelRoot, else guessed from the .env keys, else 11)
//	LARAQ_PREFIX_STYLE       underscore | hyphen
//	LARAQ_CACHE_SEPARATOR    true | false: ":" after the cache prefix (default: version ≤10)
//	LARAQ_CONNECTION         queue connection name in config/queue.php (default redis)
//	LARAQ_DATABASE           failed-job store DSN (sqlite:PATH, mysql://…, postgres://…, null)
//	LARAQ_ENV_FILE           the .env file when Sources.EnvFile is empty
//	LARAQ_REDIS_TLS, LARAQ_REDIS_TLS_CA, LARAQ_REDIS_TLS_INSECURE, LARAQ_REDIS_TLS_SERVER_NAME
//	LARAQ_REDIS_SENTINEL     host:port,host:port (with LARAQ_REDIS_SENTINEL_MASTER, default
//	                         mymaster, LARAQ_REDIS_SENTINEL_USERNAME/_PASSWORD)
//	LARAQ_REDIS_CLUSTER      host:port,host:port (one client; cache keys share the keyspace)
//
// Laravel has no standard variables for Sentinel or Cluster, hence laraq's own. A cached
// configuration (bootstrap/cache/config.php) makes Laravel ignore .env; Load warns about
// it. Config.Warnings lists every setting on which laraq and PHP would disagree, such as
// a cache store that is not Redis (restart, pause and maxExceptions then cannot be shared).
//
// # Secrets
//
// Config.String, Config.LogValue, Redis.String and RedactDSN replace passwords and the app
// key with "xxxxx", and errors about a malformed URL never quote its user information.
package laravel
