package rdb

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"
)

// Options configures an RDB.
type Options struct {
	// Prefix is the Redis connection prefix Laravel's PHP client adds to every key
	// (config/database.php redis.options.prefix): "laravel_database_" in the 5.8–11.x
	// skeletons, "laravel-database-" in 12.x. Default "" (no prefix).
	Prefix string

	// ClusterHashTags wraps queue names without a hash tag as `queues:{NAME}`, like
	// Laravel 13.5+ on a Redis Cluster connection. Leave it off for a single node or for
	// Laravel ≤13.4, where cluster users name their queues `{NAME}` themselves.
	// Default false.
	ClusterHashTags bool

	// Cache locates the Laravel cache keys workers use (restart and pause signals, the
	// maxExceptions counter). Default: the queue client, no prefixes.
	Cache CacheOptions

	// ReplicaAcks makes acknowledgements wait for replicas (see ReplicaAcks). Default:
	// they do not.
	ReplicaAcks ReplicaAcks
}

// CacheOptions says where the Laravel cache store keeps its keys.
type CacheOptions struct {
	// Client is the Redis connection of the cache store. Laravel's skeleton puts the
	// cache on its own connection, database 1 (REDIS_CACHE_DB), so this is usually a
	// different client from the queue's. Default nil: the queue client.
	Client redis.UniversalClient
	// Keys are the prefixes of the cache key names (see CacheKeys). Note that
	// Keys.RedisPrefix is not copied from Options.Prefix: set both, usually to the same
	// value. Default: no prefixes.
	Keys CacheKeys
	// AlsoWatch are alternative key schemes under which the restart and pause signals
	// are read too (see NewCache), for an application whose Laravel version is only
	// guessed. Writes never use them. Default none.
	AlsoWatch []CacheKeys
}

// RDB runs laraq's Redis operations on Laravel's queue keys. It is safe for concurrent
// use. It never closes the clients it was given.
type RDB struct {
	client   redis.UniversalClient
	prefix   string
	hashTags bool
	cache    *Cache
	replicas *replicaAcks // nil: acknowledgements are not confirmed

	keys sync.Map // queue name -> *QueueKeys
	args sync.Map // queue name -> *queueArgs
}

// New returns an RDB using client, which stays owned by the caller.
func New(client redis.UniversalClient, opts Options) (*RDB, error) {
	if client == nil {
		return nil, errors.New("rdb: nil redis client")
	}
	cacheClient := opts.Cache.Client
	if cacheClient == nil {
		cacheClient = client
	}
	cache, err := NewCache(cacheClient, opts.Cache.Keys, opts.Cache.AlsoWatch...)
	if err != nil {
		return nil, err
	}
	replicas, err := newReplicaAcks(client, opts.ReplicaAcks)
	if err != nil {
		return nil, err
	}
	return &RDB{client: client, prefix: opts.Prefix, hashTags: opts.ClusterHashTags, cache: cache, replicas: replicas}, nil
}

// Client returns the queue client.
func (r *RDB) Client() redis.UniversalClient { return r.client }

// Cache returns the cache-side operations (restart, pause, maxExceptions).
func (r *RDB) Cache() *Cache { return r.cache }

// Keys returns the Redis keys of a queue.
func (r *RDB) Keys(queue string) QueueKeys {
	if k, ok := r.keys.Load(queue); ok {
		return *k.(*QueueKeys)
	}
	k := NewQueueKeys(r.prefix, queue, r.hashTags)
	r.keys.Store(queue, &k)
	return k
}

// queueArgs are a queue's keys as command arguments, boxed once: a string put in an
// `any` is an allocation each time.
type queueArgs struct {
	reserved any
	pop      []any // the pop script's KEYS without the ticket: ready, reserved, notify, invalid
}

// argsOf returns the boxed arguments of queue.
func (r *RDB) argsOf(queue string) *queueArgs {
	if a, ok := r.args.Load(queue); ok {
		return a.(*queueArgs)
	}
	k := r.keysOf(queue)
	a := &queueArgs{reserved: k.Reserved, pop: []any{k.Queue, k.Reserved, k.Notify, k.Invalid}}
	actual, _ := r.args.LoadOrStore(queue, a)
	return actual.(*queueArgs)
}

// keysOf is Keys without the copy, for the hot paths.
func (r *RDB) keysOf(queue string) *QueueKeys {
	if k, ok := r.keys.Load(queue); ok {
		return k.(*QueueKeys)
	}
	k := NewQueueKeys(r.prefix, queue, r.hashTags)
	actual, _ := r.keys.LoadOrStore(queue, &k)
	return actual.(*QueueKeys)
}

// LoadScripts sends every script to the server with SCRIPT LOAD, so the first calls do
// not pay for a NOSCRIPT round trip. Optional: each call falls back to EVAL by itself.
func (r *RDB) LoadScripts(ctx context.Context) error {
	for _, s := range allScripts {
		if err := s.Load(ctx, r.client).Err(); err != nil {
			return fmt.Errorf("rdb: load scripts: %w", err)
		}
	}
	return nil
}

// ErrInvalidJob is matched (errors.Is) by the error Pop returns for a payload the pop
// script could not reserve.
var ErrInvalidJob = errors.New("payload cannot be reserved")

// InvalidJobError reports a payload that Laravel's pop script would have failed on after
// popping it (so a PHP worker loses it): not JSON, not a JSON object, or `attempts` missing
// or not numeric. laraq moved it, unchanged, from the ready list to the queue's invalid list
// (QueueKeys.Invalid) and consumed its notify token.
type InvalidJobError struct {
	Queue  string // bare queue name
	Key    string // the invalid list now holding the payload
	Job    []byte // the payload, byte for byte
	Reason string // the Lua error text
}

func (e *InvalidJobError) Error() string {
	return fmt.Sprintf("rdb: queue %q: payload cannot be reserved (%s); moved to %s", e.Queue, e.Reason, e.Key)
}

// Is makes errors.Is(err, ErrInvalidJob) true.
func (e *InvalidJobError) Is(target error) bool { return target == ErrInvalidJob }

// replyBytes converts one element of a script's array reply: nil stays nil.
func replyBytes(v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []byte(v), nil
	default:
		return nil, fmt.Errorf("unexpected reply element %T", v)
	}
}
