package laravel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrefixNeedsApplication: the connection prefix is derived from APP_NAME only when
// something names an application; otherwise keys carry no prefix.
func TestPrefixNeedsApplication(t *testing.T) {
	appEnv := writeEnv(t, "REDIS_HOST=127.0.0.1\n") // an application without APP_NAME
	shopEnv := writeEnv(t, "APP_NAME=Shop\n")
	for _, tc := range []struct {
		name           string
		src            App
		prefix, origin string
		restart        string
	}{
		{"nothing", App{}, "", Origin{Kind: NoApplication}.String(), "laravel_cache_illuminate:queue:restart"},
		{"redis settings only", App{LookupEnv: env("REDIS_HOST", "10.0.0.1", "REDIS_PORT", "6390")}, "", Origin{Kind: NoApplication}.String(),
			"laravel_cache_illuminate:queue:restart"},
		{"version only", App{LookupEnv: env("LARAQ_LARAVEL_VERSION", "8")}, "", Origin{Kind: NoApplication}.String(),
			"laravel_cache:illuminate:queue:restart"},
		{"APP_NAME in the environment", App{LookupEnv: env("APP_NAME", "Shop")}, "shop_database_", "default",
			"shop_database_shop_cache_illuminate:queue:restart"},
		{"LARAQ_APP_NAME", App{LookupEnv: env("LARAQ_APP_NAME", "Shop")}, "shop_database_", "default",
			"shop_database_shop_cache_illuminate:queue:restart"},
		{"REDIS_PREFIX in the environment", App{LookupEnv: env("REDIS_PREFIX", "p:")}, "p:", "environment REDIS_PREFIX",
			"p:laravel_cache_illuminate:queue:restart"},
		{".env without APP_NAME", App{EnvFile: appEnv}, "laravel_database_", "default",
			"laravel_database_laravel_cache_illuminate:queue:restart"},
		{"LARAQ_ENV_FILE", App{LookupEnv: env("LARAQ_ENV_FILE", shopEnv)}, "shop_database_", "default",
			"shop_database_shop_cache_illuminate:queue:restart"},
		{"flag prefix empty beats .env", App{EnvFile: shopEnv, Flags: map[string]string{"LARAQ_REDIS_PREFIX": ""}}, "",
			"flag LARAQ_REDIS_PREFIX", "shop_cache_illuminate:queue:restart"},
		{"LARAQ_REDIS_PREFIX empty beats APP_NAME", App{LookupEnv: env("APP_NAME", "Shop", "LARAQ_REDIS_PREFIX", "")}, "",
			"environment LARAQ_REDIS_PREFIX", "shop_cache_illuminate:queue:restart"},
		{"Laravel root", App{Root: "testdata/app8"}, "acme_shop_database_", "config/database.php:126",
			"acme_shop_database_acme_shop_cache:illuminate:queue:restart"},
	} {
		c := mustLoad(t, tc.src)
		if c.Prefix != tc.prefix || c.Origins["Prefix"].String() != tc.origin || c.CacheScheme().RestartKey() != tc.restart {
			t.Errorf("%s: prefix %q from %q, restart %q; want %q from %q, %q", tc.name,
				c.Prefix, c.Origins["Prefix"].String(), c.CacheScheme().RestartKey(), tc.prefix, tc.origin, tc.restart)
		}
	}
	// A Laravel root without .env or config files still names an application.
	c := mustLoad(t, App{Root: t.TempDir(), Release: majorRelease(8)})
	if c.Prefix != "laravel_database_" {
		t.Errorf("bare Laravel root: prefix %q", c.Prefix)
	}
}

// TestInferVersion reads the .env files of each skeleton (their .env.example) and checks
// the version guessed from their keys and the cache keys that follow.
func TestInferVersion(t *testing.T) {
	for _, tc := range []struct {
		file     string
		version  int
		evidence string
		restart  string
		store    string // CacheStore: the variable of that version was read
	}{
		{"laravel8.env", 8, "CACHE_DRIVER, BROADCAST_DRIVER, FILESYSTEM_DRIVER, MIX_PUSHER_APP_KEY",
			"laravel_database_laravel_cache:illuminate:queue:restart", "file"},
		{"laravel9.env", 9, "CACHE_DRIVER, BROADCAST_DRIVER, FILESYSTEM_DISK, MIX_PUSHER_APP_KEY",
			"laravel_database_laravel_cache_:illuminate:queue:restart", "file"},
		{"laravel10.env", 10, "CACHE_DRIVER, BROADCAST_DRIVER, FILESYSTEM_DISK, VITE_APP_NAME",
			"laravel_database_laravel_cache_:illuminate:queue:restart", "file"},
		// 11.x's .env.example sets CACHE_PREFIX= (empty): no cache prefix at all.
		{"laravel11.env", 11, "CACHE_STORE, BROADCAST_CONNECTION, APP_MAINTENANCE_DRIVER",
			"laravel_database_illuminate:queue:restart", "database"},
	} {
		c := mustLoad(t, App{EnvFile: filepath.Join("testdata", "skeleton", tc.file)})
		origin := "inferred from .env keys " + tc.evidence
		if c.major() != tc.version || c.Origins["Release"].String() != origin {
			t.Errorf("%s: version %d from %q, want %d from %q", tc.file, c.major(), c.Origins["Release"].String(), tc.version, origin)
		}
		if got := c.CacheScheme().RestartKey(); got != tc.restart || c.CacheStore != tc.store {
			t.Errorf("%s: restart key %q store %q, want %q %q", tc.file, got, c.CacheStore, tc.restart, tc.store)
		}
		// An explicit version wins over the guess, whichever way it is given.
		for _, src := range []App{
			{EnvFile: filepath.Join("testdata", "skeleton", tc.file), Release: majorRelease(12)},
			{EnvFile: filepath.Join("testdata", "skeleton", tc.file), Flags: map[string]string{"LARAQ_LARAVEL_VERSION": "12"}},
			{EnvFile: filepath.Join("testdata", "skeleton", tc.file), LookupEnv: env("LARAQ_LARAVEL_VERSION", "12.3")},
		} {
			if c := mustLoad(t, src); c.major() != 12 || strings.HasPrefix(c.Origins["Release"].String(), "inferred from .env keys ") {
				t.Errorf("%s: explicit 12 gave %d from %q", tc.file, c.major(), c.Origins["Release"].String())
			}
		}
	}

	// The installed framework wins over the keys of the .env.
	root := t.TempDir()
	appPHP := filepath.Join(root, "vendor", "laravel", "framework", "src", "Illuminate", "Foundation", "Application.php")
	skel, err := os.ReadFile(filepath.Join("testdata", "skeleton", "laravel8.env"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(appPHP), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(appPHP, []byte("<?php\nclass Application {\n    const VERSION = '10.48.4';\n}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, ".env"), skel, 0o600); err != nil {
		t.Fatal(err)
	}
	if c := mustLoad(t, App{Root: root}); c.major() != 10 || c.Origins["Release"].String() != appPHP {
		t.Errorf("framework 10 under an 8 .env: %d from %q", c.major(), c.Origins["Release"].String())
	}

	// A key the environment overrides still tells the skeleton apart.
	c := mustLoad(t, App{EnvFile: writeEnv(t, "CACHE_DRIVER=file\nMIX_APP_URL=\"${APP_URL}\"\n"), LookupEnv: env("CACHE_DRIVER", "redis")})
	if c.major() != 8 || c.Origins["Release"].String() != "inferred from .env keys "+"CACHE_DRIVER, MIX_APP_URL" || c.CacheStore != "redis" {
		t.Errorf("overridden key: %d from %q, store %q", c.major(), c.Origins["Release"].String(), c.CacheStore)
	}
	// No .env, or one without telling keys: the default, recorded as such.
	for _, src := range []App{{}, {EnvFile: writeEnv(t, "APP_NAME=Shop\nREDIS_HOST=redis\n")}} {
		if c := mustLoad(t, src); c.major() != DefaultRelease.Major || c.Origins["Release"].String() != "default" {
			t.Errorf("%+v: %d from %q", src, c.major(), c.Origins["Release"].String())
		}
	}
}

func TestInferVersionRules(t *testing.T) {
	for _, tc := range []struct {
		keys     string
		version  int
		evidence string
	}{
		{"", 0, ""},
		{"APP_NAME REDIS_HOST VITE_APP_NAME", 0, ""},
		{"CACHE_DRIVER", 8, "CACHE_DRIVER"},
		{"BROADCAST_DRIVER", 8, "BROADCAST_DRIVER"},
		{"MIX_APP_URL", 8, "MIX_APP_URL"},
		{"FILESYSTEM_DRIVER", 8, "FILESYSTEM_DRIVER"},
		{"FILESYSTEM_DISK", 10, "FILESYSTEM_DISK"},
		{"FILESYSTEM_DISK MIX_X", 9, "FILESYSTEM_DISK, MIX_X"},
		{"CACHE_DRIVER VITE_APP_NAME", 10, "CACHE_DRIVER, VITE_APP_NAME"},
		// An application upgraded to 11.x renames CACHE_DRIVER to CACHE_STORE and may keep the rest.
		{"CACHE_DRIVER CACHE_STORE FILESYSTEM_DRIVER MIX_X", 11, "CACHE_STORE"},
		{"BROADCAST_DRIVER BROADCAST_CONNECTION", 11, "BROADCAST_CONNECTION"},
		// Keys any application may add count only without older ones.
		{"APP_LOCALE BCRYPT_ROUNDS", 11, "APP_LOCALE, BCRYPT_ROUNDS"},
		{"APP_LOCALE CACHE_DRIVER", 8, "CACHE_DRIVER"},
	} {
		v, e := inferVersion(strings.Fields(tc.keys))
		if v != tc.version || strings.Join(e, ", ") != tc.evidence {
			t.Errorf("%q: %d %q, want %d %q", tc.keys, v, e, tc.version, tc.evidence)
		}
	}
}
