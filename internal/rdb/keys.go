package rdb

import (
	"crypto/md5"
	"encoding/hex"
	"strings"
	"time"

	"github.com/laraq/laraq/internal/php"
)

// Every Redis key name laraq uses is built in this file and nowhere else.
//
// Queue keys (Laravel's RedisQueue::getQueue plus the suffixes its scripts use):
//
//	PREFIX + "queues:" + NAME               list  ready payloads (RPUSH by producers, LPOP by the pop script)
//	PREFIX + "queues:" + NAME + ":delayed"  zset  score = available-at Unix seconds
//	PREFIX + "queues:" + NAME + ":reserved" zset  score = reservation expiry; member = cjson-re-encoded payload
//	PREFIX + "queues:" + NAME + ":notify"   list  one "1" per job made ready; BLPOP target
//	PREFIX + "queues:" + NAME + ":invalid"  list  laraq only: payloads the pop script could not reserve
//	PREFIX + "queues:" + NAME + ":laraq-pop:" + OWNER
//	                                        list   laraq only: one worker's last pop, its sequence number and jobs (see pop.lua), with a TTL
//	PREFIX + "queues:" + NAME + ":laraq-push:" + ID
//	                                        string laraq only: a guarded push of the job with this id was done (see push_once.lua), with a TTL
//
// PREFIX is the Redis connection prefix (config/database.php redis.options.prefix). PHP's
// clients (phpredis OPT_PREFIX, predis' prefix processor) add it to every key, including
// the KEYS of EVAL, so laraq adds it to every name it passes, script KEYS included. Lua
// bodies never build a key name.

const (
	queuesSegment  = "queues:"
	suffixDelayed  = ":delayed"
	suffixReserved = ":reserved"
	suffixNotify   = ":notify"
	suffixInvalid  = ":invalid"
	laraqSegment   = ":laraq-" // laraq's own keys extend a queue key with it
	ticketSegment  = laraqSegment + "pop:"
	guardSegment   = laraqSegment + "push:"
)

// QueueKeys holds the Redis keys of one queue, connection prefix included.
type QueueKeys struct {
	Name     string // the queue name as given (what RedisJob::getQueue reports)
	Queue    string // list of ready payloads
	Delayed  string // zset of delayed payloads, score = available-at
	Reserved string // zset of reserved (re-encoded) payloads, score = reservation expiry
	Notify   string // list of "1" tokens, one per job made ready
	Invalid  string // laraq's list of payloads the pop script could not reserve
}

// NewQueueKeys returns the keys of queue name under the connection prefix.
//
// With hashTags set, a name that has no Redis Cluster hash tag is wrapped in braces
// (`queues:{NAME}`), as Laravel 13.5+ does on cluster connections, so all keys of the queue
// hash to one slot (the scripts touch several of them at once). A name that already has a
// tag — Laravel ≤13.4 users name cluster queues `{default}` — is used as is, so both
// spellings reach the same keys.
func NewQueueKeys(prefix, name string, hashTags bool) QueueKeys {
	tagged := name
	if hashTags && !HasHashTag(name) {
		tagged = "{" + name + "}"
	}
	q := prefix + queuesSegment + tagged
	return QueueKeys{
		Name:     name,
		Queue:    q,
		Delayed:  q + suffixDelayed,
		Reserved: q + suffixReserved,
		Notify:   q + suffixNotify,
		Invalid:  q + suffixInvalid,
	}
}

// Ticket is the key of owner's pop tickets on this queue (see pop.lua). It extends the
// queue key, so it carries the queue's hash tag and lives in the queue's cluster slot.
func (k QueueKeys) Ticket(owner string) string { return k.Queue + ticketSegment + owner }

// PushGuard is the key a guarded push of the job with this id sets (see push_once.lua).
func (k QueueKeys) PushGuard(id string) string { return k.Queue + guardSegment + id }

// HasHashTag reports whether s contains a Redis Cluster hash tag: a '{' followed later by
// a '}' with at least one byte between them (the first '{' and the first '}' after it
// decide, as in Redis' own key-slot rule and Laravel's RedisConnection::hasHashTag).
func HasHashTag(s string) bool {
	open := strings.IndexByte(s, '{')
	if open < 0 {
		return false
	}
	end := strings.IndexByte(s[open+1:], '}')
	return end > 0
}

// HashTag returns the part of key Redis Cluster hashes: the content of the first
// non-empty `{…}`, or the whole key when there is none.
func HashTag(key string) string {
	open := strings.IndexByte(key, '{')
	if open < 0 {
		return key
	}
	end := strings.IndexByte(key[open+1:], '}')
	if end <= 0 {
		return key
	}
	return key[open+1 : open+1+end]
}

// queuesPattern is the SCAN pattern matching every queue key under prefix.
func queuesPattern(prefix string) string {
	return escapeGlob(prefix) + queuesSegment + "*"
}

// QueueNameFromKey returns the queue name a key under prefix belongs to: the key with the
// prefix, "queues:" and one known suffix removed. ok is false for keys that are not queue
// keys. The name comes back exactly as it appears in the key (a cluster name stays
// `{default}`), which NewQueueKeys maps back to the same keys with or without hashTags.
func QueueNameFromKey(prefix, key string) (name string, ok bool) {
	rest, ok := strings.CutPrefix(key, prefix+queuesSegment)
	if !ok || rest == "" {
		return "", false
	}
	if base, _, cut := strings.Cut(rest, laraqSegment); cut {
		return base, base != ""
	}
	for _, suffix := range []string{suffixDelayed, suffixReserved, suffixNotify, suffixInvalid} {
		if base, cut := strings.CutSuffix(rest, suffix); cut {
			if base == "" {
				return "", false
			}
			return base, true
		}
	}
	return rest, true
}

// escapeGlob escapes the characters SCAN MATCH treats specially, so a prefix is matched
// literally.
func escapeGlob(s string) string {
	if !strings.ContainsAny(s, `*?[]\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', ']', '\\':
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// Cache-side keys. Laravel's workers read the restart and pause signals and keep the
// maxExceptions counter in the application cache; with the Redis cache store the key a
// command names goes through two prefixes: the cache Redis connection's prefix (added by
// the PHP client) and the cache store prefix (config/cache.php `prefix`). RedisStore of
// Laravel ≤10.x adds ":" after a non-empty store prefix; 11.0+ does not.

const (
	cacheRestart       = "illuminate:queue:restart"
	cachePausedPrefix  = "illuminate:queue:paused:"
	cachePausedAll     = "illuminate:queues:paused"
	cacheJobExceptions = "job-exceptions:"
)

// CacheKeys builds the Redis names of Laravel cache keys.
type CacheKeys struct {
	// RedisPrefix is the prefix of the cache's Redis connection (usually the same
	// redis.options.prefix as the queue connection, e.g. "laravel_database_"). Default "".
	RedisPrefix string
	// Prefix is the cache store prefix (config/cache.php `prefix`; skeleton 8.x
	// "laravel_cache", 9.x–11.x "laravel_cache_", 12.x "laravel-cache-"). Default "".
	Prefix string
	// Separator adds ":" after a non-empty Prefix, as RedisStore::setPrefix does up to
	// Laravel 10.x. Set it for Laravel ≤10 apps. Default false (11.x+).
	Separator bool
}

// Key returns the Redis key of cache key name.
func (k CacheKeys) Key(name string) string {
	if k.Separator && k.Prefix != "" {
		return k.RedisPrefix + k.Prefix + ":" + name
	}
	return k.RedisPrefix + k.Prefix + name
}

// Restart is the key `php artisan queue:restart` (and horizon:terminate) writes.
func (k CacheKeys) Restart() string { return k.Key(cacheRestart) }

// Paused is the key `php artisan queue:pause connection:queue` writes (Laravel 12.40+).
// connection is the queue connection name (e.g. "redis"), queue the bare queue name.
func (k CacheKeys) Paused(connection, queue string) string {
	return k.Key(cachePausedPrefix + connection + ":" + queue)
}

// PausedAll is the global pause switch of Laravel 13.25+ (pauseAll/resumeAll).
func (k CacheKeys) PausedAll() string { return k.Key(cachePausedAll) }

// JobExceptions is the maxExceptions counter of the job with this uuid.
func (k CacheKeys) JobExceptions(uuid string) string { return k.Key(cacheJobExceptions + uuid) }

// Seconds is d in the whole seconds Redis scores and lock lifetimes take, rounded up: a
// job released for 1.2 s is not available before 2 s, as PHP's availableAt would have it
// for a whole second.
func Seconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}

// Names of the cache keys Laravel's job middleware (Illuminate\Queue\Middleware) keep in
// the application's cache store, before the store's prefix (CacheKeys.Key adds the Redis
// and cache prefixes; cache.Store implementations add their own). The parts that depend
// on the release (which job name, which hash) are chosen by the caller.
//
//	WithoutOverlapping          PREFIX + JOB + ":" + KEY      (PREFIX "laravel-queue-overlap:")
//	WithoutOverlapping shared() PREFIX + KEY                  (9.32+)
//	RateLimited                 md5(LIMITER . LIMIT KEY)      hit counter
//	                            md5(LIMITER . LIMIT KEY):timer  window end, Unix seconds
//	ThrottlesExceptions         PREFIX + ID (+ ":timer")      (PREFIX "laravel_throttles_exceptions:")
//
// The RateLimiter (RateLimited, ThrottlesExceptions) passes every key through
// CleanRateLimiterKey first. The Redis variants' DurationLimiter hash is a plain Redis key
// on a Redis connection, connection prefix + name, with no cache prefix
// (DurationLimiter.Key).

const (
	// OverlapPrefix is WithoutOverlapping's default lock key prefix ($prefix).
	OverlapPrefix = "laravel-queue-overlap:"
	// ThrottlesExceptionsPrefix is ThrottlesExceptions' default key prefix ($prefix).
	ThrottlesExceptionsPrefix = "laravel_throttles_exceptions:"
	// limiterTimerSuffix names the RateLimiter's window key beside its counter.
	limiterTimerSuffix = ":timer"
)

// OverlapLockName is the name WithoutOverlapping::getLockKey gives its lock: prefix, then
// jobName and ":" unless the key is shared across job classes, then key.
func OverlapLockName(prefix, jobName, key string, shared bool) string {
	if shared {
		return prefix + key
	}
	return prefix + jobName + ":" + key
}

// RateLimitedKey is the key RateLimited counts one limit of a named limiter under:
// md5(limiterName . limitKey) in lowercase hex (RateLimited::handle, 8.x–13.x).
func RateLimitedKey(limiterName, limitKey string) string {
	sum := md5.Sum([]byte(limiterName + limitKey))
	return hex.EncodeToString(sum[:])
}

// LimiterTimer is the key of a RateLimiter counter's window: the counter's cleaned key
// plus ":timer" (RateLimiter::hit, availableIn, tooManyAttempts, clear).
func LimiterTimer(key string) string { return CleanRateLimiterKey(key) + limiterTimerSuffix }

// CleanRateLimiterKey is RateLimiter::cleanRateLimiterKey, applied to every key before
// the store sees it: htmlentities(), then each entity whose name is letters only
// (&amp; &eacute; &euro; ...) replaced by its first letter, so "a&b" becomes "aab" and
// "café" "cafe"; &#039; and &frac12; stay as they are. An md5 or xxh128 key is unchanged.
func CleanRateLimiterKey(key string) string {
	if cleanAlready(key) {
		return key
	}
	enc := php.HTMLEntities(key)
	var b strings.Builder
	for i := 0; i < len(enc); {
		if enc[i] == '&' {
			if j := strings.IndexByte(enc[i:], ';'); j > 2 && lettersOnly(enc[i+1:i+j]) {
				b.WriteByte(enc[i+1])
				i += j + 1
				continue
			}
		}
		b.WriteByte(enc[i])
		i++
	}
	return b.String()
}

// cleanAlready says no character of key is one htmlentities() changes: ASCII other than
// the five it escapes.
func cleanAlready(key string) bool {
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case c >= 0x80, c == '&', c == '<', c == '>', c == '"', c == '\'':
			return false
		}
	}
	return true
}

func lettersOnly(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i] | 0x20; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}
