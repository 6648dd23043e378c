package laravel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// skeletonApp copies testdata/skeletons/NAME (laravel/laravel's config files, composer.json,
// artisan and .env.example at a tag; see testdata/README.md) into a fresh directory, with
// .env.example as .env as `composer create-project` leaves it, and edits applied: file →
// function of its content. It returns the application root.
func skeletonApp(t *testing.T, name string, edits map[string]func(string) string) string {
	t.Helper()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(filepath.Join("testdata", "skeletons", name))); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".env"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	for file, edit := range edits {
		p := filepath.Join(root, file)
		old, _ := os.ReadFile(p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(edit(string(old))), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// replace returns an edit replacing old by new, failing the test when old is missing.
func replace(t *testing.T, old, new string) func(string) string {
	return func(s string) string {
		if !strings.Contains(s, old) {
			t.Fatalf("edit: %q not in the file", old)
		}
		return strings.Replace(s, old, new, 1)
	}
}

// withFramework installs the VERSION line of a framework release (testdata/framework) as
// the application's vendor/laravel/framework.
func withFramework(tag string) map[string]func(string) string {
	return map[string]func(string) string{
		"vendor/laravel/framework/src/Illuminate/Foundation/Application.php": func(string) string {
			line, err := os.ReadFile(filepath.Join("testdata", "framework", tag, "VERSION.line"))
			if err != nil {
				panic(err)
			}
			return "<?php\n\nnamespace Illuminate\\Foundation;\n\nclass Application\n{\n" + string(line) + "}\n"
		},
	}
}

type skeletonWant struct {
	release  string // Release.String()
	prefix   string
	cache    string // cache prefix
	sep      bool   // ":" after the cache prefix
	store    string // the cache store
	failed   string // FailedDatabase, ROOT for the application root
	timezone string
}

// TestSkeletonDefaults loads each skeleton as created, given nothing but its .env (no
// flag, no root): the .env's directory is the application root, so its config files and
// composer.json decide, and the result is what the real skeleton gives PHP (the peers
// check the same values in TestConfigMatchesPHP).
func TestSkeletonDefaults(t *testing.T) {
	for _, tc := range []struct {
		name string
		want skeletonWant
	}{
		{"laravel-8", skeletonWant{"8.x (guessed)", "laravel_database_", "laravel_cache", true, "file", "mysql://root@127.0.0.1:3306/laravel", "UTC"}},
		{"laravel-9", skeletonWant{"9.x (guessed)", "laravel_database_", "laravel_cache_", true, "file", "mysql://root@127.0.0.1:3306/laravel", "UTC"}},
		{"laravel-10", skeletonWant{"10.x (guessed)", "laravel_database_", "laravel_cache_", true, "file", "mysql://root@127.0.0.1:3306/laravel", "UTC"}},
		// 11.x's .env.example sets CACHE_PREFIX= (empty), which env() returns as "".
		{"laravel-11", skeletonWant{"11.x (guessed)", "laravel_database_", "", false, "database", "sqlite:ROOT/database/database.sqlite", "UTC"}},
		{"laravel-12.0", skeletonWant{"12.x (guessed)", "laravel_database_", "laravel_cache_", false, "database", "sqlite:ROOT/database/database.sqlite", "UTC"}},
		{"laravel-12", skeletonWant{"12.x (guessed)", "laravel-database-", "laravel-cache-", false, "database", "sqlite:ROOT/database/database.sqlite", "UTC"}},
		{"laravel-13", skeletonWant{"13.x (guessed)", "laravel-database-", "laravel-cache-", false, "database", "sqlite:ROOT/database/database.sqlite", "UTC"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := skeletonApp(t, tc.name, nil)
			c := mustLoad(t, App{EnvFile: filepath.Join(root, ".env")})
			checkSkeleton(t, c, root, tc.want)
			if o := c.Origin("Root"); o.Kind != EnvDir || c.Root != root {
				t.Errorf("root %q from %s", c.Root, o)
			}
			if o := c.Origin("Release"); o.Kind != AppFiles || !strings.Contains(o.Name, "composer.json requires laravel/framework ^") {
				t.Errorf("release origin %s", o)
			}
			if o := c.Origin("Prefix"); o.Kind != ConfigFile || !strings.HasPrefix(o.String(), "config/database.php:") {
				t.Errorf("prefix origin %s", o)
			}
			if c.RetryAfter != 90 || c.Queue != "default" || c.BlockFor != nil || c.AfterCommit || c.Cipher != "AES-256-CBC" ||
				c.FailedDriver != "database-uuids" || c.FailedTable != "failed_jobs" || c.Redis.DB != 0 || c.CacheRedis.DB != 1 {
				t.Errorf("retry %d queue %q block %v commit %v cipher %q failed %q %q dbs %d %d", c.RetryAfter, c.Queue, c.BlockFor,
					c.AfterCommit, c.Cipher, c.FailedDriver, c.FailedTable, c.Redis.DB, c.CacheRedis.DB)
			}
			// Only the skeleton's own choices are warned about (QUEUE_CONNECTION, the cache
			// store): nothing of the config files is unreadable.
			for _, w := range c.Warnings {
				if !strings.HasPrefix(w, "QUEUE_CONNECTION is") && !strings.HasPrefix(w, "the application's cache store is") {
					t.Errorf("warning %q", w)
				}
			}

			// Without composer.json, the config files' forms alone say which skeleton: 9.x's
			// are 10.x's, and 13.x's those of 12.x from v12.1.0.
			if err := os.Remove(filepath.Join(root, "composer.json")); err != nil {
				t.Fatal(err)
			}
			c = mustLoad(t, App{Root: root})
			alone := map[string]string{"laravel-8": "8.x", "laravel-9": "10.x", "laravel-10": "10.x", "laravel-11": "11.x",
				"laravel-12.0": "12.x", "laravel-12": "12.x", "laravel-13": "12.x"}[tc.name] + " (guessed)"
			if c.Origin("Release").Kind != AppFiles || c.Release.String() != alone {
				t.Errorf("from the config files alone: release %s from %s, want %s", c.Release, c.Origin("Release"), alone)
			}
			checkSkeleton(t, c, root, skeletonWant{c.Release.String(), tc.want.prefix, tc.want.cache, tc.want.sep, tc.want.store, tc.want.failed, tc.want.timezone})
		})
	}
}

func checkSkeleton(t *testing.T, c *Config, root string, want skeletonWant) {
	t.Helper()
	failed := strings.ReplaceAll(want.failed, "ROOT", root)
	if c.Release.String() != want.release || c.Prefix != want.prefix || c.CachePrefix != want.cache ||
		c.CacheScheme().Separator != want.sep || c.CacheStore != want.store || c.FailedDatabase != failed || c.Timezone != want.timezone {
		t.Errorf("got release %s prefix %q cache %q sep %v store %q failed %q tz %q\nwant %+v (failed %q)",
			c.Release, c.Prefix, c.CachePrefix, c.CacheScheme().Separator, c.CacheStore, c.FailedDatabase, c.Timezone, want, failed)
	}
}

// TestSkeletonEnvAlone: the same .env files outside an application directory. Nothing
// but their keys is left to go by, and the 11.x, 12.x and 13.x ones are the same: the
// release is a guess, said so, and the prefix is the guessed skeleton's.
func TestSkeletonEnvAlone(t *testing.T) {
	for _, tc := range []struct {
		name    string
		release string
		prefix  string
		cache   string
	}{
		{"laravel-8", "8.x (guessed)", "laravel_database_", "laravel_cache"},
		{"laravel-10", "10.x (guessed)", "laravel_database_", "laravel_cache_"},
		{"laravel-11", "11.x (guessed)", "laravel_database_", ""},
		{"laravel-12.0", "11.x (guessed)", "laravel_database_", "laravel_cache_"},
		{"laravel-13", "11.x (guessed)", "laravel_database_", "laravel_cache_"}, // PHP: laravel-database-
	} {
		dir := t.TempDir()
		b, err := os.ReadFile(filepath.Join("testdata", "skeletons", tc.name, ".env.example"))
		if err != nil {
			t.Fatal(err)
		}
		env := filepath.Join(dir, ".env")
		if err := os.WriteFile(env, b, 0o600); err != nil {
			t.Fatal(err)
		}
		c := mustLoad(t, App{EnvFile: env})
		if c.Release.String() != tc.release || c.Origin("Release").Kind != Inferred || c.Prefix != tc.prefix || c.CachePrefix != tc.cache || c.Root != "" {
			t.Errorf("%s: release %s from %s, prefix %q cache %q root %q", tc.name, c.Release, c.Origin("Release"), c.Prefix, c.CachePrefix, c.Root)
		}
		// database_path() is the .env's directory's database/, where Laravel's root is.
		if strings.Contains(tc.release, "11") && c.FailedDatabase != "sqlite:"+filepath.Join(dir, "database", "database.sqlite") {
			t.Errorf("%s: failed database %q", tc.name, c.FailedDatabase)
		}
	}
}

// TestFrameworkRelease reads the installed framework's release from each place Composer
// and the framework keep it.
func TestFrameworkRelease(t *testing.T) {
	lock := `{"packages": [{"name": "laravel/prompts", "version": "v0.3.5"}, {"name": "laravel/framework", "version": "v12.51.0", "source": {}}]}`
	for _, tc := range []struct {
		name  string
		files map[string]string
		want  string
		from  string
	}{
		{"Application.php", map[string]string{"vendor/laravel/framework/src/Illuminate/Foundation/Application.php": "<?php\nclass Application\n{\n    const VERSION = '12.67.0';\n}\n"},
			"12.67.0", "Application.php"},
		{"installed.json, Composer 2", map[string]string{"vendor/composer/installed.json": `{"packages": [{"name": "laravel/framework", "version": "v13.26.1", "version_normalized": "13.26.1.0"}], "dev": true}`},
			"13.26.1", "installed.json"},
		{"installed.json, Composer 1", map[string]string{"vendor/composer/installed.json": ` [{"name": "laravel/framework", "version": "v8.83.27"}]`},
			"8.83.27", "installed.json"},
		{"a branch install", map[string]string{"vendor/composer/installed.json": `{"packages": [{"name": "laravel/framework", "version": "12.x-dev", "version_normalized": "12.9999999.9999999.9999999-dev"}]}`},
			"12.9999999.9999999", "installed.json"},
		{"composer.lock", map[string]string{"composer.lock": lock}, "12.51.0", "composer.lock"},
		{"Application.php before composer.lock", map[string]string{"composer.lock": lock,
			"vendor/laravel/framework/src/Illuminate/Foundation/Application.php": "const VERSION = '12.52.1';"}, "12.52.1", "Application.php"},
		{"a broken installed.json falls back to composer.lock", map[string]string{"composer.lock": lock, "vendor/composer/installed.json": `{"packages": [`},
			"12.51.0", "composer.lock"},
		{"composer.json's requirement is a guess", map[string]string{"composer.json": `{"require": {"php": "^8.2", "laravel/framework": "^11.0|^12.0"}}`},
			"12.x (guessed)", "composer.json requires laravel/framework ^11.0|^12.0"},
	} {
		root := t.TempDir()
		for name, content := range tc.files {
			p := filepath.Join(root, filepath.FromSlash(name))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		c := mustLoad(t, App{Root: root})
		if c.Release.String() != tc.want || !strings.Contains(c.Origin("Release").String(), tc.from) {
			t.Errorf("%s: release %s from %s, want %s from %s", tc.name, c.Release, c.Origin("Release"), tc.want, tc.from)
		}
	}
}
