package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/laravel"
)

// appFlags point a command at a Laravel application: the connection flags of conn.go
// (--redis, --prefix, --queue) plus --env-file and --laravel-root, all resolved through
// config.Load. A connection flag given on the command line wins over the application's
// .env and the LARAQ_* environment; one not given leaves the application's value.
type appFlags struct {
	fs          *flag.FlagSet
	conn        *connFlags
	envFile     string
	root        string
	version     string
	database    string
	table       string
	cachePfx    string
	createTable bool
}

// addAppFlags registers the flags. withFailed adds --database and --table.
func addAppFlags(fs *flag.FlagSet, multiQueue, withFailed bool) *appFlags {
	a := &appFlags{fs: fs, conn: addConnFlags(fs, multiQueue)}
	fs.StringVar(&a.envFile, "env-file", "", "`PATH` of the Laravel application's .env file (default: LARAQ_ENV_FILE, else DIR/.env with --laravel-root);\n"+
		"when its directory holds the application (artisan, or config/ beside composer.json), that is --laravel-root")
	fs.StringVar(&a.root, "laravel-root", "", "the Laravel application `DIR`: its .env, config files (or cached configuration) and framework\n"+
		"release: prefixes, queue, retry_after, cache store, timezone and failed-job database as PHP reads them")
	fs.StringVar(&a.version, "laravel-version", "", "the application's Laravel `version`, e.g. 8 or 12.40: decides the derived prefixes and the cache\n"+
		"key scheme (default: LARAQ_LARAVEL_VERSION, else the framework under --laravel-root, else\n"+
		"guessed from its composer.json or config files, else from the .env keys: CACHE_DRIVER,\n"+
		"FILESYSTEM_DRIVER, MIX_* say 8, FILESYSTEM_DISK and VITE_* 10, CACHE_STORE 11; else 11)")
	fs.StringVar(&a.cachePfx, "cache-prefix", "", "the cache store `prefix` (config/cache.php), where queue:restart and queue:pause live\n"+
		"(default: LARAQ_CACHE_PREFIX, else CACHE_PREFIX, else derived from APP_NAME and the version).\n"+
		"A cache key is connection prefix + cache prefix [+ ':' up to 10.x] + key: on Laravel 8\n"+
		"laravel_database_laravel_cache:illuminate:queue:restart; with no application given (no\n"+
		"connection prefix, 11.x scheme) laravel_cache_illuminate:queue:restart")
	if withFailed {
		fs.StringVar(&a.database, "database", "", "failed-job database `DSN`: sqlite:PATH, mysql://user:pass@host:port/db, postgres://…, or null\n"+
			"(default: LARAQ_DATABASE, else the application's QUEUE_FAILED_DRIVER and DB_* settings,\n"+
			"else the local file "+laravel.LocalFailedFile+")")
		fs.StringVar(&a.table, "table", "", "failed-job `table` (default: LARAQ_QUEUE_FAILED_TABLE, else QUEUE_FAILED_TABLE, else failed_jobs)")
		fs.BoolVar(&a.createTable, "create-failed-table", false, "create the failed-job table with Laravel's schema when it is missing (default: the application's\nmigration owns it, and a missing table is an error)")
	}
	return a
}

// flagKeys maps command-line flags to the config keys they set.
var flagKeys = map[string]string{
	"redis":                 "LARAQ_REDIS_URL",
	"redis-sentinel":        "LARAQ_REDIS_SENTINEL",
	"redis-sentinel-master": "LARAQ_REDIS_SENTINEL_MASTER",
	"prefix":                "LARAQ_REDIS_PREFIX",
	"laravel-version":       "LARAQ_LARAVEL_VERSION",
	"cache-prefix":          "LARAQ_CACHE_PREFIX",
	"database":              "LARAQ_DATABASE",
	"table":                 "LARAQ_QUEUE_FAILED_TABLE",
}

// load reads the configuration and prints its warnings on stderr.
func (a *appFlags) load(app *App) (*laravel.Config, error) {
	flags := map[string]string{}
	a.fs.Visit(func(f *flag.Flag) {
		if k, ok := flagKeys[f.Name]; ok {
			flags[k] = f.Value.String()
		}
	})
	if a.conn.queueSet && !a.conn.multi {
		flags["LARAQ_REDIS_QUEUE"] = a.conn.queue
	}
	cfg, err := laravel.Load(laravel.App{
		EnvFile: a.envFile,
		Root:    a.root,
		Getenv:  app.Getenv,
		Flags:   flags,
	})
	if err != nil {
		return nil, flagNames(err)
	}
	for _, w := range cfg.Warnings {
		fmt.Fprintf(app.Stderr, "%s: warning: %s\n", app.Name, flagNames(errors.New(w)))
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

// connect opens the application's Redis clients (and, unless told otherwise, its
// failed-job store) as laravel.Connect does, so the CLI and a library user of the same
// application share the same connection.
func (a *appFlags) connect(ctx context.Context, cfg *laravel.Config, opts laravel.ConnectOptions) (*laraq.Connection, error) {
	opts.CreateFailedTable = opts.CreateFailedTable || a.createTable
	conn, err := cfg.Connect(ctx, opts)
	if err != nil {
		return nil, flagNames(err)
	}
	return conn, nil
}

// clock is the commands' clock (the queue:restart timestamp, job ages, retryUntil
// checks); tests set it.
var clock = time.Now

// admin opens the application's Redis (no failed-job store) for the admin API.
func (a *appFlags) admin(ctx context.Context, app *App, cfg *laravel.Config) (*laraq.Admin, func(), error) {
	return a.adminWith(ctx, cfg, laravel.ConnectOptions{WithoutFailedStore: true})
}

// signalAdmin is admin for the commands that write signals PHP workers read (restart,
// pause, resume): an application cache store it cannot open is an error.
func (a *appFlags) signalAdmin(ctx context.Context, app *App, cfg *laravel.Config) (*laraq.Admin, func(), error) {
	return a.adminWith(ctx, cfg, laravel.ConnectOptions{WithoutFailedStore: true, RequireSharedCache: true})
}

func (a *appFlags) adminWith(ctx context.Context, cfg *laravel.Config, opts laravel.ConnectOptions) (*laraq.Admin, func(), error) {
	conn, err := a.connect(ctx, cfg, opts)
	if err != nil {
		return nil, nil, err
	}
	admin, err := laraq.NewAdmin(conn, laraq.WithClock(clock))
	if err != nil {
		conn.Close()
		return nil, nil, err
	}
	return admin, func() { conn.Close() }, nil
}

// splitConnectionQueue reads Laravel 12's `[connection:]queue` argument.
func splitConnectionQueue(arg, defaultConnection string) (connection, queue string) {
	if c, q, ok := strings.Cut(arg, ":"); ok {
		return c, q
	}
	return defaultConnection, arg
}
