package rdb

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/php"
)

// JobExceptionsTTL is the lifetime Laravel's Worker gives a new maxExceptions counter
// (`Carbon::now()->addDay()`, sent as SETEX … 86400).
const JobExceptionsTTL = 86400

// pausedValue is what RedisStore::forever stores for `true`: PHP's serialize(true). Numeric
// values are stored raw; everything else serialized.
const pausedValue = "b:1;"

// Cache reads and writes the Laravel cache keys queue workers share, the way Laravel's
// RedisStore does (the commands in each method's comment are the exact ones PHP sends).
// Laravel's default cache store is file (8.x) or database (11.x+); PHP workers only see
// these signals when the app uses the Redis cache store on the same server.
//
// Besides its key scheme a Cache may watch alternative schemes: the restart and pause
// signals are then read under every scheme, so that a signal written by `php artisan` of
// a Laravel version other than the assumed one is still seen. Writes (SignalRestart,
// Pause, Resume, the maxExceptions counter) always use the primary scheme.
type Cache struct {
	client redis.UniversalClient
	keys   CacheKeys
	// watched is keys followed by the distinct alternative schemes.
	watched []CacheKeys
}

// NewCache returns a Cache on client (the cache store's Redis connection, owned by the
// caller) with the given key prefixes. alsoWatch are alternative schemes whose restart
// and pause signals are read too (never written); a scheme whose restart key equals that
// of keys or of an earlier scheme is dropped.
func NewCache(client redis.UniversalClient, keys CacheKeys, alsoWatch ...CacheKeys) (*Cache, error) {
	if client == nil {
		return nil, errors.New("rdb: nil cache redis client")
	}
	watched := []CacheKeys{keys}
	seen := map[string]bool{keys.Restart(): true}
	for _, k := range alsoWatch {
		if r := k.Restart(); !seen[r] {
			seen[r] = true
			watched = append(watched, k)
		}
	}
	return &Cache{client: client, keys: keys, watched: watched}, nil
}

// Keys returns the key builder.
func (c *Cache) Keys() CacheKeys { return c.keys }

// Watched returns the schemes whose signals are read: Keys first, then the distinct
// alternatives.
func (c *Cache) Watched() []CacheKeys { return append([]CacheKeys(nil), c.watched...) }

// RestartTimestamp reads the queue:restart signal: GET key, or with alternative schemes
// one MGET of every scheme's restart key (per-key GETs on a Cluster client). ok is false
// when no key is set; otherwise ts is the greatest timestamp present. Workers remember
// the value at start and exit when it changes: `queue:restart` writes the current time,
// which raises the maximum whichever scheme's key it writes. A value that is no integer
// is an error under the primary scheme and ignored under an alternative one, so that a
// stray key of a guessed scheme cannot blind the worker to its own signal.
func (c *Cache) RestartTimestamp(ctx context.Context) (ts int64, ok bool, err error) {
	if len(c.watched) == 1 {
		key := c.keys.Restart()
		v, err := c.client.Get(ctx, key).Result()
		if isNil(err) {
			return 0, false, nil
		}
		if err != nil {
			return 0, false, fmt.Errorf("rdb: read restart signal %s: %w", key, ConfigErrorOf(c.client, "", err))
		}
		ts, err = parseCacheInt(v)
		if err != nil {
			return 0, false, fmt.Errorf("rdb: restart signal %s: %w", key, err)
		}
		return ts, true, nil
	}
	keys := make([]string, len(c.watched))
	for i, k := range c.watched {
		keys[i] = k.Restart()
	}
	vals, err := c.mget(ctx, keys)
	if err != nil {
		return 0, false, fmt.Errorf("rdb: read restart signals %s: %w", strings.Join(keys, ", "), ConfigErrorOf(c.client, "", err))
	}
	for i, v := range vals {
		s, set := v.(string)
		if !set {
			continue
		}
		n, err := parseCacheInt(s)
		if err != nil {
			if i == 0 {
				return 0, false, fmt.Errorf("rdb: restart signal %s: %w", keys[i], err)
			}
			continue
		}
		if !ok || n > ts {
			ts, ok = n, true
		}
	}
	return ts, ok, nil
}

// SignalRestart writes the queue:restart signal as `php artisan queue:restart` does:
// SET key <now> with no TTL (Repository::forever; an integer is stored raw).
func (c *Cache) SignalRestart(ctx context.Context, now int64) error {
	key := c.keys.Restart()
	if err := c.client.Set(ctx, key, now, 0).Err(); err != nil {
		return fmt.Errorf("rdb: write restart signal %s: %w", key, err)
	}
	return nil
}

// Paused reads the pause flags of queues on a queue connection (e.g. "redis") and the
// global switch with one MGET of the keys of every watched scheme (per-key GETs on a
// Cluster client): all is the 13.25+ pauseAll flag, paused[i] the 12.40+ `queue:pause
// connection:queues[i]` flag, each set when it is set under any scheme. A flag is set
// when its value is truthy in PHP terms after RedisStore's unserialize.
func (c *Cache) Paused(ctx context.Context, connection string, queues []string) (all bool, paused []bool, err error) {
	per := len(queues) + 1
	keys := make([]string, 0, per*len(c.watched))
	for _, k := range c.watched {
		keys = append(keys, k.PausedAll())
		for _, q := range queues {
			keys = append(keys, k.Paused(connection, q))
		}
	}
	vals, err := c.mget(ctx, keys)
	if err != nil {
		return false, nil, fmt.Errorf("rdb: read pause flags: %w", ConfigErrorOf(c.client, "", err))
	}
	paused = make([]bool, len(queues))
	for s := range c.watched {
		base := s * per
		all = all || phpTruthy(vals[base])
		for i := range queues {
			paused[i] = paused[i] || phpTruthy(vals[base+1+i])
		}
	}
	return all, paused, nil
}

func (c *Cache) mget(ctx context.Context, keys []string) ([]any, error) {
	if _, cluster := c.client.(*redis.ClusterClient); !cluster {
		return c.client.MGet(ctx, keys...).Result()
	}
	// The keys usually live in different slots, which MGET refuses on a cluster.
	pipe := c.client.Pipeline()
	cmds := make([]*redis.StringCmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.Get(ctx, k)
	}
	if _, err := pipe.Exec(ctx); err != nil && !isNil(err) {
		return nil, err
	}
	out := make([]any, len(keys))
	for i, cmd := range cmds {
		if v, err := cmd.Result(); err == nil {
			out[i] = v
		}
	}
	return out, nil
}

// Pause sets the flag `php artisan queue:pause connection:queue` sets (12.40+): SET key
// "b:1;" with no TTL.
func (c *Cache) Pause(ctx context.Context, connection, queue string) error {
	return c.setForever(ctx, c.keys.Paused(connection, queue), pausedValue)
}

// Resume clears that flag as `php artisan queue:resume` does: DEL key.
func (c *Cache) Resume(ctx context.Context, connection, queue string) error {
	return c.forget(ctx, c.keys.Paused(connection, queue))
}

// PauseAll sets the global pause switch of Laravel 13.25+ (SET key "b:1;").
func (c *Cache) PauseAll(ctx context.Context) error {
	return c.setForever(ctx, c.keys.PausedAll(), pausedValue)
}

// ResumeAll clears the global pause switch (DEL key).
func (c *Cache) ResumeAll(ctx context.Context) error {
	return c.forget(ctx, c.keys.PausedAll())
}

// IncrementJobExceptions counts one more exception of the job with this uuid and returns
// the new count, with the commands of Laravel's Worker (markJobAsFailedIfWillExceed-
// MaxExceptions): GET key; if the value is missing or falsy, SETEX key 86400 0; then
// INCRBY key 1. The counter is shared with PHP workers and survives releases.
func (c *Cache) IncrementJobExceptions(ctx context.Context, uuid string) (int64, error) {
	key := c.keys.JobExceptions(uuid)
	v, err := c.client.Get(ctx, key).Result()
	if err != nil && !isNil(err) {
		return 0, fmt.Errorf("rdb: read exception counter %s: %w", key, err)
	}
	if isNil(err) || !phpTruthy(v) {
		if err := c.client.SetEx(ctx, key, 0, JobExceptionsTTL*time.Second).Err(); err != nil {
			return 0, fmt.Errorf("rdb: create exception counter %s: %w", key, err)
		}
	}
	n, err := c.client.IncrBy(ctx, key, 1).Result()
	if err != nil {
		return 0, fmt.Errorf("rdb: increment exception counter %s: %w", key, err)
	}
	return n, nil
}

// ForgetJobExceptions deletes the counter (DEL key), as the Worker does when it fails the
// job for too many exceptions.
func (c *Cache) ForgetJobExceptions(ctx context.Context, uuid string) error {
	return c.forget(ctx, c.keys.JobExceptions(uuid))
}

// CountJobException is the Worker's whole maxExceptions step for a job that threw:
// IncrementJobExceptions, and when maxExceptions <= the new count, ForgetJobExceptions and
// exceeded = true (the caller then fails the job).
func (c *Cache) CountJobException(ctx context.Context, uuid string, maxExceptions int64) (count int64, exceeded bool, err error) {
	count, err = c.IncrementJobExceptions(ctx, uuid)
	if err != nil {
		return 0, false, err
	}
	if maxExceptions <= count {
		if err := c.ForgetJobExceptions(ctx, uuid); err != nil {
			return count, true, err
		}
		return count, true, nil
	}
	return count, false, nil
}

func (c *Cache) setForever(ctx context.Context, key, value string) error {
	if err := c.client.Set(ctx, key, value, 0).Err(); err != nil {
		return fmt.Errorf("rdb: set %s: %w", key, err)
	}
	return nil
}

func (c *Cache) forget(ctx context.Context, key string) error {
	if err := c.client.Del(ctx, key).Err(); err != nil {
		return fmt.Errorf("rdb: delete %s: %w", key, err)
	}
	return nil
}

// parseCacheInt reads an integer cache value: stored raw by RedisStore ("1700000000"), or
// serialized ("i:1700000000;") by other writers.
func parseCacheInt(v string) (int64, error) {
	s := v
	if rest, ok := strings.CutPrefix(s, "i:"); ok {
		if body, ok := strings.CutSuffix(rest, ";"); ok {
			s = body
		}
	}
	n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	if err != nil {
		if f, ferr := strconv.ParseFloat(strings.TrimSpace(s), 64); ferr == nil {
			return int64(f), nil
		}
		return 0, fmt.Errorf("value %q is not an integer", truncate(v, 64))
	}
	return n, nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// phpTruthy says whether a cache value (nil for a missing key, else a string) is truthy in
// PHP after RedisStore::unserialize: numeric strings are returned as strings (only "0" is
// falsy); anything else goes through unserialize(), whose falsy results are false, 0, 0.0,
// "", "0", null, an empty array, and a failed unserialize.
func phpTruthy(v any) bool {
	s, ok := v.(string)
	if !ok {
		return false
	}
	if php.IsNumeric(s) {
		return s != "0"
	}
	switch s {
	case "b:0;", "i:0;", "i:-0;", "N;", `s:0:"";`, `s:1:"0";`, "a:0:{}":
		return false
	}
	if body, ok := strings.CutPrefix(s, "d:"); ok {
		if body, ok := strings.CutSuffix(body, ";"); ok {
			f, err := strconv.ParseFloat(body, 64)
			return err != nil || f != 0
		}
	}
	// A value that is no serialized PHP at all makes unserialize() return false.
	return len(s) >= 2 && strings.IndexByte("bidsaOCNE", s[0]) >= 0 && (s[1] == ':' || s == "N;")
}
