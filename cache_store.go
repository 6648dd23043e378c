package laraq

import (
	"context"

	"github.com/laraq/laraq/cache"
	"github.com/laraq/laraq/internal/rdb"
)

// signalCache is the cache PHP workers share their signals through: the Redis cache
// store (rdb.Cache) or, with CacheStore.Store, another Laravel store (rdb.StoreCache).
type signalCache interface {
	RestartTimestamp(ctx context.Context) (int64, bool, error)
	SignalRestart(ctx context.Context, now int64) error
	Paused(ctx context.Context, connection string, queues []string) (all bool, paused []bool, err error)
	Pause(ctx context.Context, connection, queue string) error
	Resume(ctx context.Context, connection, queue string) error
	PauseAll(ctx context.Context) error
	ResumeAll(ctx context.Context) error
	CountJobException(ctx context.Context, uuid string, maxExceptions int64) (count int64, exceeded bool, err error)
	DebounceOwner(ctx context.Context, jobName, debounceID string) (rdb.DebounceValue, error)
}

// signals is the connection's signal cache on r.
func (c *Connection) signals(r *rdb.RDB) signalCache {
	if c.Cache.Store != nil {
		return rdb.NewStoreCache(c.Cache.Store)
	}
	return r.Cache()
}

// uniqueLocks are the locks of ShouldBeUnique jobs: Redis locks (rdb.Locks) or those of
// CacheStore.Store.
type uniqueLocks interface {
	Key(name string) string
	Acquire(ctx context.Context, name, owner string, seconds int64) (bool, error)
	Release(ctx context.Context, name, owner string) (bool, error)
	ForceRelease(ctx context.Context, name string) (bool, error)
}

// storeLocks are the locks of a cache.Store.
type storeLocks struct{ s cache.Store }

func (l storeLocks) Key(name string) string { return name + " (" + l.s.String() + ")" }
func (l storeLocks) Acquire(ctx context.Context, name, owner string, seconds int64) (bool, error) {
	return l.s.AcquireLock(ctx, name, owner, seconds)
}
func (l storeLocks) Release(ctx context.Context, name, owner string) (bool, error) {
	return l.s.ReleaseLock(ctx, name, owner)
}
func (l storeLocks) ForceRelease(ctx context.Context, name string) (bool, error) {
	return l.s.ForceReleaseLock(ctx, name)
}
