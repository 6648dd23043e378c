package rdb

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

//go:embed lock_release.lua
var lockReleaseSrc string

var lockReleaseScript = redis.NewScript(lockReleaseSrc)

// Locks are Laravel's cache locks on a Redis cache store (Illuminate\Cache\RedisLock),
// which ShouldBeUnique jobs hold between dispatch and processing. RedisStore::lock()
// names a lock like any cache key (connection prefix, cache prefix, ":" up to 10.x) and
// keeps it on the store's lock_connection: the skeleton's 'default', the queue's own
// Redis connection (REDIS_DB), not the cache connection.
type Locks struct {
	client redis.UniversalClient
	keys   CacheKeys
}

// NewLocks returns the locks of a cache store on client (the lock connection, owned by
// the caller) under the store's key scheme.
func NewLocks(client redis.UniversalClient, keys CacheKeys) (*Locks, error) {
	if client == nil {
		return nil, errors.New("rdb: nil lock redis client")
	}
	return &Locks{client: client, keys: keys}, nil
}

// Key is the Redis key of the lock named name.
func (l *Locks) Key(name string) string { return l.keys.Key(name) }

// Acquire takes the lock for owner as RedisLock::acquire() does: SET key owner EX
// seconds NX, or SETNX key owner when seconds is 0 (a lock that lasts until released).
// ok is false when someone holds it.
func (l *Locks) Acquire(ctx context.Context, name, owner string, seconds int64) (ok bool, err error) {
	key := l.Key(name)
	if seconds > 0 {
		_, err = l.client.SetArgs(ctx, key, owner, redis.SetArgs{Mode: "NX", TTL: secondsDuration(seconds)}).Result()
		if isNil(err) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("rdb: acquire lock %s: %w", key, err)
		}
		return true, nil
	}
	ok, err = l.client.SetNX(ctx, key, owner, 0).Result()
	if err != nil {
		return false, fmt.Errorf("rdb: acquire lock %s: %w", key, err)
	}
	return ok, nil
}

// Release releases the lock if owner holds it (RedisLock::release(), lock_release.lua).
func (l *Locks) Release(ctx context.Context, name, owner string) (released bool, err error) {
	key := l.Key(name)
	n, err := lockReleaseScript.Run(ctx, l.client, []string{key}, owner).Int64()
	if err != nil {
		return false, fmt.Errorf("rdb: release lock %s: %w", key, err)
	}
	return n == 1, nil
}

// ForceRelease deletes the lock whoever holds it (RedisLock::forceRelease(): DEL).
func (l *Locks) ForceRelease(ctx context.Context, name string) (released bool, err error) {
	key := l.Key(name)
	n, err := l.client.Del(ctx, key).Result()
	if err != nil {
		return false, fmt.Errorf("rdb: force-release lock %s: %w", key, err)
	}
	return n == 1, nil
}

// Owner returns who holds the lock (RedisLock::getCurrentOwner(): GET), held false when
// nobody does.
func (l *Locks) Owner(ctx context.Context, name string) (owner string, held bool, err error) {
	key := l.Key(name)
	owner, err = l.client.Get(ctx, key).Result()
	if isNil(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("rdb: read lock %s: %w", key, err)
	}
	return owner, true, nil
}

func secondsDuration(n int64) time.Duration { return time.Duration(n) * time.Second }
