package laravel

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/laraq/laraq"
	cachedb "github.com/laraq/laraq/cache/database"
)

// SharedCacheStore reports whether laraq shares the application's cache store with PHP:
// a Redis store, or a database store the application chose (CACHE_STORE=database, the
// 11+ skeleton's .env), which Connect opens.
func (c *Config) SharedCacheStore() bool {
	return c.CacheDriver == "redis" || c.CacheDriver == "database" && chosen(c.Origin("CacheStore"))
}

// connectCache opens the application's database cache store when that is its default
// store (CACHE_STORE=database, the skeleton's default from 11.x): restart and pause
// signals, maxExceptions counters, debounce owners and unique locks are then read and
// written in its cache and cache_locks tables, where PHP's workers and artisan keep them.
// The store is on the database of its connection (DB_CACHE_CONNECTION, else the default
// one) as config/database.php describes it, or LARAQ_CACHE_DATABASE's; a database laraq
// cannot tell or a missing table is a warning, and the worker keeps its signals in
// Redis, which PHP does not read; the error returned says so.
func (c *Config) connectCache(ctx context.Context, conn *laraq.Connection, logger *slog.Logger) error {
	// Only a store the application chose: with nothing known of the application (no .env
	// or config naming one) the skeleton's default says nothing about it.
	if c.CacheDriver != "database" || !chosen(c.Origin("CacheStore")) {
		return nil
	}
	if logger == nil {
		logger = slog.Default()
	}
	unshared := "queue:restart, queue:pause, maxExceptions counters and unique locks are not shared with PHP workers"
	dsn := c.CacheDatabase
	if dsn == "" {
		conn := c.CacheDBConnection
		if conn == "" {
			conn = "the default connection"
		}
		err := fmt.Errorf("the application's cache store is the database store on %s, whose database laraq cannot tell (see the warnings; LARAQ_CACHE_DATABASE names it): %s", conn, unshared)
		logger.Warn(err.Error())
		return err
	}
	store, err := cachedb.Open(ctx, dsn, cachedb.Options{Table: c.CacheTable, LockTable: c.CacheLockTable, Prefix: c.CachePrefix,
		LockLottery: c.CacheLockLottery, LockTimeout: int64(c.CacheLockTimeout)})
	if err != nil {
		err = fmt.Errorf("opening the application's database cache store on %s: %w; %s", RedactDSN(dsn), err, unshared)
		logger.Warn(err.Error())
		return err
	}
	conn.Cache.Store = store
	conn.Owned = append(conn.Owned, store)
	return nil
}
