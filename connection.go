package laraq

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/bus"
	"github.com/laraq/laraq/cache"
	"github.com/laraq/laraq/encryption"
	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/worker"
	"github.com/laraq/laraq/middleware"
)

// Defaults of Connection, as a Laravel skeleton's config/queue.php gives them.
const (
	DefaultConnectionName = "redis"          // the queue connection's name in config/queue.php
	DefaultQueue          = "default"        // the connection's `queue` (REDIS_QUEUE)
	DefaultRetryAfter     = 90 * time.Second // the skeleton's retry_after
)

// Connection is a Laravel queue connection on Redis, as config/queue.php and
// config/database.php describe it, plus what the worker shares with PHP through the
// application: its cache store (queue:restart, queue:pause, maxExceptions counters) and
// its failed-job store. Workers, dispatchers and the admin API take one.
//
// Build one by hand around a Redis client you own, or let package laravel read it from
// an application's .env and config files (laravel.Connect), which also opens the clients
// and the failed-job store and closes them with Close.
type Connection struct {
	// Client is the Redis connection the queue uses (config/database.php's `default`,
	// REDIS_DB). A *redis.Client, *redis.ClusterClient or a Sentinel failover client.
	// laraq never closes a client it did not create. Required.
	Client redis.UniversalClient
	// Name is the queue connection's name (config/queue.php's key, e.g. "redis"), which
	// failed_jobs rows and queue:pause keys carry. Default DefaultConnectionName.
	Name string
	// Prefix is the Redis prefix (config/database.php's redis.options.prefix), which PHP's
	// client puts before every key: "laravel_database_" in the 5.8–11.x skeletons,
	// Str::slug(APP_NAME).'-database-' from the 12.1 skeleton. Default "" (none).
	Prefix string
	// Queue is the connection's default queue (`queue`, REDIS_QUEUE): where a job that
	// names no queue goes, and what a worker works when told no queue. Default
	// DefaultQueue.
	Queue string
	// RetryAfter is retry_after: how long a reserved job belongs to its worker before any
	// worker may take it again. Rounded up to whole seconds. Default DefaultRetryAfter
	// (Laravel's connector falls back to 60 s when the key is missing from the config).
	RetryAfter time.Duration
	// BlockFor is block_for: nil (Laravel's null, the default) never blocks; otherwise an
	// idle worker waits this long on the queue's notify list instead of sleeping, 0 until
	// a job comes.
	BlockFor *time.Duration
	// MigrationBatchSize is migration_batch_size (9.23+): how many due delayed jobs or
	// expired reservations one migration moves. Default 0: no limit (Laravel's -1).
	MigrationBatchSize int
	// Release is the application's Laravel release. It decides the payloads Go writes,
	// the worker's failure messages and the cache key scheme. Default: unknown, treated as
	// a guess of LatestRelease (see Release).
	Release Release
	// HashTags wraps queue names as `queues:{NAME}` so that a queue's keys share one
	// Cluster slot, as Laravel 13.5+ does on a Redis Cluster connection; names that
	// already hold a hash tag (`{default}`, how ≤13.4 applications name cluster queues)
	// are left alone. Default false.
	HashTags bool
	// Cache is the application's cache store. Default: the queue's client and prefix
	// with no store prefix.
	Cache CacheStore
	// Encrypter is the application's Encrypter (APP_KEY, app.cipher, APP_PREVIOUS_KEYS
	// on 11+): a worker decrypts the command of a ShouldBeEncrypted job with it, a
	// dispatcher encrypts one. Default nil: such jobs fail as in a PHP worker without an
	// encrypter ("Unable to extract job payload."), and dispatching one is an error.
	Encrypter *encryption.Encrypter
	// Batches is the application's job_batches table (bus/database, which laravel.Connect
	// opens on the queue.batching database): a worker records batched jobs' successes
	// and failures there as PHP's worker does. Default nil: job_batches is not updated.
	Batches bus.Repository
	// Failed receives failed jobs: failed/database's store on the application's
	// failed_jobs table, for `php artisan queue:failed` and `queue:retry`. Default nil:
	// failed jobs are dropped like Laravel's "null" failed driver (a worker then releases
	// jobs without handler instead of failing them).
	Failed failed.Store
	// RedisConnections are the application's Redis connections by name (config/
	// database.php's redis.NAME), for the connection() of the job middleware's WithRedis
	// variants (12.51+); they share Prefix. Default none: such a middleware fails its
	// attempts with an error naming the connection.
	RedisConnections map[string]redis.UniversalClient
	// Horizon, when set, makes workers and dispatchers on this connection write Laravel
	// Horizon's records as the application's Horizon does (see HorizonOptions): its
	// dashboard then lists Go's jobs beside PHP's. laravel.Load sets it for an
	// application that uses Horizon. Default nil: no Horizon records.
	Horizon *HorizonOptions
	// Owned are what Close closes: the clients and store a loader such as laravel.Connect
	// opened for this connection. Default none.
	Owned []io.Closer
}

// CacheStore is the Laravel cache store PHP workers keep their shared keys in:
// `illuminate:queue:restart`, `illuminate:queue:paused:CONNECTION:QUEUE` (12.40+),
// `illuminate:queues:paused` (13.25+) and `job-exceptions:UUID`. PHP's workers only see
// laraq's keys, and laraq theirs, when the application's default cache store is redis
// (CACHE_STORE, CACHE_DRIVER before 11.x) on the same server.
type CacheStore struct {
	// Client is the cache store's Redis connection (config/database.php's `cache`,
	// REDIS_CACHE_DB, database 1 in the skeleton). Default: Connection.Client.
	Client redis.UniversalClient
	// Prefix is the cache prefix (config/cache.php's `prefix`): "laravel_cache" in 8.x,
	// "laravel_cache_" in 9.x–11.x, "laravel-cache-" from the 12.1 skeleton. The key
	// also carries Connection.Prefix, and up to 10.x a ":" after Prefix. Default "".
	Prefix string
	// LockClient is the store's lock_connection, where ShouldBeUnique jobs' locks live:
	// the skeleton's 'default' (REDIS_CACHE_LOCK_CONNECTION on 11+), the queue's own
	// connection. Default: Connection.Client.
	LockClient redis.UniversalClient
	// Disabled works without a cache, as queue:work on an application without one: no
	// restart or pause signals, no maxExceptions. Default false.
	Disabled bool
	// Store, when set, is the application's cache store when it is not Redis (Laravel
	// 11+'s default CACHE_STORE=database: package cache/database): restart and pause
	// signals, maxExceptions counters, debounce owners and unique locks are read and
	// written there instead, and Client, Prefix, LockClient and AlsoWatch are not used.
	// laravel.Connect opens it for such an application. Default nil.
	Store cache.Store
	// Limiter is the store the job middleware's RateLimiter counts in (RateLimited,
	// ThrottlesExceptions) when config cache.limiter names another store than the
	// default one. Default nil: the default store (Store, else the Redis store).
	Limiter cache.Store
	// RedisLimiter makes the RateLimiter count in the Redis store (Client, Prefix) while
	// Store is the default store: cache.limiter naming the redis store. Default false.
	RedisLimiter bool
	// AlsoWatch are further key schemes whose restart and pause signals the worker reads
	// too (never writes), for an application whose release is only guessed. Default: for
	// an unknown or guessed Release, the same prefixes with and without the ":" of
	// Laravel ≤10; loaders that know APP_NAME add the schemes each skeleton derives
	// from it.
	AlsoWatch []CacheScheme
}

// CacheScheme is one way Laravel names a cache key in Redis: ConnectionPrefix, then
// Prefix, then ":" when Separator (RedisStore up to Laravel 10), then the key.
type CacheScheme struct {
	ConnectionPrefix string
	Prefix           string
	Separator        bool
}

func (s CacheScheme) keys() rdb.CacheKeys {
	return rdb.CacheKeys{RedisPrefix: s.ConnectionPrefix, Prefix: s.Prefix, Separator: s.Separator}
}

// RestartKey is the Redis key `php artisan queue:restart` writes under this scheme.
func (s CacheScheme) RestartKey() string { return s.keys().Restart() }

// PauseKey is the Redis key `php artisan queue:pause connection:queue` writes.
func (s CacheScheme) PauseKey(connection, queue string) string {
	return s.keys().Paused(connection, queue)
}

// PauseAllKey is the Redis key of Laravel 13.25's pause-all switch.
func (s CacheScheme) PauseAllKey() string { return s.keys().PausedAll() }

// Close closes what the connection owns (Owned), in reverse order: nothing for a
// connection built by hand around a caller's client.
func (c *Connection) Close() error {
	var errs []error
	for i := len(c.Owned) - 1; i >= 0; i-- {
		if err := c.Owned[i].Close(); err != nil {
			errs = append(errs, err)
		}
	}
	c.Owned = nil
	return errors.Join(errs...)
}

// name, queue, retryAfter… are the fields with their defaults applied.
func (c *Connection) name() string {
	if c.Name == "" {
		return DefaultConnectionName
	}
	return c.Name
}

func (c *Connection) queue() string {
	if c.Queue == "" {
		return DefaultQueue
	}
	return c.Queue
}

func (c *Connection) retryAfter() time.Duration {
	if c.RetryAfter <= 0 {
		return DefaultRetryAfter
	}
	return c.RetryAfter
}

func (c *Connection) migrationLimit() int {
	if c.MigrationBatchSize <= 0 {
		return -1
	}
	return c.MigrationBatchSize
}

// CacheScheme is how this connection names the cache keys it writes: the connection
// prefix, the cache prefix, and the ":" RedisStore put after the prefix up to Laravel 10
// (11.0 stopped "magic prefixing").
func (c *Connection) CacheScheme() CacheScheme {
	return CacheScheme{ConnectionPrefix: c.Prefix, Prefix: c.Cache.Prefix, Separator: job.OrLatest(c.Release).Major <= 10}
}

// WatchedSchemes are the schemes whose restart and pause signals a worker reads:
// CacheScheme first, then Cache.AlsoWatch, or, for an unknown or guessed release without
// AlsoWatch, the same prefixes with the other separator.
func (c *Connection) WatchedSchemes() []CacheScheme {
	primary := c.CacheScheme()
	out := []CacheScheme{primary}
	alts := c.Cache.AlsoWatch
	if alts == nil && job.OrLatest(c.Release).Guessed && c.Cache.Prefix != "" {
		other := primary
		other.Separator = !other.Separator
		alts = []CacheScheme{other}
	}
	seen := map[string]bool{primary.RestartKey(): true}
	for _, a := range alts {
		if k := a.RestartKey(); !seen[k] {
			seen[k] = true
			out = append(out, a)
		}
	}
	return out
}

// rdb returns the wire layer for this connection.
func (c *Connection) rdb() (*rdb.RDB, error) {
	if c == nil || c.Client == nil {
		return nil, errors.New("laraq: Connection.Client is nil")
	}
	opts := rdb.Options{Prefix: c.Prefix, ClusterHashTags: c.HashTags}
	if !c.Cache.Disabled {
		watched := c.WatchedSchemes()
		opts.Cache = rdb.CacheOptions{Client: c.Cache.Client, Keys: watched[0].keys()}
		for _, s := range watched[1:] {
			opts.Cache.AlsoWatch = append(opts.Cache.AlsoWatch, s.keys())
		}
	}
	r, err := rdb.New(c.Client, opts)
	if err != nil {
		return nil, fmt.Errorf("laraq: %w", err)
	}
	return r, nil
}

// Describe names the connection for logs, without secrets: the Redis server(s), the
// prefix, the release and the failed-job store.
func (c *Connection) Describe() string {
	var b strings.Builder
	fmt.Fprintf(&b, "connection %s on %s, prefix %q, Laravel %s", c.name(), ServerOf(c.Client), c.Prefix, c.Release)
	fmt.Fprintf(&b, ", failed jobs to %s", storeName(c.Failed))
	return b.String()
}

// storeName names a failed-job store: its String() when it has one (failed/database's
// stores name their database and table without the password), "null" for none.
func storeName(s failed.Store) string {
	if s == nil {
		return "null (failed jobs are dropped)"
	}
	if n, ok := s.(fmt.Stringer); ok {
		return n.String()
	}
	return fmt.Sprintf("%T", s)
}

// signals is the connection's signal cache on r.
func (c *Connection) signals(r *rdb.RDB) rdb.Signals {
	if c.Cache.Store != nil {
		return rdb.NewStoreCache(c.Cache.Store)
	}
	return r.Cache()
}

// locks are the connection's cache locks: CacheStore.LockClient (else the queue's
// client), under the cache key scheme.
func (c *Connection) locks() (rdb.UniqueLocks, error) {
	if c.Cache.Store != nil {
		return rdb.StoreLocks{Store: c.Cache.Store}, nil
	}
	client := c.Cache.LockClient
	if client == nil {
		client = c.Client
	}
	return rdb.NewLocks(client, c.CacheScheme().keys())
}

// describeTo puts what a worker's start line names into its config, without secrets:
// the Redis server, the prefix, the failed-job store, and the cache store or the Redis
// cache keys the worker watches.
func (c *Connection) describeTo(s *worker.Config) {
	s.Server, s.Prefix, s.FailedStore = ServerOf(c.Client), c.Prefix, storeName(c.Failed)
	if st := c.Cache.Store; st != nil {
		s.CacheStore = st.String()
		return
	}
	cache := c.Cache.Client
	if cache == nil {
		cache = c.Client
	}
	s.CacheServer = ServerOf(cache)
	for _, k := range c.WatchedSchemes() {
		s.RestartKeys = append(s.RestartKeys, k.RestartKey())
		s.PauseKeys = append(s.PauseKeys, k.PauseAllKey())
		for _, q := range s.Queues {
			s.PauseKeys = append(s.PauseKeys, k.PauseKey(s.Connection, q))
		}
	}
}

// middlewareEnv is what the job middleware of a worker on this connection find in their
// context: the default cache store (WithoutOverlapping's lock), the limiter store, the
// Redis connections of the DurationLimiter, the named limiters; and the Redis clients
// whose middleware scripts the worker loads at start.
func (c *Connection) middlewareEnv(s *worker.Config, limiters *middleware.Limiters) (*middleware.Env, []redis.UniversalClient, error) {
	if limiters == nil {
		limiters = middleware.NewLimiters()
	}
	log := s.Logger
	env := &middleware.Env{Release: s.Release, Redis: c.Client, RedisPrefix: c.Prefix, RedisConnections: c.RedisConnections,
		Limiters: limiters, Now: s.Now, Limiter: c.Cache.Limiter,
		Report: func(ctx context.Context, err error) {
			log.ErrorContext(ctx, "job exception reported by its middleware", "err", err)
		}}
	if d := c.RedisConnections["default"]; d != nil {
		env.Redis = d // Redis::connection(): database.redis.default, whatever the queue's
	}
	clients := []redis.UniversalClient{env.Redis}
	if c.Cache.Disabled {
		return env, clients, nil
	}
	var redisStore cache.Store
	if c.Cache.Store == nil || c.Cache.RedisLimiter {
		cacheClient, lockClient := c.Cache.Client, c.Cache.LockClient
		if cacheClient == nil {
			cacheClient = c.Client
		}
		if lockClient == nil {
			lockClient = c.Client
		}
		store, err := rdb.NewRedisStore(cacheClient, lockClient, c.CacheScheme().keys())
		if err != nil {
			return nil, nil, fmt.Errorf("laraq: %w", err)
		}
		redisStore = store
		for _, cl := range []redis.UniversalClient{cacheClient, lockClient} {
			if cl != env.Redis && (len(clients) < 2 || clients[1] != cl) {
				clients = append(clients, cl)
			}
		}
	}
	env.Cache = c.Cache.Store
	if env.Cache == nil {
		env.Cache = redisStore
	}
	if env.Limiter == nil && c.Cache.RedisLimiter {
		env.Limiter = redisStore
	}
	return env, clients, nil
}
