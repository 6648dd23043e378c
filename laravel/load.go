package laravel

import (
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// loadApp reads APP_NAME, app.key, app.cipher and app.timezone.
func (l *loader) loadApp() error {
	c, r := l.c, l.r
	// APP_NAME as the prefix expressions read it: env('APP_NAME', 'laravel').
	c.AppName = r.str("AppName", "APP_NAME", DefaultAppName)

	if key := l.value(setting{name: "AppKey", file: "app", path: []string{"key"}, vars: []string{"APP_KEY"}}); key.ok && key.str() != "" {
		raw := key.str()
		c.AppKey = []byte(raw)
		if b64, ok := strings.CutPrefix(raw, "base64:"); ok {
			dec, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				c.warn("APP_KEY (%s) starts with base64: but is not valid base64; encrypted jobs cannot be read", key.origin)
				dec = nil
			}
			c.AppKey = dec
		}
	}
	c.Cipher = l.str(setting{name: "Cipher", file: "app", path: []string{"cipher"}, vars: []string{"APP_CIPHER"}}, "AES-256-CBC")

	tz := l.str(setting{name: "Timezone", file: "app", path: []string{"timezone"}, vars: []string{"APP_TIMEZONE"}}, DefaultTimezone)
	if tz == "" {
		tz = DefaultTimezone
	}
	loc, err := time.LoadLocation(tz)
	if err != nil {
		return fmt.Errorf("config: timezone %q (%s): %v", tz, r.origins["Timezone"], err)
	}
	c.Timezone, c.Location = tz, loc
	return nil
}

// loadQueue reads the queue connection (config/queue.php connections.NAME, NAME being
// LARAQ_CONNECTION or "redis") and the default connection.
func (l *loader) loadQueue() error {
	c, r := l.c, l.r
	c.DefaultConnection = l.str(setting{name: "DefaultConnection", file: "queue", path: []string{"default"}, vars: []string{"QUEUE_CONNECTION"}}, "")
	c.Connection = DefaultConnection
	r.origins["Connection"] = Origin{}
	if v, origin, ok := r.override("CONNECTION"); ok && v != "" {
		c.Connection = v
		r.origins["Connection"] = origin
	}
	if c.DefaultConnection != c.Connection && chosen(r.origins["DefaultConnection"]) {
		c.warn("QUEUE_CONNECTION is %q (%s): jobs PHP dispatches without ->onConnection(%q) do not go to Redis",
			c.DefaultConnection, r.origins["DefaultConnection"], c.Connection)
	}
	connName := c.Connection
	conn := func(name, key string, vars []string, absent string) setting {
		return setting{name: name, file: "queue", path: []string{"connections", connName, key}, vars: vars, absent: absent}
	}
	switch lk := l.layers.get("queue", "connections", c.Connection); {
	case lk.status == absent || lk.status == builtin && lk.node == nil && l.layers.app != nil:
		c.warn("%s has no queue connection %q: PHP cannot use it (name the Redis connection with LARAQ_CONNECTION)", lk.file, c.Connection)
	case lk.status == builtin && lk.node == nil:
		// No config files, and the skeleton names its Redis connection "redis": take that
		// one's settings for the connection LARAQ_CONNECTION names.
		connName = DefaultConnection
	case lk.status == found:
		driver := l.str(conn("Driver", "driver", nil, ""), "")
		if driver != "redis" {
			c.warn("queue connection %q (%s) has driver %q, not redis: laraq works Redis queues only", c.Connection, lk.file, driver)
		}
	}
	// RedisConnector: $config['connection'] ?? 'default', $config['retry_after'] ?? 60,
	// $config['block_for'] ?? null; RedisQueue's default queue 'default'.
	c.RedisConnection = l.str(conn("RedisConnection", "connection", []string{"REDIS_QUEUE_CONNECTION"}, ""), "default")
	c.Queue = l.str(conn("Queue", "queue", []string{"REDIS_QUEUE"}, ""), DefaultQueue)
	if c.Queue == "" {
		c.Queue = DefaultQueue
	}
	n, err := l.int(conn("RetryAfter", "retry_after", []string{"REDIS_QUEUE_RETRY_AFTER"}, "60"), 60)
	if err != nil {
		return err
	}
	c.RetryAfter = n
	if s := conn("BlockFor", "block_for", nil, ""); true {
		v := l.value(s)
		if v.ok && v.v.kind != phpNull {
			n, err := l.intOf(s, v, 0)
			if err != nil {
				return err
			}
			c.BlockFor = &n
		}
	}
	c.AfterCommit = l.value(conn("AfterCommit", "after_commit", nil, "")).v.toBool()
	return nil
}

// loadCache reads the default cache store, its driver, Redis connection and prefix.
func (l *loader) loadCache() {
	c, r := l.c, l.r
	storeVar, otherVar := "CACHE_DRIVER", "CACHE_STORE"
	if l.layers.skelEra >= era11 {
		storeVar, otherVar = otherVar, storeVar
	}
	c.CacheStore = l.str(setting{name: "CacheStore", file: "cache", path: []string{"default"}, vars: []string{storeVar, otherVar}}, "")
	store := func(name, key string, vars []string) setting {
		return setting{name: name, file: "cache", path: []string{"stores", c.CacheStore, key}, vars: vars}
	}
	// The skeleton's stores are named after their drivers.
	driver := c.CacheStore
	if lk := l.layers.get("cache", "stores", c.CacheStore, "driver"); lk.status == found {
		driver = l.str(store("CacheDriver", "driver", nil), c.CacheStore)
	}
	c.CacheDriver = driver
	if driver == "database" {
		c.CacheTable = l.str(store("CacheTable", "table", nil), "cache")
		c.CacheLockTable = l.str(store("CacheLockTable", "lock_table", nil), "cache_locks")
		c.CacheDBConnection = l.str(store("CacheDBConnection", "connection", nil), "")
		// CacheManager: $config['lock_lottery'] ?? [2, 100].
		if lk := l.layers.get("cache", "stores", c.CacheStore, "lock_lottery"); lk.status == found {
			for i, key := range []string{"0", "1"} {
				s := setting{name: "CacheLockLottery", file: "cache", path: []string{"stores", c.CacheStore, "lock_lottery", key}}
				if n, err := l.int(s, 0); err == nil {
					c.CacheLockLottery[i] = n
				} else {
					c.warn("%v; laraq draws the lock lottery with the odds [2, 100]", err)
					c.CacheLockLottery = [2]int{}
					break
				}
			}
			if c.CacheLockLottery[1] < 1 {
				c.CacheLockLottery = [2]int{} // as PHP's random_int(1, 0) would fail; the default instead
			}
		}
		if n, err := l.int(store("CacheLockTimeout", "lock_timeout", nil), 0); err != nil {
			c.warn("%v; laraq gives a lock taken for 0 seconds 86400 seconds", err)
		} else {
			c.CacheLockTimeout = n
		}
		// setLockConnection: $config['lock_connection'] ?? $config['connection'].
		if lc := l.str(store("CacheLockConnection", "lock_connection", nil), ""); lc != "" && lc != c.CacheDBConnection &&
			chosen(r.origins["CacheStore"]) {
			c.warn("the database cache store keeps its locks on connection %q (%s), which laraq does not open: unique job locks are taken in the store's own database, where PHP does not look",
				lc, r.origins["CacheLockConnection"])
		}
	}
	// Only about a store the application chose: with nothing known of the application the
	// skeleton default says nothing about it.
	if driver != "redis" && driver != "database" && chosen(r.origins["CacheStore"]) {
		c.warn("the application's cache store is %q (%s), not redis: queue:restart, queue:pause and maxExceptions counters are kept there, so laraq and PHP workers will not see each other's signals; set %s=redis in the application",
			c.CacheStore, r.origins["CacheStore"], storeVar)
	}
	// CacheServiceProvider: the RateLimiter's store is cache.limiter, else the default.
	c.CacheLimiter = l.str(setting{name: "CacheLimiter", file: "cache", path: []string{"limiter"}}, "")
	if c.CacheLimiter != "" && c.CacheLimiter != c.CacheStore {
		c.CacheLimiterDriver = c.CacheLimiter
		if lk := l.layers.get("cache", "stores", c.CacheLimiter, "driver"); lk.status == found {
			c.CacheLimiterDriver = l.str(setting{name: "CacheLimiterDriver", file: "cache", path: []string{"stores", c.CacheLimiter, "driver"}}, c.CacheLimiter)
		}
		if c.CacheLimiterDriver != "redis" || driver == "redis" {
			c.warn("cache.limiter names the %s store (driver %s): laraq's job middleware count their rate limits in the default %s store instead, where PHP's RateLimiter does not",
				c.CacheLimiter, c.CacheLimiterDriver, c.CacheStore)
		}
	}
	redisStore := c.CacheStore
	if driver != "redis" {
		redisStore = "redis" // laraq keeps its own signals on the skeleton's Redis store
	}
	// CacheManager: $config['connection'] ?? 'default'; $config['prefix'] ?? cache.prefix.
	c.CacheConnection = l.str(setting{name: "CacheConnection", file: "cache", path: []string{"stores", redisStore, "connection"},
		vars: []string{"REDIS_CACHE_CONNECTION"}}, "default")
	if lk := l.layers.get("cache", "stores", redisStore, "prefix"); lk.status == found {
		if v := l.value(setting{name: "CachePrefix", file: "cache", path: []string{"stores", redisStore, "prefix"}, vars: []string{"CACHE_PREFIX"}}); v.ok && v.v.kind != phpNull {
			c.CachePrefix = v.str()
			return
		}
	}
	c.CachePrefix = l.str(setting{name: "CachePrefix", file: "cache", path: []string{"prefix"}, vars: []string{"CACHE_PREFIX"}}, "")
}
