// Package laravel reads a Laravel application's queue configuration the way the PHP side
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
// # The application's configuration
//
// Laravel's config files are where .env values enter: config/database.php's
// env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_database_') reads
// REDIS_PREFIX and APP_NAME, a literal 'prefix' => 'shop:' reads nothing. Load does the
// same: with the application's root it reads config/app.php, cache.php, database.php and
// queue.php (or, when it exists, the cached bootstrap/cache/config.php alone, as PHP
// does), and evaluates the expression of each key laraq needs:
//
//	database.redis.options.prefix, database.redis.CONN.{url,host,port,username,password,
//	database,prefix,options.prefix}, database.redis.client, database.default,
//	database.connections.NAME.{driver,url,host,port,database,username,password}
//	cache.default, cache.prefix, cache.stores.STORE.{driver,connection,prefix}
//	queue.default, queue.connections.redis.{driver,connection,queue,retry_after,
//	block_for,after_commit}, queue.failed.{driver,database,table}
//	app.timezone, app.key, app.cipher
//
// The evaluator knows the expressions config files use, and nothing more: string
// literals and "." concatenation, int, bool and null literals, (string), (int) and
// (bool) casts, env('NAME'[, default]) with nested defaults (process environment, then
// .env, with env()'s true/false/null/empty keywords), Str::slug(x[, separator]) and
// database_path([path]). Anything else (a variable, another function, an operator) is
// not guessed at: Load warns, naming the file and line, the key and the expression, and
// uses the value of the skeleton's expression for that key instead. A variable the
// configuration does not read but that is set with another value (REDIS_PREFIX beside a
// literal prefix, APP_TIMEZONE on 8.x–10.x and 12.x, REDIS_QUEUE_RETRY_AFTER before
// 11.x) is warned about too: PHP ignores it.
//
// On 11.x+ an application may leave config files or top-level keys out; Laravel merges the
// framework's own config files under its own (a connection or store the application does
// not define comes from there too), and so does Load: vendor/laravel/framework/config when
// installed, else laraq's knowledge of them. The 12.x framework's own files keep the
// underscore prefixes of the 12.0 skeleton.
//
// The root is App.Root, or the .env file's directory when that holds an application
// (artisan, or config/ beside composer.json): `laraq work --env-file /var/www/shop/.env`
// reads /var/www/shop's config files and framework (Origins["Root"] says so). With only
// a .env elsewhere, database_path() is its directory's database/.
//
// # Derived values
//
// Without config files, the skeleton of the release decides. The Redis connection prefix
// and the cache prefix default to Str::slug(APP_NAME) plus a suffix that depends on the
// skeleton the application was created from:
//
//	skeleton            redis prefix          cache prefix       cache key of K
//	5.8–8.x             laravel_database_     laravel_cache      laravel_database_laravel_cache:K
//	9.x–10.x            laravel_database_     laravel_cache_     laravel_database_laravel_cache_:K
//	11.x                laravel_database_     laravel_cache_     laravel_database_laravel_cache_K
//	12.x before v12.1.0 laravel_database_     laravel_cache_     laravel_database_laravel_cache_K
//	12.1+, 13.x         laravel-database-     laravel-cache-     laravel-database-laravel-cache-K
//
// (11.x's .env.example sets CACHE_PREFIX= empty, so a fresh 11.x application's cache key
// is laravel_database_K.) Slug is Laravel's Str::slug, transliteration table included
// (checked code point by code point against PHP).
//
// The connection prefix is derived only for a known application: an .env file
// (App.EnvFile, LARAQ_ENV_FILE), a root, or an APP_NAME. With none of them
// Config.Prefix is empty (keys are plain queues:NAME) unless REDIS_PREFIX or
// LARAQ_REDIS_PREFIX say otherwise; the cache prefix is still the version's default, so
// the restart key is then laravel_cache_illuminate:queue:restart (11.x scheme).
//
// # The release
//
// LARAQ_LARAVEL_VERSION or App.Release, else the installed framework: the VERSION of
// vendor/laravel/framework's Application class, else vendor/composer/installed.json
// (Composer 1 and 2 formats), else composer.lock. Without one of these the release is a
// guess, Release.Guessed and Origins["Release"] say from what: composer.json's
// laravel/framework requirement (^13.0), else the forms of the config files only one
// skeleton wrote (hyphenated prefixes: 12.x from v12.1.0; CACHE_STORE with a literal or an
// env() timezone: 12.0 or 11.x; CACHE_DRIVER with the cache prefix '_cache' or '_cache_':
// 8.x or 9.x–10.x), else the keys of the .env file, which each skeleton's .env.example
// names differently: FILESYSTEM_DRIVER or MIX_* (or only CACHE_DRIVER / BROADCAST_DRIVER)
// give 8, FILESYSTEM_DISK or VITE_* next to CACHE_DRIVER give 10 (9 with MIX_*),
// CACHE_STORE, BROADCAST_CONNECTION or APP_MAINTENANCE_DRIVER give 11 (11.x, 12.x and 13.x
// .env files are the same: without config files a 12.1+ application is then taken for
// 11.x, and `laraq stats` shows which prefixes hold queues). Without any of these,
// DefaultRelease (11) applies. A guess can be wrong, and then the worker would never see
// `php artisan queue:restart`; Config.AlsoWatch therefore lists the other versions'
// schemes of the table above, under which `laraq work` reads the restart and pause
// signals too (keeping whatever the application states). With a known release there are
// none.
//
// # Precedence
//
// Highest first:
//
//  1. App.Flags, keyed by LARAQ_* name (the CLI maps --redis to LARAQ_REDIS_URL,
//     --prefix to LARAQ_REDIS_PREFIX, --queue to LARAQ_REDIS_QUEUE, --database to LARAQ_DATABASE)
//  2. LARAQ_<NAME> in the process environment: every Laravel variable NAME below can be
//     overridden as LARAQ_<NAME>, taken literally (no env() keywords); it replaces the
//     setting whatever the config file says
//  3. the application's configuration: the cached configuration alone if there is one;
//     else the config file's expression, whose env() reads NAME from the process
//     environment, then from the .env file (App.EnvFile, or Root/.env, or .env.<APP_ENV>)
//  4. what Laravel's code uses for a key the configuration leaves out (retry_after 60,
//     no prefix, queue "default", connection "default")
//  5. without config files (or for an expression laraq cannot evaluate), the same key of
//     the release's skeleton, whose env() reads the environment and .env the same way
//
// LARAQ_* overrides of a single part of a Redis connection (host, port, user, password,
// database) also win over its url; the application's own REDIS_HOST etc. do not, as in
// Laravel, where the URL's parts replace them. A database in a URL applies to both
// connections, as the skeleton gives both the same REDIS_URL; when that URL is laraq's
// (--redis, LARAQ_REDIS_URL) and moves the cache away from the application's cache
// database, Load warns.
//
//	variable                 default (skeleton)              used for
//	APP_NAME                 laravel                         the prefixes
//	APP_KEY                  -                               AppKey (base64: decoded), Encryption
//	APP_PREVIOUS_KEYS        - (11.x+)                       Encryption: older keys tried in order
//	app.cipher               AES-256-CBC (config/app.php)    Cipher, Encryption
//	APP_TIMEZONE             UTC (11.x only; else literal)   failed_at of failed jobs
//	REDIS_URL                -                               both connections
//	REDIS_HOST, REDIS_PORT   127.0.0.1, 6379                 both connections
//	REDIS_USERNAME           - (9.x+)                        ACL user
//	REDIS_PASSWORD           null                            AUTH
//	REDIS_DB                 0                               queue connection
//	REDIS_CACHE_DB           1                               cache connection
//	REDIS_CACHE_CONNECTION   cache (11.x+)                   "default": cache on REDIS_DB
//	REDIS_QUEUE_CONNECTION   default (11.x+)                 the queue's Redis connection
//	REDIS_PREFIX             see above ("" without an app)   Prefix
//	REDIS_QUEUE              default                         Queue
//	REDIS_QUEUE_RETRY_AFTER  90 (11.x+; before: 90 literal)  RetryAfter
//	QUEUE_CONNECTION         sync (≤10), database (11+)      a warning when not redis
//	CACHE_DRIVER/CACHE_STORE file (≤10) / database (11+)     a warning when not redis
//	CACHE_PREFIX             see above                       CachePrefix
//	QUEUE_FAILED_DRIVER      database-uuids                  FailedDriver
//	QUEUE_FAILED_TABLE       failed_jobs (literal)           FailedTable
//	DB_CONNECTION, DB_HOST, DB_PORT, DB_DATABASE, DB_USERNAME, DB_PASSWORD,
//	DB_URL (11+) / DATABASE_URL (≤10)                        FailedDatabase
//
// DB_CONNECTION=sqlite without DB_DATABASE is database_path('database.sqlite'): the
// root's database/database.sqlite (with only a .env, its directory's).
//
// laraq's own settings (environment or Flags):
//
//	LARAQ_LARAVEL_VERSION    major version, e.g. 8 or 12.40 (default: the framework under
//	                         the root, else guessed as above, else 11)
//	LARAQ_PREFIX_STYLE       underscore | hyphen
//	LARAQ_CONNECTION         queue connection name in config/queue.php (default redis)
//	LARAQ_DATABASE           failed-job store DSN (sqlite:PATH, mysql://…, postgres://…, null)
//	LARAQ_CACHE_DATABASE     the database cache store's DSN (default: its connection's,
//	                         DB_CACHE_CONNECTION else the default one; never LARAQ_DATABASE)
//	LARAQ_ENV_FILE           the .env file when App.EnvFile is empty
//	LARAQ_REDIS_TLS, LARAQ_REDIS_TLS_CA, LARAQ_REDIS_TLS_INSECURE, LARAQ_REDIS_TLS_SERVER_NAME
//	LARAQ_REDIS_SENTINEL     host:port,host:port (with LARAQ_REDIS_SENTINEL_MASTER, default
//	                         mymaster, LARAQ_REDIS_SENTINEL_USERNAME/_PASSWORD)
//	LARAQ_REDIS_CLUSTER      host:port,host:port (one client; cache keys share the keyspace)
//
// Laravel has no standard variables for Sentinel or Cluster, hence laraq's own. An
// application that connects through Sentinel with predis ('replication' => 'sentinel' in
// the redis options, the Sentinels as the connection's list, 'service' and the master's
// 'parameters') is read as PredisConnector reads it; LARAQ_REDIS_SENTINEL replaces its
// Sentinels, and a LARAQ_REDIS_URL given as a flag replaces both (with a warning when
// LARAQ_REDIS_SENTINEL is set). laravel/framework's phpredis connector has no Sentinel
// support (5.8 to 13.x). Connect fails at once with ErrSentinel when no Sentinel answers,
// or none knows the master's name. A cached
// configuration (bootstrap/cache/config.php) makes Laravel ignore .env and config/*.php;
// Load reads it instead and warns, since a stale cache is a common surprise.
// Config.Warnings lists every setting on which laraq and PHP would disagree, such as
// a cache store that is neither Redis nor the database store (restart, pause and
// maxExceptions then cannot be shared).
//
// # TLS
//
// A connection uses TLS as PHP's client would: a rediss:// or tls:// url (Laravel's
// ConfigurationUrlParser maps rediss to tls), the connection's 'scheme' => 'tls' (which
// applications add as env('REDIS_SCHEME', 'tcp')), a host written tls://host (or ssl://
// for phpredis), or LARAQ_REDIS_TLS. The server's certificate is checked against the
// system's roots, or the CAs of LARAQ_REDIS_TLS_CA, for the host connected to (or
// LARAQ_REDIS_TLS_SERVER_NAME). A certificate the client refuses fails Connect at once
// with ErrRedisTLS, naming the server and the setting that fixes it.
//
// # Secrets
//
// Config.String, Config.LogValue, Redis.String and RedactDSN replace passwords and the app
// key with "xxxxx", and errors about a malformed URL never quote its user information.
package laravel
