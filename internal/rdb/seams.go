package rdb

import (
	"context"

	"github.com/laraq/laraq/cache"
)

// What PHP workers share through the application's cache store is read and written
// through these two seams, each with a Redis implementation (Cache, Locks) and one on a
// Laravel cache store that is not Redis (StoreCache, StoreLocks: package cache, the
// database store of Laravel 11+ skeletons).

// Signals are the keys PHP workers share their signals and counters through:
// queue:restart, queue:pause, job-exceptions counters and debounce owners. *Cache and
// *StoreCache implement it.
type Signals interface {
	RestartTimestamp(ctx context.Context) (int64, bool, error)
	SignalRestart(ctx context.Context, now int64) error
	Paused(ctx context.Context, connection string, queues []string) (all bool, paused []bool, err error)
	Pause(ctx context.Context, connection, queue string) error
	Resume(ctx context.Context, connection, queue string) error
	PauseAll(ctx context.Context) error
	ResumeAll(ctx context.Context) error
	CountJobException(ctx context.Context, uuid string, maxExceptions int64) (count int64, exceeded bool, err error)
	DebounceOwner(ctx context.Context, jobName, debounceID string) (DebounceValue, error)
}

// UniqueLocks are the locks of ShouldBeUnique jobs. *Locks and StoreLocks implement it.
type UniqueLocks interface {
	// Key names the lock for logs and errors.
	Key(name string) string
	Acquire(ctx context.Context, name, owner string, seconds int64) (bool, error)
	Release(ctx context.Context, name, owner string) (bool, error)
	ForceRelease(ctx context.Context, name string) (bool, error)
}

// StoreLocks are the locks of a cache.Store.
type StoreLocks struct{ Store cache.Store }

// Key names a lock of the store.
func (l StoreLocks) Key(name string) string { return name + " (" + l.Store.String() + ")" }

// Acquire is Lock::acquire.
func (l StoreLocks) Acquire(ctx context.Context, name, owner string, seconds int64) (bool, error) {
	return l.Store.AcquireLock(ctx, name, owner, seconds)
}

// Release is Lock::release.
func (l StoreLocks) Release(ctx context.Context, name, owner string) (bool, error) {
	return l.Store.ReleaseLock(ctx, name, owner)
}

// ForceRelease is Lock::forceRelease.
func (l StoreLocks) ForceRelease(ctx context.Context, name string) (bool, error) {
	return l.Store.ForceReleaseLock(ctx, name)
}

var (
	_ Signals     = (*Cache)(nil)
	_ Signals     = (*StoreCache)(nil)
	_ UniqueLocks = (*Locks)(nil)
	_ UniqueLocks = StoreLocks{}
)
