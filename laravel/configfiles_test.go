package laravel

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestCustomisedConfigFiles: what an application changed in its config files is what
// PHP uses, whatever .env says, and what laraq cannot evaluate is said, by file, key and
// expression, with the skeleton's value in its place.
func TestCustomisedConfigFiles(t *testing.T) {
	type edits = map[string]func(string) string
	skeletonPrefix := "'prefix' => env('REDIS_PREFIX', Str::slug((string) env('APP_NAME', 'laravel')).'-database-'),"
	for _, tc := range []struct {
		name     string
		skeleton string
		edits    edits
		app      App
		check    func(t *testing.T, c *Config)
		warnings []string // substrings, one warning each, in order
	}{
		{
			name: "a literal prefix beats REDIS_PREFIX in .env", skeleton: "laravel-13",
			edits: edits{
				"config/database.php": replace(t, skeletonPrefix, "'prefix' => 'shop_live:',"),
				".env":                func(s string) string { return s + "REDIS_PREFIX=shop_database_\n" },
			},
			check: func(t *testing.T, c *Config) {
				if c.Prefix != "shop_live:" || c.Origin("Prefix").String() != "config/database.php:151" {
					t.Errorf("prefix %q from %s", c.Prefix, c.Origin("Prefix"))
				}
			},
			warnings: []string{"), but config/database.php:151 does not read it: database.redis.options.prefix is 'shop_live:' there, and PHP uses that"},
		},
		{
			name: "a literal retry_after beats REDIS_QUEUE_RETRY_AFTER", skeleton: "laravel-8",
			edits: edits{
				"config/queue.php": replace(t, "'queue' => env('REDIS_QUEUE', 'default'),\n            'retry_after' => 90,",
					"'queue' => env('REDIS_QUEUE', 'default'),\n            'retry_after' => 300,"),
				".env": func(s string) string { return s + "REDIS_QUEUE_RETRY_AFTER=600\n" },
			},
			check: func(t *testing.T, c *Config) {
				if c.RetryAfter != 300 || !strings.HasPrefix(c.Origin("RetryAfter").String(), "config/queue.php:") {
					t.Errorf("retry_after %d from %s", c.RetryAfter, c.Origin("RetryAfter"))
				}
			},
			warnings: []string{"REDIS_QUEUE_RETRY_AFTER is set ("},
		},
		{
			name: "retry_after read from .env through the 11+ config", skeleton: "laravel-12",
			edits: edits{".env": func(s string) string { return s + "REDIS_QUEUE_RETRY_AFTER=600\nREDIS_QUEUE=emails\n" }},
			check: func(t *testing.T, c *Config) {
				if c.RetryAfter != 600 || c.Origin("RetryAfter").Kind != DotEnv || c.Queue != "emails" {
					t.Errorf("retry_after %d from %s, queue %q", c.RetryAfter, c.Origin("RetryAfter"), c.Queue)
				}
			},
		},
		{
			name: "an expression laraq cannot evaluate", skeleton: "laravel-12",
			edits: edits{
				"config/database.php": replace(t, skeletonPrefix, "'prefix' => getenv('SHOP_PREFIX') ?: 'shop:',"),
				"config/queue.php": replace(t, "'retry_after' => (int) env('REDIS_QUEUE_RETRY_AFTER', 90),\n            'block_for' => null,",
					"'retry_after' => (int) env('REDIS_QUEUE_RETRY_AFTER', 60 * 5),\n            'block_for' => 5,"),
			},
			check: func(t *testing.T, c *Config) {
				if c.Prefix != "laravel-database-" || c.Origin("Prefix").Kind != Default {
					t.Errorf("prefix %q from %s", c.Prefix, c.Origin("Prefix"))
				}
				// env()'s default is only evaluated when the variable is unset.
				if c.RetryAfter != 90 || c.BlockFor == nil || *c.BlockFor != 5 || *c.QueueConnection().BlockFor != 5*time.Second {
					t.Errorf("retry_after %d block_for %v", c.RetryAfter, c.BlockFor)
				}
			},
			warnings: []string{
				"config/queue.php:71: queue.connections.redis.retry_after is `(int) env('REDIS_QUEUE_RETRY_AFTER', 60 * 5)`, which laraq cannot evaluate (cannot evaluate 60 * 5); laraq uses the 12.1+ skeleton's value 90 instead; set LARAQ_REDIS_QUEUE_RETRY_AFTER to the value PHP uses",
				"config/database.php:151: database.redis.options.prefix is `getenv('SHOP_PREFIX') ?: 'shop:'`, which laraq cannot evaluate (cannot evaluate getenv('SHOP_PREFIX') ?: 'shop:'); laraq uses the 12.1+ skeleton's value 'laravel-database-' instead; set LARAQ_REDIS_PREFIX to the value PHP uses",
			},
		},
		{
			name: "the unevaluable expression is overridden", skeleton: "laravel-12",
			edits: edits{"config/database.php": replace(t, skeletonPrefix, "'prefix' => getenv('SHOP_PREFIX') ?: 'shop:',")},
			app:   App{Flags: map[string]string{"LARAQ_REDIS_PREFIX": "shop:"}},
			check: func(t *testing.T, c *Config) {
				if c.Prefix != "shop:" || c.Origin("Prefix").Kind != Flag {
					t.Errorf("prefix %q from %s", c.Prefix, c.Origin("Prefix"))
				}
			},
		},
		{
			name: "per-connection prefixes", skeleton: "laravel-11",
			edits: edits{"config/database.php": replace(t, "'default' => [\n            'url' => env('REDIS_URL'),",
				"'default' => [\n            'prefix' => 'q:',\n            'url' => env('REDIS_URL'),")},
			check: func(t *testing.T, c *Config) {
				if c.Prefix != "q:" {
					t.Errorf("prefix %q", c.Prefix)
				}
			},
			warnings: []string{`the cache connection "cache" has the prefix "laravel_database_"`},
		},
		{
			name: "the cache on the default connection, a store of another name", skeleton: "laravel-12",
			edits: edits{
				".env": func(s string) string {
					return strings.Replace(s, "CACHE_STORE=database", "CACHE_STORE=shared", 1) + "REDIS_CACHE_CONNECTION=default\nREDIS_DB=4\n"
				},
				"config/cache.php": replace(t, "'stores' => [", "'stores' => [\n        'shared' => ['driver' => 'redis', 'connection' => env('REDIS_CACHE_CONNECTION', 'cache'), 'prefix' => 'shared-'],"),
			},
			check: func(t *testing.T, c *Config) {
				if c.CacheStore != "shared" || c.CacheConnection != "default" || c.CacheRedis.DB != 4 || c.Redis.DB != 4 || c.CachePrefix != "shared-" {
					t.Errorf("store %q connection %q dbs %d %d prefix %q", c.CacheStore, c.CacheConnection, c.Redis.DB, c.CacheRedis.DB, c.CachePrefix)
				}
			},
			warnings: []string{"QUEUE_CONNECTION is"},
		},
		{
			name: "a cached configuration is all PHP reads", skeleton: "laravel-13",
			edits: edits{"bootstrap/cache/config.php": func(string) string {
				return "<?php return array (\n  'database' => \n  array (\n    'redis' => \n    array (\n      'options' => \n      array (\n        'prefix' => 'cached_',\n      ),\n" +
					"      'default' => \n      array (\n        'host' => '10.0.0.7',\n        'port' => '6379',\n        'database' => '2',\n      ),\n    ),\n  ),\n" +
					"  'queue' => \n  array (\n    'connections' => \n    array (\n      'redis' => \n      array (\n        'driver' => 'redis',\n        'queue' => 'cached',\n        'retry_after' => 120,\n      ),\n    ),\n  ),\n);\n"
			}},
			check: func(t *testing.T, c *Config) {
				if c.Prefix != "cached_" || c.Queue != "cached" || c.RetryAfter != 120 || c.Redis.Addrs[0] != "10.0.0.7:6379" || c.Redis.DB != 2 ||
					c.Origin("Prefix").String() != "bootstrap/cache/config.php:8" {
					t.Errorf("prefix %q from %s queue %q retry %d redis %s", c.Prefix, c.Origin("Prefix"), c.Queue, c.RetryAfter, c.Redis)
				}
			},
			// .env is not read, but a stale value there is worth a word.
			warnings: []string{"bootstrap/cache/config.php exists", "REDIS_HOST is set ("},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := skeletonApp(t, tc.skeleton, tc.edits)
			src := tc.app
			src.EnvFile = filepath.Join(root, ".env")
			c := mustLoad(t, src)
			tc.check(t, c)
			var got []string
			for _, w := range c.Warnings {
				if !strings.HasPrefix(w, "the application's cache store is") && (tc.name == "the cache on the default connection, a store of another name" || !strings.HasPrefix(w, "QUEUE_CONNECTION is")) {
					got = append(got, w)
				}
			}
			if len(got) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %d", got, len(tc.warnings))
			}
			for i, w := range tc.warnings {
				if !strings.Contains(got[i], w) {
					t.Errorf("warning %q does not say %q", got[i], w)
				}
			}
		})
	}
}

// TestFrameworkConfigBase: an 11+ application may leave config files out; Laravel then
// merges in the framework's own (vendor/laravel/framework/config), whose 12.x prefixes
// keep the underscores. laraq reads them when installed, else knows them per major.
func TestFrameworkConfigBase(t *testing.T) {
	for _, tc := range []struct {
		tag, prefix, cache string
		sep                bool
	}{
		{"v11.56.0", "my_shop_database_", "my_shop_cache_", false},
		{"v12.67.0", "my_shop_database_", "my_shop_cache_", false},
		{"v13.26.1", "my-shop-database-", "my-shop-cache-", false},
	} {
		for _, installed := range []bool{true, false} {
			root := t.TempDir()
			files := withFramework(tc.tag)
			if installed {
				for _, f := range []string{"app", "cache", "database", "queue"} {
					b, err := os.ReadFile(filepath.Join("testdata", "framework", tc.tag, "config", f+".php"))
					if err != nil {
						t.Fatal(err)
					}
					files["vendor/laravel/framework/config/"+f+".php"] = func(string) string { return string(b) }
				}
			}
			files[".env"] = func(string) string { return "APP_NAME=\"My Shop\"\nDB_CONNECTION=sqlite\n" }
			files["artisan"] = func(string) string { return "" }
			// The application keeps its config/queue.php, with a connection of its own; the
			// framework's redis connection is merged in beside it.
			files["config/queue.php"] = func(string) string {
				return "<?php return ['connections' => ['sqs' => ['driver' => 'sqs']], 'failed' => ['driver' => 'database-uuids', 'database' => 'sqlite', 'table' => 'failed']];"
			}
			for name, f := range files {
				p := filepath.Join(root, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(f("")), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			c := mustLoad(t, App{EnvFile: filepath.Join(root, ".env")})
			if c.Prefix != tc.prefix || c.CachePrefix != tc.cache || c.RetryAfter != 90 || c.Queue != "default" || c.FailedTable != "failed" ||
				c.FailedDatabase != "sqlite:"+filepath.Join(root, "database", "database.sqlite") {
				t.Errorf("%s (installed %v): prefix %q cache %q retry %d queue %q table %q failed %q", tc.tag, installed, c.Prefix, c.CachePrefix, c.RetryAfter, c.Queue, c.FailedTable, c.FailedDatabase)
			}
			wantFile := "the 12.x"
			if installed {
				wantFile = "vendor/laravel/framework/config/database.php"
			}
			if o := c.Origin("Prefix"); installed && o.String() == "" || !installed && o.Kind != Default {
				t.Errorf("%s (installed %v): prefix origin %s (%s)", tc.tag, installed, o, wantFile)
			}
			if len(c.Warnings) != 0 {
				t.Errorf("%s (installed %v): warnings %q", tc.tag, installed, c.Warnings)
			}
		}
	}
}

// TestSQLiteDefaultPath: DB_CONNECTION=sqlite without DB_DATABASE is the application's
// database/database.sqlite, also when laraq is given only the .env (its directory is the
// root), never laraq's own file.
func TestSQLiteDefaultPath(t *testing.T) {
	dir := t.TempDir()
	env := filepath.Join(dir, ".env")
	if err := os.WriteFile(env, []byte("APP_NAME=Shop\nDB_CONNECTION=sqlite\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"8", "11", "13"} {
		c := mustLoad(t, App{EnvFile: env, Flags: map[string]string{"LARAQ_LARAVEL_VERSION": rel}})
		want := "sqlite:" + filepath.Join(dir, "database", "database.sqlite")
		dsn, local, err := c.FailedStore()
		if c.FailedDatabase != want || dsn != want || local || err != nil {
			t.Errorf("Laravel %s: FailedDatabase %q, store %q local %v %v; want %q", rel, c.FailedDatabase, dsn, local, err, want)
		}
	}
}

// TestRedisURLDatabaseWarning: a database in laraq's own Redis URL (--redis) moves the
// cache connection too, as Laravel does with REDIS_URL; when that is not where the
// application keeps its cache, Load says so.
func TestRedisURLDatabaseWarning(t *testing.T) {
	flag := map[string]string{"LARAQ_REDIS_URL": "redis://10.0.0.9:6379/5"}
	for _, tc := range []struct {
		name     string
		env      string
		src      App
		queue    int
		cache    int
		warnings string // "" for none
	}{
		{"REDIS_CACHE_DB named", "APP_NAME=Shop\nREDIS_CACHE_DB=2\n", App{Flags: flag}, 5, 5,
			`flag LARAQ_REDIS_URL names database 5: as Laravel does with a REDIS_URL, laraq uses it for the cache connection too, but the application's cache connection "cache" is on database 2 (`},
		{"the skeleton's cache database", "APP_NAME=Shop\n", App{Flags: flag}, 5, 5, `is on database 1 (default)`},
		{"from LARAQ_REDIS_URL", "APP_NAME=Shop\n", App{LookupEnv: env("LARAQ_REDIS_URL", "redis://h/3")}, 3, 3, `environment LARAQ_REDIS_URL names database 3`},
		{"kept with LARAQ_REDIS_CACHE_DB", "APP_NAME=Shop\n", App{Flags: map[string]string{"LARAQ_REDIS_URL": "redis://h/5", "LARAQ_REDIS_CACHE_DB": "1"}}, 5, 1, ""},
		{"the cache on the queue's connection", "APP_NAME=Shop\nREDIS_CACHE_CONNECTION=default\n", App{Flags: flag, Release: majorRelease(11)}, 5, 5, ""},
		{"the application's own REDIS_URL", "APP_NAME=Shop\nREDIS_URL=redis://h/5\n", App{}, 5, 5, ""},
		{"no database in the URL", "APP_NAME=Shop\nREDIS_CACHE_DB=2\n", App{Flags: map[string]string{"LARAQ_REDIS_URL": "redis://h:1"}}, 0, 2, ""},
		{"the same database", "APP_NAME=Shop\nREDIS_CACHE_DB=5\n", App{Flags: flag}, 5, 5, ""},
	} {
		src := tc.src
		src.EnvFile = writeEnv(t, tc.env)
		c := mustLoad(t, src)
		joined := strings.Join(c.Warnings, "\n")
		if c.Redis.DB != tc.queue || c.CacheRedis.DB != tc.cache || (tc.warnings == "") != (joined == "") || !strings.Contains(joined, tc.warnings) {
			t.Errorf("%s: databases %d %d, warnings %q; want %d %d, %q", tc.name, c.Redis.DB, c.CacheRedis.DB, c.Warnings, tc.queue, tc.cache, tc.warnings)
		}
	}
}

// TestUnreadableConfig: a config file that does not parse, or a level laraq cannot
// follow, is one warning, not one per key, and the skeleton's values stand in.
func TestUnreadableConfig(t *testing.T) {
	root := skeletonApp(t, "laravel-13", map[string]func(string) string{
		"config/database.php": func(string) string { return "<?php return ['redis' => ['options' => ['prefix' => 'x\n" },
	})
	c := mustLoad(t, App{Root: root})
	if c.Prefix != "laravel-database-" || c.Redis.DB != 0 || c.CacheRedis.DB != 1 {
		t.Errorf("prefix %q dbs %d %d", c.Prefix, c.Redis.DB, c.CacheRedis.DB)
	}
	if n := countWarnings(c, "config/database.php cannot be read (line 1: unterminated string)"); n != 1 {
		t.Errorf("warnings %q", c.Warnings)
	}

	root = skeletonApp(t, "laravel-13", map[string]func(string) string{
		"config/database.php": replace(t, "'redis' => [", "'redis' => array_merge($shared, ["),
	})
	root2 := filepath.Join(root, "config", "database.php")
	b, _ := os.ReadFile(root2)
	// close the array_merge( … ) the edit opened: the redis array ends the file's array
	s := strings.Replace(string(b), "\n    ],\n\n];", "\n    ]),\n\n];", 1)
	if err := os.WriteFile(root2, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
	c = mustLoad(t, App{Root: root})
	if c.Prefix != "laravel-database-" {
		t.Errorf("prefix %q", c.Prefix)
	}
	if n := countWarnings(c, "config/database.php: database.redis."); n != 1 || countWarnings(c, "database.redis is not an array literal") != 1 {
		t.Errorf("warnings %q", c.Warnings)
	}
}

func countWarnings(c *Config, sub string) int {
	n := 0
	for _, w := range c.Warnings {
		if strings.Contains(w, sub) {
			n++
		}
	}
	return n
}

var blockComment = regexp.MustCompile(`(?s)/\*.*?\*/\s*`)

// FuzzLoadConfigFiles loads an application whose config files are arbitrary bytes:
// Load may warn, or fail with an error naming a setting, but never panics.
func FuzzLoadConfigFiles(f *testing.F) {
	for _, file := range []string{"database", "cache", "queue", "app"} {
		b, err := os.ReadFile(filepath.Join("testdata", "skeletons", "laravel-12", "config", file+".php"))
		if err != nil {
			f.Fatal(err)
		}
		// Without the comments: small seeds keep the fuzzer's minimizing short.
		f.Add(file, blockComment.ReplaceAllString(string(b), ""))
	}
	f.Add("database", "<?php return ['redis' => ['client' => 'phpredis', 'default' => ['prefix' => null, 'options' => ['prefix' => 5], 'port' => 'x']]];")
	f.Add("queue", "<?php return ['connections' => ['redis' => ['block_for' => '', 'retry_after' => (int) '1e3']], 'failed' => ['driver' => null]];")
	f.Add("cache", "<?php return ['default' => 'r', 'stores' => ['r' => ['driver' => 'redis', 'connection' => 'cache', 'prefix' => false]]];")
	root := f.TempDir()
	if err := os.WriteFile(filepath.Join(root, "artisan"), nil, 0o644); err != nil {
		f.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "config"), 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, file, src string) {
		if !slices.Contains([]string{"database", "cache", "queue", "app"}, file) {
			return
		}
		p := filepath.Join(root, "config", file+".php")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(p)
		c, err := Load(App{Root: root, LookupEnv: env("APP_NAME", "Fuzz")})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config: ") {
				t.Fatalf("error without context: %v", err)
			}
			return
		}
		_ = c.String()
	})
}

// TestConnectionName: LARAQ_CONNECTION names the queue connection of config/queue.php
// whose settings laraq uses (and which failed jobs and pause keys carry).
func TestConnectionName(t *testing.T) {
	root := skeletonApp(t, "laravel-12", map[string]func(string) string{
		"config/queue.php": replace(t, "'connections' => [", "'connections' => [\n        'redis-high' => ['driver' => 'redis', 'connection' => 'default', 'queue' => 'high', 'retry_after' => 30],"),
	})
	c := mustLoad(t, App{Root: root, LookupEnv: env("LARAQ_CONNECTION", "redis-high")})
	if c.Connection != "redis-high" || c.Queue != "high" || c.RetryAfter != 30 || c.QueueConnection().Name != "redis-high" {
		t.Errorf("connection %q queue %q retry_after %d", c.Connection, c.Queue, c.RetryAfter)
	}
	// A connection the application does not have is said to be missing.
	c = mustLoad(t, App{Root: root, LookupEnv: env("LARAQ_CONNECTION", "nope")})
	if countWarnings(c, `config/queue.php has no queue connection "nope"`) != 1 || c.RetryAfter != 60 {
		t.Errorf("missing connection: retry_after %d warnings %q", c.RetryAfter, c.Warnings)
	}
	// Without config files, the skeleton's redis connection stands for it.
	c = mustLoad(t, App{LookupEnv: env("LARAQ_CONNECTION", "redis-high", "REDIS_QUEUE", "emails")})
	if c.Connection != "redis-high" || c.Queue != "emails" || c.RetryAfter != 90 {
		t.Errorf("no files: connection %q queue %q retry_after %d", c.Connection, c.Queue, c.RetryAfter)
	}
}
