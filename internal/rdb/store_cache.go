package rdb

import (
	"context"
	"fmt"
	"strconv"

	"github.com/laraq/laraq/cache"
)

// StoreCache is Cache on a Laravel cache store that is not Redis (package cache: the
// database store of Laravel 11+ skeletons): the same keys, without the Redis prefixes
// (the store puts its own prefix before them), and the values Laravel's Repository
// writes through any store, serialized ("i:1700000000;", "b:1;"). It has Cache's
// methods, with the worker's rules unchanged.
type StoreCache struct {
	store cache.Store
	keys  CacheKeys // no prefixes: the store adds its own
}

// NewStoreCache returns the cache operations on store.
func NewStoreCache(store cache.Store) *StoreCache { return &StoreCache{store: store} }

// Store is the store the operations go to.
func (c *StoreCache) Store() cache.Store { return c.store }

// RestartTimestamp reads the queue:restart signal: Repository::get of the restart key,
// an integer.
func (c *StoreCache) RestartTimestamp(ctx context.Context) (int64, bool, error) {
	v, ok, err := c.store.Get(ctx, c.keys.Restart())
	if err != nil || !ok {
		return 0, false, err
	}
	ts, err := parseCacheInt(v)
	if err != nil {
		return 0, false, fmt.Errorf("rdb: restart signal %s in %s: %w", c.keys.Restart(), c.store, err)
	}
	return ts, true, nil
}

// SignalRestart writes the restart signal as `php artisan queue:restart` does:
// Repository::forever(key, now), serialized.
func (c *StoreCache) SignalRestart(ctx context.Context, now int64) error {
	return c.store.Put(ctx, c.keys.Restart(), "i:"+strconv.FormatInt(now, 10)+";", cache.Forever)
}

// Paused reads the pause-all switch and each queue's pause flag, truthy in PHP terms.
func (c *StoreCache) Paused(ctx context.Context, connection string, queues []string) (all bool, paused []bool, err error) {
	truthy := func(key string) (bool, error) {
		v, ok, err := c.store.Get(ctx, key)
		return ok && phpTruthy(v), err
	}
	if all, err = truthy(c.keys.PausedAll()); err != nil {
		return false, nil, fmt.Errorf("rdb: read pause flags: %w", err)
	}
	paused = make([]bool, len(queues))
	for i, q := range queues {
		if paused[i], err = truthy(c.keys.Paused(connection, q)); err != nil {
			return false, nil, fmt.Errorf("rdb: read pause flags: %w", err)
		}
	}
	return all, paused, nil
}

// Pause sets a queue's pause flag (Repository::forever(key, true)).
func (c *StoreCache) Pause(ctx context.Context, connection, queue string) error {
	return c.store.Put(ctx, c.keys.Paused(connection, queue), pausedValue, cache.Forever)
}

// Resume clears it (Repository::forget).
func (c *StoreCache) Resume(ctx context.Context, connection, queue string) error {
	return c.store.Forget(ctx, c.keys.Paused(connection, queue))
}

// PauseAll sets the global pause switch of Laravel 13.25+.
func (c *StoreCache) PauseAll(ctx context.Context) error {
	return c.store.Put(ctx, c.keys.PausedAll(), pausedValue, cache.Forever)
}

// ResumeAll clears the global pause switch.
func (c *StoreCache) ResumeAll(ctx context.Context) error {
	return c.store.Forget(ctx, c.keys.PausedAll())
}

// CountJobException is the Worker's maxExceptions step, through Repository: when get()
// of the counter is falsy, put(key, 0, one day); then increment(); when maxExceptions <=
// the result, forget() and exceeded. A store whose increment fails (returns false)
// counts as 0, as PHP compares `$maxExceptions <= false`.
func (c *StoreCache) CountJobException(ctx context.Context, uuid string, maxExceptions int64) (count int64, exceeded bool, err error) {
	key := c.keys.JobExceptions(uuid)
	v, ok, err := c.store.Get(ctx, key)
	if err != nil {
		return 0, false, fmt.Errorf("rdb: read exception counter %s: %w", key, err)
	}
	if !ok || !phpTruthy(v) {
		if err := c.store.Put(ctx, key, "i:0;", JobExceptionsTTL); err != nil {
			return 0, false, fmt.Errorf("rdb: create exception counter %s: %w", key, err)
		}
	}
	count, _, err = c.store.Increment(ctx, key, 1)
	if err != nil {
		return 0, false, fmt.Errorf("rdb: increment exception counter %s: %w", key, err)
	}
	if maxExceptions <= count {
		return count, true, c.store.Forget(ctx, key)
	}
	return count, false, nil
}

// DebounceOwner reads the owner token of a debounced job (13.6+) through the store.
func (c *StoreCache) DebounceOwner(ctx context.Context, jobName, debounceID string) (DebounceValue, error) {
	v, ok, err := c.store.Get(ctx, c.keys.DebouncedJob(jobName, debounceID))
	if err != nil || !ok {
		return DebounceValue{}, err
	}
	return debounceValue(v), nil
}
