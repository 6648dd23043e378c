package rdb

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/cache"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/phpser"
)

var (
	//go:embed cache_add.lua
	cacheAddSrc    string
	cacheAddScript = redis.NewScript(cacheAddSrc)
)

// RedisStore is Laravel's Redis cache store (Illuminate\Cache\RedisStore) as a
// cache.Store: the operations of its Repository go to the cache connection under the
// store's key scheme (CacheKeys: connection prefix, cache prefix, ":" up to 10.x), its
// locks to the lock connection (RedisLock, see Locks). The job middleware share their
// rate limits and overlap locks with PHP through it.
//
// Values cross the interface as PHP's serialize() writes them, and are stored the way
// RedisStore::serialize stores them: a number (an int, a finite float, a numeric string)
// raw, as "5" or "1700000060", anything else serialized. Get returns a raw number as it is
// stored ("5", as RedisStore::get hands PHP the numeric string) and anything else
// serialized.
type RedisStore struct {
	client redis.UniversalClient
	keys   CacheKeys
	locks  *Locks
}

var _ cache.Store = (*RedisStore)(nil)

// NewRedisStore returns the store on client (the store's connection, skeleton 'cache')
// with its locks on lockClient (lock_connection, skeleton 'default'); lockClient nil
// means client. Both are owned by the caller.
func NewRedisStore(client, lockClient redis.UniversalClient, keys CacheKeys) (*RedisStore, error) {
	if client == nil {
		return nil, errors.New("rdb: nil cache store redis client")
	}
	if lockClient == nil {
		lockClient = client
	}
	locks, err := NewLocks(lockClient, keys)
	if err != nil {
		return nil, err
	}
	return &RedisStore{client: client, keys: keys, locks: locks}, nil
}

// Keys returns the store's key scheme.
func (s *RedisStore) Keys() CacheKeys { return s.keys }

// Get is RedisStore::get: GET key.
func (s *RedisStore) Get(ctx context.Context, key string) (string, bool, error) {
	k := s.keys.Key(key)
	v, err := s.client.Get(ctx, k).Result()
	if isNil(err) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("rdb: cache get %s: %w", k, err)
	}
	return v, true, nil
}

// Put is RedisStore::put: SETEX key max(1, seconds) value.
func (s *RedisStore) Put(ctx context.Context, key, value string, seconds int64) error {
	k := s.keys.Key(key)
	if err := s.client.SetEx(ctx, k, storedValue(value), secondsDuration(max(1, seconds))).Err(); err != nil {
		return fmt.Errorf("rdb: cache put %s: %w", k, err)
	}
	return nil
}

// Add is RedisStore::add: the value is stored for max(1, seconds) only when key does not
// exist (cache_add.lua); added says whether it was.
func (s *RedisStore) Add(ctx context.Context, key, value string, seconds int64) (bool, error) {
	k := s.keys.Key(key)
	n, err := cacheAddScript.Run(ctx, s.client, []string{k}, storedValue(value), max(1, seconds)).Int64()
	if err != nil {
		return false, fmt.Errorf("rdb: cache add %s: %w", k, err)
	}
	return n == 1, nil
}

// Forget is RedisStore::forget: DEL key.
func (s *RedisStore) Forget(ctx context.Context, key string) error {
	k := s.keys.Key(key)
	if err := s.client.Del(ctx, k).Err(); err != nil {
		return fmt.Errorf("rdb: cache forget %s: %w", k, err)
	}
	return nil
}

// Increment is RedisStore::increment: INCRBY key by. Unlike the database store, Redis
// counts a missing key as 0 and creates it (without a TTL). A value that is no integer
// makes Redis refuse; phpredis then returns false, and so ok is false here, without error.
func (s *RedisStore) Increment(ctx context.Context, key string, by int64) (int64, bool, error) {
	k := s.keys.Key(key)
	n, err := s.client.IncrBy(ctx, k, by).Result()
	if err != nil {
		if strings.Contains(err.Error(), "not an integer") {
			return 0, false, nil
		}
		return 0, false, fmt.Errorf("rdb: cache increment %s: %w", k, err)
	}
	return n, true, nil
}

// AcquireLock is RedisLock::acquire on the lock connection (Locks.Acquire).
func (s *RedisStore) AcquireLock(ctx context.Context, name, owner string, seconds int64) (bool, error) {
	return s.locks.Acquire(ctx, name, owner, seconds)
}

// ReleaseLock is RedisLock::release (Locks.Release).
func (s *RedisStore) ReleaseLock(ctx context.Context, name, owner string) (bool, error) {
	return s.locks.Release(ctx, name, owner)
}

// ForceReleaseLock is RedisLock::forceRelease (Locks.ForceRelease).
func (s *RedisStore) ForceReleaseLock(ctx context.Context, name string) (bool, error) {
	return s.locks.ForceRelease(ctx, name)
}

// LockOwner is RedisLock::getCurrentOwner (Locks.Owner).
func (s *RedisStore) LockOwner(ctx context.Context, name string) (string, bool, error) {
	return s.locks.Owner(ctx, name)
}

// String names the store by its key scheme.
func (s *RedisStore) String() string {
	return "redis cache " + strconv.Quote(s.keys.Key(""))
}

// Close does nothing: the clients belong to the caller.
func (s *RedisStore) Close() error { return nil }

// storedValue is RedisStore::serialize of the PHP value whose serialized form is v: an
// int, a finite float or a numeric string is stored as PHP writes the number (an int in
// decimal, a float as its string cast, a numeric string as it is); anything else stays
// serialized. A v that is no serialized value at all (a raw number, as Get returns it) is
// kept as it is.
func storedValue(v string) string {
	if php.IsNumeric(v) {
		return v
	}
	val, err := phpser.DecodeString(v)
	if err != nil {
		return v
	}
	switch val.Kind() {
	case phpser.KindInt:
		return strconv.FormatInt(val.Int(), 10)
	case phpser.KindFloat:
		if f := val.Float(); !math.IsInf(f, 0) && !math.IsNaN(f) {
			return php.FloatString(f)
		}
	case phpser.KindString:
		if php.IsNumeric(val.Str()) {
			return val.Str()
		}
	}
	return v
}
