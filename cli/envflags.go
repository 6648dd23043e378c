package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strconv"
	"strings"

	"github.com/laraq/laraq/config"
	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/redis/go-redis/v9"
)

// appFlags point a command at a Laravel application: the connection flags of conn.go
// (--redis, --prefix, --queue) plus --env-file and --laravel-root, all resolved through
// config.Load. A connection flag given on the command line wins over the application's
// .env and the LARAQ_* environment; one not given leaves the application's value.
type appFlags struct {
	fs       *flag.FlagSet
	conn     *connFlags
	envFile  string
	root     string
	version  string
	database string
	table    string
	cachePfx string
}

// addAppFlags registers the flags. withFailed adds --database and --table.
func addAppFlags(fs *flag.FlagSet, multiQueue, withFailed bool) *appFlags {
	a := &appFlags{fs: fs, conn: addConnFlags(fs, multiQueue)}
	fs.StringVar(&a.envFile, "env-file", "", "`PATH` of the Laravel application's .env file (default: LARAQ_ENV_FILE, else DIR/.env with --laravel-root)")
	fs.StringVar(&a.root, "laravel-root", "", "the Laravel application `DIR`: its .env, framework version, prefix, timezone and database settings")
	fs.StringVar(&a.version, "laravel-version", "", "the application's Laravel `version`, e.g. 8 or 12.40: decides the derived prefixes and the cache\n"+
		"key scheme (default: LARAQ_LARAVEL_VERSION, else the framework under --laravel-root, else\n"+
		"guessed from the .env keys: CACHE_DRIVER, FILESYSTEM_DRIVER, MIX_* say 8, FILESYSTEM_DISK\n"+
		"and VITE_* 10, CACHE_STORE 11; else 11)")
	fs.StringVar(&a.cachePfx, "cache-prefix", "", "the cache store `prefix` (config/cache.php), where queue:restart and queue:pause live\n"+
		"(default: LARAQ_CACHE_PREFIX, else CACHE_PREFIX, else derived from APP_NAME and the version).\n"+
		"A cache key is connection prefix + cache prefix [+ ':' up to 10.x] + key: on Laravel 8\n"+
		"laravel_database_laravel_cache:illuminate:queue:restart; with no application given (no\n"+
		"connection prefix, 11.x scheme) laravel_cache_illuminate:queue:restart")
	if withFailed {
		fs.StringVar(&a.database, "database", "", "failed-job database `DSN`: sqlite:PATH, mysql://user:pass@host:port/db, postgres://…, or null\n"+
			"(default: LARAQ_DATABASE, else the application's QUEUE_FAILED_DRIVER and DB_* settings,\n"+
			"else the local file "+localFailedHelp+")")
		fs.StringVar(&a.table, "table", "", "failed-job `table` (default: LARAQ_QUEUE_FAILED_TABLE, else QUEUE_FAILED_TABLE, else failed_jobs)")
	}
	return a
}

// flagKeys maps command-line flags to the config keys they set.
var flagKeys = map[string]string{
	"redis":           "LARAQ_REDIS_URL",
	"prefix":          "LARAQ_REDIS_PREFIX",
	"laravel-version": "LARAQ_LARAVEL_VERSION",
	"cache-prefix":    "LARAQ_CACHE_PREFIX",
	"database":        "LARAQ_DATABASE",
	"table":           "LARAQ_QUEUE_FAILED_TABLE",
}

// load reads the configuration and prints its warnings on stderr.
func (a *appFlags) load(app *App) (*config.Config, error) {
	flags := map[string]string{}
	a.fs.Visit(func(f *flag.Flag) {
		if k, ok := flagKeys[f.Name]; ok {
			flags[k] = f.Value.String()
		}
	})
	if a.conn.queueSet && !a.conn.multi {
		flags["LARAQ_REDIS_QUEUE"] = a.conn.queue
	}
	cfg, err := config.Load(config.Sources{
		EnvFile:     a.envFile,
		LaravelRoot: a.root,
		Getenv:      app.Getenv,
		Flags:       flags,
	})
	if err != nil {
		return nil, flagNames(err)
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(app.Stderr, "%s: warning: %s\n", app.Name, w)
	}
	return cfg, nil
}

// queues returns the --queue names, or nil when --queue was not given.
func (a *appFlags) queues() ([]string, error) {
	if !a.conn.queueSet {
		return nil, nil
	}
	return a.conn.queueNames()
}

// flagNames rewrites config's "flag LARAQ_REDIS_URL" origins in an error into the
// command-line flag the user typed ("--redis").
func flagNames(err error) error {
	msg := err.Error()
	for flagName, key := range flagKeys {
		msg = strings.ReplaceAll(msg, "flag "+key, "--"+flagName)
	}
	if msg == err.Error() {
		return err
	}
	return errors.New(msg)
}

// redisConn is an open connection to the application's Redis: the queue and cache
// clients and the queue operations on them.
type redisConn struct {
	cfg     *config.Config
	clients *config.Clients
	rdb     *rdb.RDB
}

// connect builds the clients for cfg with go-redis' default pool (go-redis dials on
// first use).
func connect(cfg *config.Config) (*redisConn, error) { return connectPool(cfg, 0, 0) }

// connectPool is connect with pools of at least queuePool and cachePool connections
// (0: go-redis' default), so that a worker running many jobs at once never waits for a
// connection of its own pool.
func connectPool(cfg *config.Config, queuePool, cachePool int) (*redisConn, error) {
	clients, err := newClients(cfg, queuePool, cachePool)
	if err != nil {
		return nil, err
	}
	r, err := rdb.New(clients.Queue, rdb.Options{
		Prefix:          cfg.Prefix,
		ClusterHashTags: clusterHashTags(cfg),
		Cache:           rdb.CacheOptions{Client: clients.Cache, Keys: cfg.CacheKeys()},
	})
	if err != nil {
		clients.Close()
		return nil, err
	}
	return &redisConn{cfg: cfg, clients: clients, rdb: r}, nil
}

// clusterHashTags says whether queue names get a hash tag: Laravel 13.5+ wraps them on
// cluster connections; earlier versions need {name} queues, which rdb leaves alone.
func clusterHashTags(cfg *config.Config) bool {
	return cfg.Redis.Cluster && cfg.LaravelVersion >= 13
}

// newClients is cfg.NewClients with pool sizes. One client serves both connections when
// they are the same database, with room for both pools.
func newClients(cfg *config.Config, queuePool, cachePool int) (*config.Clients, error) {
	if queuePool <= 0 && cachePool <= 0 {
		return cfg.NewClients()
	}
	qo, err := cfg.Redis.UniversalOptions()
	if err != nil {
		return nil, err
	}
	if reflect.DeepEqual(cfg.Redis, cfg.CacheRedis) {
		qo.PoolSize = poolSize(queuePool + cachePool)
		c := redis.NewUniversalClient(qo)
		return &config.Clients{Queue: c, Cache: c}, nil
	}
	co, err := cfg.CacheRedis.UniversalOptions()
	if err != nil {
		return nil, err
	}
	qo.PoolSize, co.PoolSize = poolSize(queuePool), poolSize(cachePool)
	return &config.Clients{Queue: redis.NewUniversalClient(qo), Cache: redis.NewUniversalClient(co)}, nil
}

// poolSize is need, or go-redis' default (10 per CPU) when that is larger.
func poolSize(need int) int {
	return max(need, 10*runtime.GOMAXPROCS(0))
}

func (c *redisConn) Close() error { return c.clients.Close() }

// localFailedHelp is how --help names the local failed-job file.
const localFailedHelp = "$XDG_DATA_HOME/laraq/failed.sqlite (~/.local/share/laraq/failed.sqlite)"

// failedDSN decides where failed jobs are kept: --database or LARAQ_DATABASE; else the
// failed-job table of the application (its QUEUE_FAILED_DRIVER and DB_* settings, when
// something, not just the skeleton defaults, names them), so that `php artisan
// queue:failed` and `queue:retry` see laraq's failures; else a SQLite file of the user's
// own. local reports the last case, where PHP does not see the records.
func (a *appFlags) failedDSN(app *App, cfg *config.Config) (dsn string, local bool, err error) {
	// With --laravel-root even the skeleton's DB_CONNECTION default names a real database
	// (11.x: database/database.sqlite of that application).
	if cfg.FailedDatabase != "" && (cfg.Origins["FailedDatabase"] != "DB_* (default)" || a.root != "") {
		return cfg.FailedDatabase, false, nil
	}
	dir := app.Getenv("XDG_DATA_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home := app.Getenv("HOME")
		if home == "" {
			return "", false, errors.New("no failed-job database: pass --database DSN (or null), or --laravel-root / --env-file of an application with DB_* settings")
		}
		dir = filepath.Join(home, ".local", "share")
	}
	return "sqlite:" + filepath.Join(dir, "laraq", "failed.sqlite"), true, nil
}

// openFailed opens the failed-job store failedDSN names, creating the directory of the
// local file.
func (a *appFlags) openFailed(ctx context.Context, app *App, cfg *config.Config, logger *slog.Logger) (store failed.Store, dsn string, local bool, err error) {
	dsn, local, err = a.failedDSN(app, cfg)
	if err != nil {
		return nil, "", false, err
	}
	if local {
		if err := os.MkdirAll(filepath.Dir(strings.TrimPrefix(dsn, "sqlite:")), 0o700); err != nil {
			return nil, "", false, fmt.Errorf("failed-job store: %w", err)
		}
	}
	opts := cfg.FailedOptions()
	opts.Logger = logger
	store, err = failed.Open(ctx, dsn, opts)
	if err != nil {
		return nil, "", false, fmt.Errorf("failed-job store %s: %w", config.RedactDSN(dsn), err)
	}
	return store, dsn, local, nil
}

// splitConnectionQueue reads Laravel 12's `[connection:]queue` argument.
func splitConnectionQueue(arg, defaultConnection string) (connection, queue string) {
	if c, q, ok := strings.Cut(arg, ":"); ok {
		return c, q
	}
	return defaultConnection, arg
}

// payloadVersion is the Laravel release whose payload shapes `dispatch` writes:
// --laravel-version or LARAQ_LARAVEL_VERSION as given (minor releases matter there, e.g.
// 12.51), else the application's major version when something names it (its framework,
// not a guess from its .env keys), else 8, whose payloads every Laravel 8+ worker reads.
func (a *appFlags) payloadVersion(app *App, cfg *config.Config) string {
	if a.version != "" {
		return a.version
	}
	if v := app.Getenv(config.EnvPrefix + "LARAVEL_VERSION"); v != "" {
		return v
	}
	if o := cfg.Origins["LaravelVersion"]; o != "default" && !strings.HasPrefix(o, config.VersionInferred) {
		return strconv.Itoa(cfg.LaravelVersion)
	}
	return "8"
}
