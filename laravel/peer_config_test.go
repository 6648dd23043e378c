package laravel

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// phpConfig is what testdata/php/laravel_config.php prints: the configuration a Laravel
// release builds from an application's .env and config files.
type phpConfig struct {
	Prefix          *string        `json:"prefix"`
	QueuePrefix     *string        `json:"queue_client_prefix"` // what the queue connection's client applies
	CachePrefixConn *string        `json:"cache_client_prefix"` // and the cache store connection's
	RedisClient     string         `json:"redis_client"`
	RedisDefault    map[string]any `json:"redis_default"`
	RedisCache      map[string]any `json:"redis_cache"`
	CacheDefault    string         `json:"cache_default"`
	CachePrefix     *string        `json:"cache_prefix"`
	CacheConnection *string        `json:"cache_connection"`
	QueueDefault    string         `json:"queue_default"`
	QueueConnection *string        `json:"queue_connection"`
	Queue           *string        `json:"queue"`
	RetryAfter      any            `json:"retry_after"`
	BlockFor        any            `json:"block_for"`
	Failed          map[string]any `json:"failed"`
	FailedConn      string         `json:"failed_connection"`
	FailedConfig    map[string]any `json:"failed_connection_config"`
	CacheDBConfig   map[string]any `json:"cache_db_connection_config"` // the database cache store's connection
	CacheLottery    []int          `json:"cache_lock_lottery"`
	CacheLockTTL    *int           `json:"cache_lock_timeout"`
	Timezone        string         `json:"timezone"`
	Cipher          string         `json:"cipher"`
}

// phpLoad runs laravel_config.php on an application with a major's framework.
func phpLoad(t *testing.T, major int, srv *testenv.Redis, root, frameworkConfig string, args ...string) phpConfig {
	t.Helper()
	cmd := exec.Command("php", append([]string{filepath.Join("testdata", "php", "laravel_config.php"), root, "", frameworkConfig}, args...)...)
	cmd.Env = testenv.PHPEnv{Major: major, Redis: srv}.Environ()
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("laravel_config.php %s: %v\n%s%s", root, err, stderr, out)
	}
	var c phpConfig
	if err := json.Unmarshal(out, &c); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	return c
}

// configInt is PHP's (int) of a config value (the skeleton's database numbers are strings).
func configInt(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case string:
		n, _ := strconv.Atoi(x)
		return n
	}
	return 0
}

func blockFor(p *int) string {
	if p == nil {
		return "<nil>"
	}
	return strconv.Itoa(*p)
}

func deref(p *string) string {
	if p == nil {
		return "<null>"
	}
	return *p
}

// peerApp is an application for TestConfigMatchesPHP: a skeleton with edits, the peer
// major whose framework reads it, and the framework release laraq finds installed.
type peerApp struct {
	name     string
	skeleton string
	major    int
	tag      string // testdata/framework/TAG: the installed framework's VERSION line
	edits    func(t *testing.T, app string) map[string]func(string) string
	// framework: the application has only .env and composer.json; its config comes from
	// the framework's own files (11+), installed under vendor/ or not.
	framework, installed bool
	// cached: `php artisan config:cache` is run, then .env changes (PHP no longer reads it).
	cached bool
}

// TestConfigMatchesPHP loads real skeleton applications, as created and customised, with
// laraq and with the real framework of a matching Laravel major (the peers), and requires
// the same prefix, cache prefix, databases, queue, retry_after, timezone and failed-job
// store. Then PHP's own RedisQueue (dispatch.php) and cache store (ops_cache.php),
// configured with what PHP read, write a job and queue:restart: the keys must be the
// ones laraq computes from the same files.
func TestConfigMatchesPHP(t *testing.T) {
	srv := testenv.RedisServer(t)
	apps := []peerApp{
		{name: "8 skeleton", skeleton: "laravel-8", major: 8},
		{name: "9 skeleton", skeleton: "laravel-9", major: 10, tag: "v10.50.3"},
		{name: "10 skeleton", skeleton: "laravel-10", major: 10, tag: "v10.50.3"},
		{name: "11 skeleton", skeleton: "laravel-11", major: 11, tag: "v11.56.0"},
		{name: "12.0 skeleton", skeleton: "laravel-12.0", major: 12, tag: "v12.67.0"},
		{name: "12.1+ skeleton", skeleton: "laravel-12", major: 12, tag: "v12.67.0"},
		{name: "13 skeleton", skeleton: "laravel-13", major: 13, tag: "v13.26.1"},
		{name: "13 literal prefix", skeleton: "laravel-13", major: 13, tag: "v13.26.1", edits: func(t *testing.T, app string) map[string]func(string) string {
			return map[string]func(string) string{
				"config/database.php": replace(t, "'prefix' => env('REDIS_PREFIX', Str::slug((string) env('APP_NAME', 'laravel')).'-database-'),",
					"'prefix' => 'live_"+app+":',"),
				".env": func(s string) string {
					return s + "REDIS_PREFIX=ignored_\nREDIS_QUEUE=emails\nREDIS_QUEUE_RETRY_AFTER=600\n"
				},
			}
		}},
		{name: "8 literal retry_after, queue and cache connection", skeleton: "laravel-8", major: 8, edits: func(t *testing.T, app string) map[string]func(string) string {
			return map[string]func(string) string{
				"config/queue.php": replace(t, "'queue' => env('REDIS_QUEUE', 'default'),\n            'retry_after' => 90,",
					"'queue' => 'high',\n            'retry_after' => 300,"),
				"config/cache.php": replace(t, "'connection' => 'cache',", "'connection' => 'default',"),
				".env":             func(s string) string { return s + "REDIS_QUEUE_RETRY_AFTER=600\nREDIS_DB=3\nCACHE_PREFIX=shared\n" },
			}
		}},
		{name: "11 sqlite path, cache on default", skeleton: "laravel-11", major: 11, tag: "v11.56.0", edits: func(t *testing.T, app string) map[string]func(string) string {
			return map[string]func(string) string{".env": func(s string) string {
				return s + "REDIS_CACHE_CONNECTION=default\nREDIS_DB=2\nDB_DATABASE=storage/app.sqlite\nCACHE_PREFIX=c_\n"
			}}
		}},
		{name: "13 database cache store on a connection of its own", skeleton: "laravel-13", major: 13, tag: "v13.26.1", edits: func(t *testing.T, app string) map[string]func(string) string {
			return map[string]func(string) string{
				"config/database.php": replace(t, "    'connections' => [\n",
					"    'connections' => [\n\n        'cachedb' => [\n            'driver' => 'sqlite',\n            'database' => env('CACHE_DB_PATH', database_path('cache.sqlite')),\n        ],\n"),
				"config/cache.php": replace(t, "'lock_table' => env('DB_CACHE_LOCK_TABLE'),",
					"'lock_table' => env('DB_CACHE_LOCK_TABLE'),\n            'lock_lottery' => [1, 50],\n            'lock_timeout' => 600,"),
				".env": func(s string) string { return s + "DB_CACHE_CONNECTION=cachedb\nCACHE_DB_PATH=storage/cache.sqlite\n" },
			}
		}},
		{name: "8 per-connection prefixes (phpredis before 9.12)", skeleton: "laravel-8", major: 8, edits: connectionPrefixes},
		{name: "13 per-connection prefixes", skeleton: "laravel-13", major: 13, tag: "v13.26.1", edits: connectionPrefixes},
		{name: "13 cached configuration", skeleton: "laravel-13", major: 13, tag: "v13.26.1", cached: true},
		{name: "8 cached configuration", skeleton: "laravel-8", major: 8, cached: true},
		{name: "12 framework config, installed", skeleton: "laravel-12", major: 12, tag: "v12.67.0", framework: true, installed: true},
		{name: "12 framework config, known", skeleton: "laravel-12", major: 12, tag: "v12.67.0", framework: true},
		{name: "11 framework config, known", skeleton: "laravel-11", major: 11, tag: "v11.56.0", framework: true},
		{name: "13 framework config, known", skeleton: "laravel-13", major: 13, tag: "v13.26.1", framework: true},
	}
	for i, a := range apps {
		t.Run(a.name, func(t *testing.T) {
			testenv.NeedPeer(t, a.major)
			// A name of its own, so that the keys of each case are told apart.
			name := "Laraq Cfg " + strconv.Itoa(i) + " " + testenv.RandomName(3)
			slug := strings.ToLower(strings.ReplaceAll(name, " ", "_"))
			edits := map[string]func(string) string{}
			if a.edits != nil {
				edits = a.edits(t, slug)
			}
			if a.tag != "" {
				for k, v := range withFramework(a.tag) {
					edits[k] = v
				}
			}
			envEdit := edits[".env"]
			edits[".env"] = func(s string) string {
				if envEdit != nil {
					s = envEdit(s)
				}
				return strings.Replace(s, "APP_NAME=Laravel", `APP_NAME="`+name+`"`, 1)
			}
			root := skeletonApp(t, a.skeleton, edits)
			frameworkConfig := ""
			if a.framework {
				frameworkConfig, _ = filepath.Abs(filepath.Join("testdata", "framework", a.tag, "config"))
				if err := os.RemoveAll(filepath.Join(root, "config")); err != nil {
					t.Fatal(err)
				}
				if a.installed {
					if err := os.CopyFS(filepath.Join(root, "vendor", "laravel", "framework", "config"), os.DirFS(frameworkConfig)); err != nil {
						t.Fatal(err)
					}
				}
			}
			if a.cached {
				phpLoad(t, a.major, srv, root, frameworkConfig, "cache")
				f, err := os.OpenFile(filepath.Join(root, ".env"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString("REDIS_PREFIX=stale_\nREDIS_QUEUE=stale\nCACHE_PREFIX=stale_\n")
				f.Close()
			}
			php := phpLoad(t, a.major, srv, root, frameworkConfig)
			c := mustLoad(t, App{EnvFile: filepath.Join(root, ".env")})
			if a.major > 8 && c.major() != a.major {
				t.Fatalf("release %s from %s", c.Release, c.Origin("Release"))
			}

			checks := []struct {
				what       string
				laraq, php string
			}{
				{"prefix", c.Prefix, deref(php.QueuePrefix)},
				{"cache prefix", c.CachePrefix, deref(php.CachePrefix)},
				{"queue", c.Queue, deref(php.Queue)},
				{"retry_after", strconv.Itoa(c.RetryAfter), strconv.Itoa(configInt(php.RetryAfter))},
				{"block_for", blockFor(c.BlockFor), fmt.Sprint(php.BlockFor)},
				{"queue database", strconv.Itoa(c.Redis.DB), strconv.Itoa(configInt(php.RedisDefault["database"]))},
				{"cache store", c.CacheStore, php.CacheDefault},
				{"queue:default", c.DefaultConnection, php.QueueDefault},
				{"timezone", c.Timezone, php.Timezone},
				{"cipher", c.Cipher, php.Cipher},
				{"failed table", c.FailedTable, php.Failed["table"].(string)},
				{"failed connection", c.FailedConnection, php.FailedConn},
			}
			cacheConn := php.RedisCache
			if deref(php.CacheConnection) == "default" {
				cacheConn = php.RedisDefault
			}
			checks = append(checks, struct{ what, laraq, php string }{"cache database", strconv.Itoa(c.CacheRedis.DB), strconv.Itoa(configInt(cacheConn["database"]))})
			if php.FailedConfig["driver"] == "sqlite" {
				path, _ := php.FailedConfig["database"].(string)
				if !filepath.IsAbs(path) {
					path = filepath.Join(root, path) // `php artisan` runs in the root
				}
				checks = append(checks, struct{ what, laraq, php string }{"failed database", c.FailedDatabase, "sqlite:" + path})
			}
			if php.CacheDBConfig != nil && php.CacheDBConfig["driver"] == "sqlite" && c.Origin("CacheStore").Kind != Default {
				path, _ := php.CacheDBConfig["database"].(string)
				if !filepath.IsAbs(path) {
					path = filepath.Join(root, path)
				}
				checks = append(checks, struct{ what, laraq, php string }{"cache store database", c.CacheDatabase, "sqlite:" + path})
			}
			if php.CacheLottery != nil {
				lottery := c.CacheLockLottery
				if lottery == [2]int{} {
					lottery = [2]int{2, 100}
				}
				ttl := c.CacheLockTimeout
				if ttl == 0 {
					ttl = 86400
				}
				checks = append(checks, struct{ what, laraq, php string }{"cache lock lottery", fmt.Sprint(lottery[:]), fmt.Sprint(php.CacheLottery)},
					struct{ what, laraq, php string }{"cache lock timeout", strconv.Itoa(ttl), strconv.Itoa(*php.CacheLockTTL)})
			}
			for _, ch := range checks {
				if ch.laraq != ch.php {
					t.Errorf("%s: laraq %q, PHP %q", ch.what, ch.laraq, ch.php)
				}
			}
			if t.Failed() {
				t.Logf("laraq: %s\norigins %v\nwarnings %q", c, c.Origins, c.Warnings)
				return
			}

			// What PHP writes with these settings is where laraq looks.
			env := testenv.PHPEnv{Major: a.major, Redis: srv, DB: c.Redis.DB, CacheDB: c.CacheRedis.DB,
				Prefix: deref(php.QueuePrefix), CachePrefix: deref(php.CachePrefix), RetryAfter: c.RetryAfter}
			payload := `{"uuid":"` + testenv.RandomName(8) + `","displayName":"Ping","job":"Ping","data":{},"attempts":0}`
			// The queue PHP's config names (the 8.83 harness's connection has 'default').
			line, _ := json.Marshal(map[string]string{"raw": payload, "queue": deref(php.Queue)})
			env.Run(t, append(line, '\n'), "dispatch.php")
			ctx := context.Background()
			queueKeys := scanKeys(t, ctx, srv, c.Redis.DB, "*queues:*", slug)
			if want := []string{c.Prefix + "queues:" + c.Queue, c.Prefix + "queues:" + c.Queue + ":notify"}; !slices.Equal(queueKeys, want) {
				t.Errorf("PHP pushed to %q, laraq reads %q", queueKeys, want)
			}
			if cp := deref(php.CachePrefixConn); cp != c.Prefix {
				// Cache keys under another connection prefix than the queue's: laraq says it
				// cannot follow (see loadRedis).
				if countWarnings(c, `has the prefix "`+cp+`"`) != 1 {
					t.Errorf("the cache connection's prefix %q is not warned about: %q", cp, c.Warnings)
				}
				return
			}
			if deref(php.CachePrefix) == "" {
				// The harness takes an empty LARAQ_CACHE_PREFIX as unset: the restart key
				// cannot be written under an empty cache prefix there. The prefix itself is
				// compared above.
				return
			}
			env.Run(t, nil, "ops_cache.php", "forever", "illuminate:queue:restart", "1700000000")
			restart := scanKeys(t, ctx, srv, c.CacheRedis.DB, "*illuminate:queue:restart", slug)
			if want := c.CacheScheme().RestartKey(); len(restart) != 1 || restart[0] != want {
				t.Errorf("PHP wrote queue:restart as %q, laraq reads %q", restart, want)
			}
		})
	}
}

// connectionPrefixes gives the queue's Redis connection a 'prefix' and the cache's an
// 'options' => ['prefix'], beside the global one: phpredis before 9.12 ignores the first.
func connectionPrefixes(t *testing.T, app string) map[string]func(string) string {
	return map[string]func(string) string{
		"config/database.php": func(s string) string {
			s = replace(t, "'default' => [\n            'url' => env('REDIS_URL'),", "'default' => [\n            'prefix' => 'own_"+app+":',\n            'url' => env('REDIS_URL'),")(s)
			return replace(t, "'cache' => [\n            'url' => env('REDIS_URL'),", "'cache' => [\n            'options' => ['prefix' => 'opt_"+app+":'],\n            'url' => env('REDIS_URL'),")(s)
		},
	}
}

// scanKeys returns the keys matching pattern on a database that hold marker, sorted, and
// deletes them.
func scanKeys(t *testing.T, ctx context.Context, srv *testenv.Redis, db int, pattern, marker string) []string {
	t.Helper()
	client := srv.Client(t, db)
	var keys []string
	iter := client.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		k := iter.Val()
		if strings.Contains(strings.ReplaceAll(k, "-", "_"), marker) {
			keys = append(keys, k)
		}
	}
	if err := iter.Err(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(keys)
	if len(keys) > 0 {
		client.Del(ctx, keys...)
	}
	return keys
}

// TestFrameworkVersionLines: the VERSION lines under testdata/framework are the peer
// trees' own, and laraq reads each as that release.
func TestFrameworkVersionLines(t *testing.T) {
	dir := testenv.PeersDir(t)
	for tag, tree := range map[string]string{"v10.50.3": "10", "v11.56.0": "11", "v12.67.0": "12", "v13.26.1": "13", "v13.4.0": "13.4"} {
		line, err := os.ReadFile(filepath.Join("testdata", "framework", tag, "VERSION.line"))
		if err != nil {
			t.Fatal(err)
		}
		src, err := os.ReadFile(filepath.Join(dir, "laravel-"+tree, "Illuminate", "Foundation", "Application.php"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(src), string(line)) {
			t.Errorf("%s: %q is not in the peer tree laravel-%s", tag, line, tree)
		}
		root := skeletonApp(t, "laravel-13", withFramework(tag))
		if c := mustLoad(t, App{Root: root}); "v"+c.Release.String() != tag || c.Release.Guessed || c.Origin("Release").Kind != Framework {
			t.Errorf("%s: release %s from %s", tag, c.Release, c.Origin("Release"))
		}
	}
}
