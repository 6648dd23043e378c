// Package cache is the seam to a Laravel cache store that is not Redis: the store PHP
// workers keep their shared keys in (`illuminate:queue:restart`, the queue:pause flags,
// `job-exceptions:UUID` counters, debounce owners) and, as a lock provider, the locks of
// ShouldBeUnique jobs. Laravel 11+ skeletons default to the database store
// (CACHE_STORE=database); package cache/database is that store on database/sql.
//
// The interface speaks in the store's own terms: keys without the store's prefix (the
// store adds it, as Laravel's stores do) and values as PHP's serialize() writes them
// ("i:1700000000;", "b:1;"). A store that keeps numbers unserialized, as Laravel's
// RedisStore does, returns them as stored ("5"); readers accept both forms. What the keys
// mean and how the values are read is the worker's business, the same for every store.
package cache

import "context"

// Forever is the lifetime Laravel's Repository::forever gives a value in stores without
// a "no expiry" (DatabaseStore::forever: 315360000 seconds, ten years).
const Forever = 315360000

// Store is a Laravel cache store and lock provider. Implementations are safe for
// concurrent use.
type Store interface {
	// Get returns the serialized value of key, or found = false when there is none or it
	// has expired (an expired entry may be deleted, as Laravel's stores do).
	Get(ctx context.Context, key string) (value string, found bool, err error)
	// Put stores a serialized value for seconds (Store::put; Forever for forever()).
	Put(ctx context.Context, key, value string, seconds int64) error
	// Add stores a serialized value for seconds only when key holds no unexpired value
	// (Store::add, which Repository::add prefers); added says whether it did. The job
	// middleware's RateLimiter opens its windows with it.
	Add(ctx context.Context, key, value string, seconds int64) (added bool, err error)
	// Forget deletes key (Store::forget).
	Forget(ctx context.Context, key string) error
	// Increment adds by to the integer stored at key and returns the new value
	// (Store::increment); ok is false, and nothing changes, when key is missing or its
	// value is not numeric (DatabaseStore::increment returns false then).
	Increment(ctx context.Context, key string, by int64) (n int64, ok bool, err error)

	// AcquireLock takes the lock name for owner for seconds (0: the store's default
	// timeout), or re-takes it when owner holds it or it expired (Lock::acquire).
	AcquireLock(ctx context.Context, name, owner string, seconds int64) (bool, error)
	// ReleaseLock releases the lock when owner holds it (Lock::release).
	ReleaseLock(ctx context.Context, name, owner string) (bool, error)
	// ForceReleaseLock releases the lock whoever holds it (Lock::forceRelease); it
	// reports whether there was one.
	ForceReleaseLock(ctx context.Context, name string) (bool, error)
	// LockOwner returns the owner of an unexpired lock (Lock::getCurrentOwner).
	LockOwner(ctx context.Context, name string) (owner string, held bool, err error)

	// String names the store (without a password), for logs.
	String() string
	// Close releases what the store owns.
	Close() error
}
