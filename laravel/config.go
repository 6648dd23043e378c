package laravel

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/internal/secret"
)

// Defaults of Config, as the Laravel skeleton's configuration files give them.
const (
	DefaultRedisHost       = "127.0.0.1"
	DefaultRedisPort       = 6379
	DefaultRedisDB         = 0 // REDIS_DB, the queue's connection `default`
	DefaultCacheDB         = 1 // REDIS_CACHE_DB, the cache store's connection `cache`
	DefaultAppName         = "laravel"
	DefaultConnection      = laraq.DefaultConnectionName // the Redis queue connection's name in config/queue.php
	DefaultQueue           = laraq.DefaultQueue          // REDIS_QUEUE
	DefaultRetryAfter      = 90                          // config/queue.php redis.retry_after
	DefaultTimezone        = "UTC"
	DefaultFailedDriver    = "database-uuids"
	DefaultFailedTable     = database.DefaultTable
	DefaultSentinelMaster  = "mymaster"
	EnvPrefix              = "LARAQ_"
	cacheConnectionDefault = "cache"
)

// DefaultRelease is the release assumed, as a guess, when neither App, LARAQ_LARAVEL_VERSION,
// the application's framework nor its .env keys say: the newest 11.x-style skeleton.
var DefaultRelease = laraq.Release{Major: 11, Minor: 1 << 30, Guessed: true}

// PrefixStyle chooses how key prefixes are derived from APP_NAME when the application's
// config files are not at hand (and, 11.x+, for the framework's own config files it
// leaves out). The application's own config/database.php and config/cache.php always win.
type PrefixStyle int

const (
	// PrefixAuto follows the release: the skeleton of its major (underscores up to 11.x,
	// hyphens from 12.x), and the framework's own files (underscores up to 12.x).
	PrefixAuto PrefixStyle = iota
	// PrefixUnderscore is the 5.8–11.x skeleton: Str::slug(APP_NAME, '_').'_database_' and
	// Str::slug(APP_NAME, '_').'_cache' (≤8.x) or '_cache_' (9.x+). 12.x applications
	// created before skeleton v12.1.0 keep these.
	PrefixUnderscore
	// PrefixHyphen is the 12.x skeleton from v12.1.0: Str::slug(APP_NAME).'-database-' and
	// Str::slug(APP_NAME).'-cache-'.
	PrefixHyphen
)

// App says where Load reads a Laravel application's configuration. The zero value reads
// only the process environment.
type App struct {
	// Root is the application directory. Load reads the framework release from vendor/
	// (or composer.lock, else guesses it from composer.json), the settings from
	// config/*.php (or bootstrap/cache/config.php), and resolves SQLite paths the way
	// `php artisan` does. Default: EnvFile's directory when it holds an application
	// (artisan, or config/ beside composer.json); else none of that, and the skeleton of
	// the release decides.
	Root string
	// EnvFile is the .env file to read. Default: Root's .env (or .env.APP_ENV when
	// APP_ENV is set in the environment and that file exists, as Laravel does); none
	// without Root. A named file that does not exist is an error. Its directory is where
	// database_path() points when there is no Root.
	EnvFile string
	// LookupEnv reads the process environment. Default os.LookupEnv. Getenv is used instead
	// when only it is set (an empty value then counts as unset).
	LookupEnv func(string) (string, bool)
	Getenv    func(string) string
	// Flags are command-line values, keyed by their LARAQ_* name (e.g. "LARAQ_REDIS_URL"
	// for --redis). They win over everything. Default none.
	Flags map[string]string
	// Release is the application's Laravel release. Default: LARAQ_LARAVEL_VERSION, else
	// the installed framework under Root, else a guess (Release.Guessed) from
	// composer.json's requirement, from the forms of the config files, from the keys of
	// the .env file, else DefaultRelease.
	Release laraq.Release
	// PrefixStyle overrides LARAQ_PREFIX_STYLE ("underscore" or "hyphen"). Default PrefixAuto.
	PrefixStyle PrefixStyle
	// Logger receives Connect's warnings (what Load could not read or had to guess, the
	// failed-job store's). Default slog.Default().
	Logger *slog.Logger
}

func (a App) logger() *slog.Logger {
	if a.Logger != nil {
		return a.Logger
	}
	return slog.Default()
}

// Config is a Laravel application's queue-related configuration, as its PHP side sees it.
// String and LogValue redact every secret.
type Config struct {
	// Release is the application's Laravel release; Release.Guessed when it was only
	// inferred (Origin("Release") says from what).
	Release laraq.Release
	AppName string
	// AppKey is APP_KEY decoded (the "base64:" form is decoded), for encrypted jobs. Secret.
	AppKey []byte
	// Encryption is the application's Encrypter (APP_KEY, app.cipher, APP_PREVIOUS_KEYS).
	Encryption Encryption
	// Cipher is app.cipher, "AES-256-CBC" in every skeleton.
	Cipher string
	// Timezone is app.timezone, in which failed_at is written. Location is its *time.Location.
	Timezone string
	Location *time.Location

	// Redis is the queue's Redis connection (`default`); CacheRedis the cache store's
	// (`cache`, REDIS_CACHE_DB). They differ only in DB unless REDIS_CACHE_CONNECTION says
	// otherwise.
	Redis      Redis
	CacheRedis Redis
	// Prefix is the Redis connection prefix (redis.options.prefix) of both connections.
	// Default "" when no application is known (no EnvFile, Root or APP_NAME): plain
	// queues:NAME keys. Otherwise REDIS_PREFIX, else what the application's
	// config/database.php or its skeleton derives from APP_NAME (laravel_database_).
	Prefix string

	// Connection is the name of the Redis queue connection (config/queue.php), which pause
	// keys and failed-job records carry. Default "redis".
	Connection string
	// DefaultConnection is QUEUE_CONNECTION, the connection dispatch() uses by default.
	DefaultConnection string
	// Queue is REDIS_QUEUE, the default queue name.
	Queue string
	// RetryAfter is the connection's retry_after in seconds.
	RetryAfter int
	// BlockFor is the connection's block_for in seconds; nil for null (never block).
	BlockFor *int
	// AfterCommit is the connection's after_commit. Go dispatches at once: it has no
	// database transaction to wait for.
	AfterCommit bool
	// RedisConnection and CacheConnection name the Redis connections (config/database.php
	// redis.NAME) of the queue (queue.connections.redis.connection, "default") and of the
	// cache store (cache.stores.STORE.connection, "cache").
	RedisConnection string
	CacheConnection string

	// CacheStore is the default cache store (CACHE_STORE on 11.x+, CACHE_DRIVER before).
	// Restart, pause and maxExceptions are shared with PHP when its driver (CacheDriver)
	// is "redis" or "database".
	CacheStore string
	// CacheDriver is that store's driver (cache.stores.STORE.driver; the skeleton's stores
	// are named after their drivers).
	CacheDriver string
	// CacheTable, CacheLockTable and CacheDBConnection are the database store's table,
	// lock_table and connection (DB_CACHE_TABLE, DB_CACHE_LOCK_TABLE,
	// DB_CACHE_CONNECTION; "" is the default connection), read when CacheDriver is
	// "database".
	CacheTable, CacheLockTable, CacheDBConnection string
	// CacheDatabase is the DSN of that store's database (secret: it holds the password):
	// LARAQ_CACHE_DATABASE, else built from the connection's settings in
	// config/database.php; "" when it cannot be built. Derived only when the
	// application chose the database store.
	CacheDatabase string
	// CacheLockLottery is that store's lock_lottery; zero: DatabaseStore's [2, 100].
	CacheLockLottery [2]int
	// CacheLockTimeout is its lock_timeout: the seconds of a lock taken for 0; zero:
	// DatabaseStore's 86400.
	CacheLockTimeout int
	// CachePrefix is the cache store prefix (config/cache.php).
	CachePrefix string
	// CacheLimiter is cache.limiter, the store the job middleware's RateLimiter counts
	// in ("" when unset: the default store), and CacheLimiterDriver that store's driver.
	CacheLimiter, CacheLimiterDriver string

	// FailedConnection is the database connection of failed jobs (queue.failed.database,
	// DB_CONNECTION).
	FailedConnection string
	// FailedDriver is queue.failed.driver; FailedDatabase the DSN database.Open takes for
	// the failed-job table (secret: it holds the password), "" when it cannot be built;
	// FailedTable the table.
	FailedDriver   string
	FailedDatabase string
	FailedTable    string

	// Horizon is the application's config/horizon.php when laraq writes Horizon's
	// records for it: when the application uses laravel/horizon, or LARAQ_HORIZON=on
	// (see loadHorizon). Nil otherwise.
	Horizon *Horizon

	// Root is the application directory Load read config files and the framework from:
	// App.Root, or the .env file's directory when it holds an application (artisan, or
	// config/ beside composer.json; Origins["Root"] then says so). "" when none.
	Root string

	// Origins says where each setting came from, keyed by setting name (the Config field,
	// or the variable it was read from); see Origin.
	Origins map[string]Origin
	// Warnings are things that will make laraq and the PHP application disagree.
	Warnings []string

	root   string                      // App.Root
	lookup func(string) (string, bool) // the process environment Load read
}

// Origin says where a setting came from: its key in Origins, or the zero Origin
// (Default).
func (c *Config) Origin(setting string) Origin { return c.Origins[setting] }

// major is the release's major version, the one most defaults depend on.
func (c *Config) major() int { return c.Release.Major }

// Load reads the configuration. Precedence, highest first: App.Flags, LARAQ_*
// environment variables, then the application's configuration as PHP evaluates it (its
// cached configuration, else config/*.php, whose env() calls read the process
// environment, then the .env file), then the skeleton of its release. See the package
// documentation.
func Load(src App) (*Config, error) {
	r := &resolver{flags: src.Flags, origins: map[string]Origin{}}
	switch {
	case src.LookupEnv != nil:
		r.lookup = src.LookupEnv
	case src.Getenv != nil:
		get := src.Getenv
		r.lookup = func(k string) (string, bool) { v := get(k); return v, v != "" }
	default:
		r.lookup = os.LookupEnv
	}
	c := &Config{Origins: r.origins, lookup: r.lookup}

	root := src.Root
	if root != "" {
		st, err := os.Stat(root)
		if err != nil {
			return nil, fmt.Errorf("config: Laravel root: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("config: Laravel root %s is not a directory", root)
		}
	}
	if err := r.loadEnvFile(src); err != nil {
		return nil, err
	}
	if root == "" && r.path != "" {
		// The .env of a Laravel application sits in its root: read the rest of it too.
		if dir := filepath.Dir(r.path); looksLikeAppRoot(dir) {
			root = dir
			r.origins["Root"] = Origin{Kind: EnvDir, Name: dir}
		}
	}
	var app *appFiles
	if root != "" {
		app = readApp(root)
		for _, f := range app.brokenFiles() {
			c.warn("%s cannot be read (%v): laraq takes its keys from the skeleton instead, while PHP fails on it; fix it, or set what laraq needs with LARAQ_* variables",
				filepath.Join(root, f.rel), f.err)
		}
		if app.cached != nil {
			c.warn("%s exists: Laravel reads this cached configuration and ignores .env and config/*.php, and so does laraq; run `php artisan config:cache` again (or config:clear) after editing them",
				filepath.Join(root, app.cached.rel))
		}
	}
	c.Root, c.root = root, root
	// database_path() is relative to the application root; with only a .env, to its
	// directory, where Laravel's root is.
	base := root
	if base == "" && r.path != "" {
		base = filepath.Dir(r.path)
	}
	if base != "" {
		if abs, err := filepath.Abs(base); err == nil {
			base = abs
		}
	}

	if err := c.loadVersion(r, src, app); err != nil {
		return nil, err
	}
	style := src.PrefixStyle
	if style == PrefixAuto {
		if v, origin, ok := r.override("PREFIX_STYLE"); ok {
			switch strings.ToLower(v) {
			case "underscore":
				style = PrefixUnderscore
			case "hyphen":
				style = PrefixHyphen
			default:
				return nil, fmt.Errorf("config: %s: want underscore or hyphen, got %q", origin, v)
			}
		}
	}
	l := &loader{r: r, c: c, base: base, layers: newLayers(app, c.Release, style)}
	if err := l.loadApp(); err != nil {
		return nil, err
	}
	if err := l.loadQueue(); err != nil {
		return nil, err
	}
	l.loadCache()
	// The skeleton's prefix is a fact about an application; with none named (no .env, no
	// root, no APP_NAME) the keys are taken as they are, without a prefix.
	known := root != "" || r.path != "" || r.origins["AppName"].Kind != Default
	if err := l.loadRedis(known); err != nil {
		return nil, err
	}
	if err := l.loadFailed(); err != nil {
		return nil, err
	}
	l.loadCacheDatabase()
	if err := c.loadHorizon(r); err != nil {
		return nil, err
	}
	c.loadEncryption(r)
	return c, nil
}

// newLayers sets up the configuration lookups for an application (nil: none) of release
// rel. An explicit style replaces the prefix expressions of the skeleton laraq assumes.
func newLayers(app *appFiles, rel laraq.Release, style PrefixStyle) *configLayers {
	prefixEra := func(e era) era {
		switch {
		case style == PrefixHyphen:
			return era121
		case style == PrefixUnderscore && e == era121:
			return era120
		}
		return e
	}
	l := &configLayers{app: app, skelEra: skeletonEra(rel)}
	l.skeleton = skeletonFiles(l.skelEra, prefixEra(l.skelEra))
	if app != nil && rel.Major >= 11 {
		l.merge = true
		l.baseEra = frameworkEra(rel)
		l.base = skeletonFiles(l.baseEra, prefixEra(l.baseEra))
	}
	return l
}

func (c *Config) warn(format string, args ...any) {
	w := fmt.Sprintf(format, args...)
	if !slices.Contains(c.Warnings, w) {
		c.Warnings = append(c.Warnings, w)
	}
}

// loadVersion decides the release: App.Release, LARAQ_LARAVEL_VERSION, the installed
// framework; else a guess from composer.json's requirement, the forms of the config files,
// the .env keys, in that order.
func (c *Config) loadVersion(r *resolver, src App, app *appFiles) error {
	var skeleton laraq.Release
	var skeletonFrom Origin
	if app != nil {
		skeleton, skeletonFrom = app.skeletonGuess()
	}
	switch {
	case !src.Release.IsZero():
		c.Release = src.Release
		r.origins["Release"] = Origin{Kind: Given}
	default:
		if v, origin, ok := r.override("LARAVEL_VERSION"); ok {
			rel, err := laraq.ParseRelease(v)
			if err != nil {
				return fmt.Errorf("config: %s: %v", origin, err)
			}
			c.Release = rel
			r.origins["Release"] = origin
		} else if app != nil && !app.release.IsZero() {
			c.Release, r.origins["Release"] = app.release, app.releaseFrom
		} else if app != nil && !app.constraint.IsZero() {
			c.Release, r.origins["Release"] = app.constraint, app.constrainFrom
		} else if !skeleton.IsZero() {
			c.Release, r.origins["Release"] = skeleton, skeletonFrom
		} else if v, keys := inferVersion(r.keys); v != 0 {
			c.Release = laraq.Release{Major: v, Minor: 1 << 30, Guessed: true}
			r.origins["Release"] = inferred(keys)
		} else {
			c.Release = DefaultRelease
			r.origins["Release"] = Origin{}
		}
	}
	if c.Release.Major < 5 || c.Release.Major > 99 {
		return fmt.Errorf("config: Laravel %s is not supported (5.8 or later)", c.Release)
	}
	return nil
}

// CacheScheme is how the application names the cache keys PHP workers share
// (queue:restart, queue:pause, maxExceptions counters) in Redis.
func (c *Config) CacheScheme() laraq.CacheScheme {
	return laraq.CacheScheme{ConnectionPrefix: c.Prefix, Prefix: c.CachePrefix, Separator: c.major() <= 10}
}

// AlsoWatch returns the cache key schemes of the other Laravel releases, under which a
// worker should also read the queue:restart and queue:pause signals when the release is
// only guessed (Release.Guessed): with a wrong guess it would otherwise never see
// `php artisan queue:restart`. It is nil when the release is known. The schemes are
// those of the table in the package documentation, for the same APP_NAME:
//
//	php.Slug(APP_NAME, "_")+"_cache" with ":"   (≤8.x)
//	php.Slug(APP_NAME, "_")+"_cache_" with ":"  (9.x–10.x)
//	php.Slug(APP_NAME, "_")+"_cache_"           (11.x)
//	php.Slug(APP_NAME, "-")+"-cache-"           (12.x), under the connection prefix
//	                                            php.Slug(APP_NAME, "-")+"-database-"
//
// A setting the application states is kept in every scheme: a CACHE_PREFIX (or the
// application's config/cache.php) leaves only the separator to vary; a connection
// prefix that was not derived from APP_NAME (REDIS_PREFIX, a flag, config/database.php,
// or the empty prefix of no application) is kept for all schemes. The result holds no
// duplicates and not CacheScheme itself.
func (c *Config) AlsoWatch() []laraq.CacheScheme {
	if !c.Release.Guessed {
		return nil
	}
	under, hyphen := php.Slug(c.AppName, "_"), php.Slug(c.AppName, "-")
	underConn, hyphenConn := c.Prefix, c.Prefix
	if c.Origin("Prefix").Kind == Default {
		underConn, hyphenConn = under+"_database_", hyphen+"-database-"
	}
	var schemes []laraq.CacheScheme
	if c.Origin("CachePrefix").Kind == Default {
		schemes = []laraq.CacheScheme{
			{ConnectionPrefix: underConn, Prefix: under + "_cache", Separator: true},
			{ConnectionPrefix: underConn, Prefix: under + "_cache_", Separator: true},
			{ConnectionPrefix: underConn, Prefix: under + "_cache_"},
			{ConnectionPrefix: hyphenConn, Prefix: hyphen + "-cache-"},
		}
	} else {
		schemes = []laraq.CacheScheme{
			{ConnectionPrefix: underConn, Prefix: c.CachePrefix, Separator: true},
			{ConnectionPrefix: underConn, Prefix: c.CachePrefix},
			{ConnectionPrefix: hyphenConn, Prefix: c.CachePrefix},
		}
	}
	seen := map[string]bool{c.CacheScheme().RestartKey(): true}
	var out []laraq.CacheScheme
	for _, k := range schemes {
		if r := k.RestartKey(); !seen[r] {
			seen[r] = true
			out = append(out, k)
		}
	}
	return out
}

// FailedOptions returns the database.Options matching the application's failed-job
// provider (driver, table, timezone; the release's table schema for CreateIfMissing), for the
// store on FailedDatabase.
func (c *Config) FailedOptions() database.Options {
	o := database.Options{Table: c.FailedTable, Location: c.Location, Schema: database.SchemaFor(c.Release.Major, c.Release.Minor)}
	if c.FailedDriver != "database-uuids" {
		o.Driver = database.Database
	}
	return o
}

// resolver looks settings up in precedence order and records where each came from.
type resolver struct {
	flags   map[string]string
	lookup  func(string) (string, bool)
	file    map[string]string
	lines   map[string]int
	keys    []string // every name the .env file sets, in order, even those the environment overrides
	path    string
	origins map[string]Origin
}

func (r *resolver) loadEnvFile(src App) error {
	path := src.EnvFile
	if path == "" {
		if v, _, ok := r.override("ENV_FILE"); ok {
			path = v
		}
	}
	if path == "" && src.Root != "" {
		path = filepath.Join(src.Root, ".env")
		// LoadEnvironmentVariables: APP_ENV from the environment selects .env.<APP_ENV>.
		if env, ok := r.lookup("APP_ENV"); ok && env != "" {
			if p := path + "." + env; fileExists(p) {
				path = p
			}
		}
		if !fileExists(path) {
			return nil // Laravel runs without a .env file too
		}
	}
	if path == "" {
		return nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	entries, err := parseDotenv(path, string(b))
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	r.file, r.lines = loadDotenv(entries, r.lookup)
	for _, e := range entries {
		if e.defined {
			r.keys = append(r.keys, e.name)
		}
	}
	r.path = path
	return nil
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// override returns the LARAQ_<key> value: App.Flags first, then the environment.
func (r *resolver) override(key string) (value string, origin Origin, ok bool) {
	name := EnvPrefix + key
	if v, ok := r.flags[name]; ok {
		return v, Origin{Kind: Flag, Name: name}, true
	}
	if v, ok := r.lookup(name); ok {
		return v, Origin{Kind: LaraqEnv, Name: name}, true
	}
	return "", Origin{}, false
}

// env returns what Laravel's env(name) sees: the process environment, then the .env file.
func (r *resolver) env(name string) (envValue, Origin) {
	if name == "" {
		return envValue{}, Origin{}
	}
	if v, ok := r.lookup(name); ok {
		return phpEnv(v), Origin{Kind: Environment, Name: name}
	}
	if v, ok := r.file[name]; ok {
		return phpEnv(v), Origin{Kind: DotEnv, Name: r.path, Line: r.lines[name]}
	}
	return envValue{}, Origin{}
}

// get resolves setting (recorded in origins): LARAQ_<name> override, else env(name).
// Overrides are taken literally (no true/null keywords).
func (r *resolver) get(setting, name string) (envValue, Origin) {
	if v, origin, ok := r.override(name); ok {
		r.origins[setting] = origin
		return envValue{set: true, str: v}, origin
	}
	v, origin := r.env(name)
	if v.set {
		r.origins[setting] = origin
	}
	return v, origin
}

// str is env(name, def) used as a string: null and false give "".
func (r *resolver) str(setting, name, def string) string {
	v, _ := r.get(setting, name)
	if !v.set {
		r.origins[setting] = Origin{}
		return def
	}
	return v.str
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "yes", "on", "(true)":
		return true
	}
	return false
}

// String describes the configuration with every secret replaced by "xxxxx".
func (c *Config) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "laravel=%s redis=%s cache_redis=%s prefix=%q connection=%s queue=%s cache_store=%s cache_prefix=%q timezone=%s failed_driver=%s failed_database=%s failed_table=%s app_key=%s",
		c.Release, c.Redis.String(), c.CacheRedis.String(), c.Prefix, c.Connection, c.Queue,
		c.CacheStore, c.CachePrefix, c.Timezone, c.FailedDriver,
		RedactDSN(c.FailedDatabase), c.FailedTable, redactedIf(len(c.AppKey) > 0))
	return b.String()
}

// LogValue makes slog print the redacted form.
func (c *Config) LogValue() slog.Value {
	return slog.GroupValue(
		slog.String("laravel", c.Release.String()),
		slog.String("redis", c.Redis.String()),
		slog.String("cache_redis", c.CacheRedis.String()),
		slog.String("prefix", c.Prefix),
		slog.String("connection", c.Connection),
		slog.String("queue", c.Queue),
		slog.String("cache_store", c.CacheStore),
		slog.String("cache_prefix", c.CachePrefix),
		slog.String("timezone", c.Timezone),
		slog.String("failed_driver", c.FailedDriver),
		slog.String("failed_database", RedactDSN(c.FailedDatabase)),
		slog.String("failed_table", c.FailedTable),
		slog.String("app_key", redactedIf(len(c.AppKey) > 0)),
	)
}

func redactedIf(set bool) string {
	if set {
		return redacted
	}
	return ""
}

const redacted = secret.Mask
