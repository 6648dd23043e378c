package cli

import (
	"flag"
	"fmt"
	"strings"

	"github.com/laraq/laraq/laravel"
)

// Defaults of the connection flags, used when neither the flags, the LARAQ_* environment
// nor the Laravel application say otherwise.
const (
	// DefaultRedisURL is the Redis of Laravel's skeleton .env (REDIS_HOST=127.0.0.1,
	// REDIS_PORT=6379, REDIS_DB=0).
	DefaultRedisURL = "redis://127.0.0.1:6379/0"
	// DefaultQueueName is the queue of commands given no --queue and no REDIS_QUEUE.
	DefaultQueueName = "default"
)

// connFlags are the flags every subcommand that touches Redis shares: --redis, --prefix
// and --queue. Their values only count when given; otherwise the application's settings
// (see appFlags) apply.
type connFlags struct {
	redisURL       string
	sentinel       string
	sentinelMaster string
	prefix         string
	queue          string
	queueSet       bool // --queue was given on the command line
	multi          bool // --queue takes a comma-separated list
}

// stringFlag is a string flag that remembers whether it was set.
type stringFlag struct {
	val *string
	set *bool
}

func (f stringFlag) String() string {
	if f.val == nil {
		return ""
	}
	return *f.val
}

func (f stringFlag) Set(s string) error { *f.val, *f.set = s, true; return nil }

// addConnFlags registers the connection flags on fs. multi says whether the command
// works several queues (--queue=high,default, tried in that order like queue:work).
func addConnFlags(fs *flag.FlagSet, multi bool) *connFlags {
	c := &connFlags{multi: multi}
	fs.StringVar(&c.redisURL, "redis", "",
		"Redis `URL`: redis://[user:password@]host:port/db, rediss:// for TLS, unix:///path.sock?db=N\n"+
			"(default: LARAQ_REDIS_URL, else the application's REDIS_URL or REDIS_HOST, REDIS_PORT,\n"+
			"REDIS_PASSWORD and REDIS_DB, else "+DefaultRedisURL+"). As with Laravel's REDIS_URL, a /db\n"+
			"in the URL applies to the cache connection too (restart, pause, maxExceptions): laraq warns\n"+
			"when that moves it off the application's cache database (REDIS_CACHE_DB, default 1); keep\n"+
			"it with LARAQ_REDIS_CACHE_DB")
	fs.StringVar(&c.sentinel, "redis-sentinel", "",
		"reach Redis through Sentinel: the Sentinels' `ADDRS`, host:port,host:port (default:\n"+
			"LARAQ_REDIS_SENTINEL, else the application's predis connection with 'replication' =>\n"+
			"'sentinel'). The master's password is REDIS_PASSWORD; the Sentinels' own, if any,\n"+
			"LARAQ_REDIS_SENTINEL_USERNAME and LARAQ_REDIS_SENTINEL_PASSWORD (kept off the command line).\n"+
			"--redis wins over LARAQ_REDIS_SENTINEL; giving both flags is an error")
	fs.StringVar(&c.sentinelMaster, "redis-sentinel-master", "", "the master set's `NAME` the Sentinels watch (default: LARAQ_REDIS_SENTINEL_MASTER, else the\n"+
		"application's 'service' option, else "+laravel.DefaultSentinelMaster+")")
	fs.StringVar(&c.prefix, "prefix", "",
		"Redis connection `prefix` (database.redis.options.prefix); --prefix '' for none\n"+
			"(default empty, unless an application is given (--env-file, --laravel-root, LARAQ_ENV_FILE\n"+
			"or APP_NAME): then what its config/database.php gives (REDIS_PREFIX, else derived from\n"+
			"APP_NAME), or without config files its skeleton: laravel_database_ up to 11.x,\n"+
			"laravel-database- on 12.x. LARAQ_REDIS_PREFIX applies in either case)")
	usage := "queue `name`"
	if multi {
		usage = "queue `names`, comma-separated, in priority order"
	}
	fs.Var(stringFlag{&c.queue, &c.queueSet}, "queue", usage+
		"\n(default: LARAQ_REDIS_QUEUE, else the application's REDIS_QUEUE, else \""+DefaultQueueName+"\")")
	return c
}

// queueNames splits --queue: one name, or a comma list for multi-queue commands.
func (c *connFlags) queueNames() ([]string, error) {
	if !c.queueSet {
		return []string{DefaultQueueName}, nil
	}
	var out []string
	for _, q := range strings.Split(c.queue, ",") {
		q = strings.TrimSpace(q)
		if q == "" {
			return nil, fmt.Errorf("--queue %q: empty queue name", c.queue)
		}
		out = append(out, q)
	}
	if len(out) > 1 && !c.multi {
		return nil, fmt.Errorf("--queue %q: this command takes one queue", c.queue)
	}
	return out, nil
}
