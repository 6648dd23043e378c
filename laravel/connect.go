package laravel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/failed/database"
)

// Connect reads the application's configuration (Load) and opens what a worker, a
// dispatcher or the admin API need: the Redis clients of the queue and of the cache
// store, and the failed-job store. Close the returned connection to close them. Load's
// warnings are logged at warn level on App.Logger.
//
//	conn, err := laravel.Connect(ctx, laravel.App{Root: "/var/www/shop"})
//
// `laraq work` connects the same way, so a worker built on this Connection behaves as
// `laraq work --laravel-root /var/www/shop` does.
func Connect(ctx context.Context, app App) (*laraq.Connection, error) {
	cfg, err := Load(app)
	if err != nil {
		return nil, err
	}
	log := app.logger()
	for _, w := range cfg.Warnings {
		log.Warn(w)
	}
	return cfg.Connect(ctx, ConnectOptions{Logger: log})
}

// ConnectOptions tune Config.Connect.
type ConnectOptions struct {
	// Worker sizes the clients' connection pools for a worker with these options
	// (laraq.WorkerConfig.PoolSizes), as `laraq work` does. Default nil: QueuePool and
	// CachePool.
	Worker *laraq.WorkerConfig
	// QueuePool and CachePool are the least sizes of the clients' connection pools (a
	// worker needs Concurrency + 2 on the queue client), when Worker is nil. Default:
	// go-redis's default, 10 connections per CPU.
	QueuePool, CachePool int
	// CreateFailedTable creates a missing failed-job table with Laravel's schema instead
	// of failing (database.CreateIfMissing). Default false: the application's migration
	// owns it. The local store of an application without a database is always created.
	CreateFailedTable bool
	// FailedDatabase replaces the failed-job store's DSN (`laraq work --database`):
	// sqlite:PATH, mysql://…, postgres://… or null. Default: FailedStore's choice.
	FailedDatabase string
	// WithoutFailedStore opens no failed-job store, for what needs Redis only (stats,
	// restart, pause, dispatch). Default false.
	WithoutFailedStore bool
	// Logger receives the failed-job store's warnings. Default slog.Default().
	Logger *slog.Logger
	// WithoutRedisCheck skips the check of the servers, for what may not use Redis at
	// all, such as listing failed jobs. Default false: refused credentials
	// (Connection.CheckCredentials), a refused TLS certificate (ErrRedisTLS) and a
	// Sentinel deployment of which no Sentinel answers (ErrSentinel) fail Connect at
	// once; a server that does not answer yet is waited for by what uses it.
	WithoutRedisCheck bool
	// RequireSharedCache makes a database cache store that cannot be opened an error
	// instead of a warning: what writes signals PHP must read (restart, pause) needs it.
	RequireSharedCache bool
}

// Connect opens the clients and the failed-job store of this configuration and returns
// the connection owning them.
func (c *Config) Connect(ctx context.Context, opts ConnectOptions) (*laraq.Connection, error) {
	conn := c.QueueConnection()
	if opts.Worker != nil {
		opts.QueuePool, opts.CachePool = opts.Worker.PoolSizes()
	}
	queue, cache, err := c.clients(opts.QueuePool, opts.CachePool)
	if err != nil {
		return nil, err
	}
	conn.Client, conn.Cache.Client = queue, cache
	// The Redis connections the job middleware's WithRedis variants may name.
	conn.RedisConnections = map[string]redis.UniversalClient{c.RedisConnection: queue, c.CacheConnection: cache}
	conn.Cache.RedisLimiter = c.CacheLimiterDriver == "redis" && c.CacheDriver != "redis"
	c.connectHorizon(conn, queue, cache)
	conn.Owned = append(conn.Owned, queue)
	if cache != queue {
		conn.Owned = append(conn.Owned, cache)
	}
	// Refused credentials fail at once; a server that does not answer yet is waited for.
	if !opts.WithoutRedisCheck {
		if err := c.checkServers(ctx, conn); err != nil {
			conn.Close()
			return nil, err
		}
		if err := conn.CheckCredentials(ctx); err != nil {
			conn.Close()
			return nil, err
		}
	}
	if err := c.connectCache(ctx, conn, opts.Logger); err != nil && opts.RequireSharedCache {
		conn.Close()
		return nil, err
	}
	if opts.WithoutFailedStore {
		return conn, nil
	}
	dsn, local := opts.FailedDatabase, false
	if dsn == "" {
		dsn, local, err = c.FailedStore()
		if err != nil {
			conn.Close()
			return nil, err
		}
	}
	store, err := c.openFailed(ctx, dsn, local || opts.CreateFailedTable, opts.Logger)
	if err != nil {
		conn.Close()
		return nil, err
	}
	if !isNull(store) {
		conn.Failed = store
		conn.Owned = append(conn.Owned, store)
	}
	c.connectBatches(ctx, conn, opts.Logger)
	return conn, nil
}

func isNull(s failed.Store) bool {
	n, ok := s.(fmt.Stringer)
	return ok && n.String() == "null"
}

// QueueConnection returns the queue connection this configuration describes, without clients
// or failed-job store: the connection name, prefix, default queue, retry_after, block_for,
// release, cluster hash tags (13.5+ on a cluster) and cache store prefix and schemes.
func (c *Config) QueueConnection() *laraq.Connection {
	var blockFor *time.Duration
	if c.BlockFor != nil {
		d := time.Duration(*c.BlockFor) * time.Second
		blockFor = &d
	}
	return &laraq.Connection{
		BlockFor:   blockFor,
		Name:       c.Connection,
		Prefix:     c.Prefix,
		Queue:      c.Queue,
		RetryAfter: time.Duration(c.RetryAfter) * time.Second,
		Release:    c.Release,
		HashTags:   c.Redis.Cluster && c.Release.AtLeast(13, 5, 0),
		Encrypter:  c.Encryption.Encrypter(),
		Cache: laraq.CacheStore{
			Prefix:    c.CachePrefix,
			AlsoWatch: c.AlsoWatch(),
		},
	}
}

// clients creates the Redis clients (go-redis dials on first use); one client serves
// both connections when they are the same database.
func (c *Config) clients(queuePool, cachePool int) (queue, cache redis.UniversalClient, err error) {
	qo, err := c.Redis.UniversalOptions()
	if err != nil {
		return nil, nil, err
	}
	if c.CacheRedis.same(c.Redis) {
		if queuePool > 0 || cachePool > 0 {
			qo.PoolSize = poolSize(queuePool + cachePool)
		}
		q := named(c.Redis, redis.NewUniversalClient(qo))
		return q, q, nil
	}
	co, err := c.CacheRedis.UniversalOptions()
	if err != nil {
		return nil, nil, err
	}
	if queuePool > 0 {
		qo.PoolSize = poolSize(queuePool)
	}
	if cachePool > 0 {
		co.PoolSize = poolSize(cachePool)
	}
	return named(c.Redis, redis.NewUniversalClient(qo)), named(c.CacheRedis, redis.NewUniversalClient(co)), nil
}

// sentinelClient is go-redis' Sentinel failover client with the name of its deployment,
// which laraq.ServerOf prints (go-redis calls every such client "FailoverClient").
type sentinelClient struct {
	*redis.Client
	name string
}

// ServerName names the master set, its Sentinels and the database, without secrets.
func (c *sentinelClient) ServerName() string { return c.name }

// named wraps a Sentinel failover client in a sentinelClient.
func named(r Redis, cl redis.UniversalClient) redis.UniversalClient {
	if fc, ok := cl.(*redis.Client); ok && r.SentinelMaster != "" {
		return &sentinelClient{Client: fc, name: fmt.Sprintf("sentinel master %s via %s/%d", r.SentinelMaster, strings.Join(r.Addrs, ","), r.DB)}
	}
	return cl
}

// poolSize is need, or go-redis' default (10 per CPU) when that is larger.
func poolSize(need int) int {
	return max(need, 10*runtime.GOMAXPROCS(0))
}

// LocalFailedFile is where failed jobs go when the application names no failed-job
// database: $XDG_DATA_HOME/laraq/failed.sqlite, ~/.local/share/laraq/failed.sqlite by
// default, which `laraq failed` reads too.
const LocalFailedFile = "$XDG_DATA_HOME/laraq/failed.sqlite (~/.local/share/laraq/failed.sqlite)"

// FailedStore decides where failed jobs are kept: LARAQ_DATABASE, or the failed-job table
// of the application (its QUEUE_FAILED_DRIVER and DB_* settings, when something other
// than the skeleton's defaults names the database, or with App.Root, where even the
// default names a real database), so that `php artisan queue:failed` and `queue:retry`
// see laraq's failures; else a SQLite file of the user's own (LocalFailedFile), which PHP
// does not see: local reports that case.
func (c *Config) FailedStore() (dsn string, local bool, err error) {
	if c.FailedDatabase != "" && (c.Origin("FailedDatabase").Kind != Default || c.root != "") {
		return c.FailedDatabase, false, nil
	}
	dir, _ := c.lookup("XDG_DATA_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, _ := c.lookup("HOME")
		if home == "" {
			return "", false, errors.New("no failed-job database: name one (LARAQ_DATABASE or --database: a DSN or null), or the application's DB_* settings")
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return "sqlite:" + filepath.Join(dir, "laraq", "failed.sqlite"), true, nil
}

// openFailed opens the store a DSN names, creating the directory of a local file.
func (c *Config) openFailed(ctx context.Context, dsn string, create bool, logger *slog.Logger) (failed.Store, error) {
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok && create {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return nil, fmt.Errorf("failed-job store: %w", err)
		}
	}
	opts := c.FailedOptions()
	opts.Logger = logger
	if create {
		opts.CreateTable = database.CreateIfMissing
	}
	store, err := database.Open(ctx, dsn, opts)
	if err != nil {
		return nil, fmt.Errorf("failed-job store %s: %w", RedactDSN(dsn), err)
	}
	return store, nil
}
