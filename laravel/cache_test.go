package laravel

import (
	"context"
	"database/sql"
	"strings"
	"testing"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// TestConnectOpensDatabaseCacheStore: an application whose cache store is the database
// store (the 11+ skeleton's CACHE_STORE=database) gets it as Connection.Cache.Store, on
// the application's database with its prefix, and laraq's restart lands in its cache
// table; without the table the worker is warned and a command that writes signals
// (RequireSharedCache) refuses.
func TestConnectOpensDatabaseCacheStore(t *testing.T) {
	srv := testenv.RedisServer(t)
	for _, withTable := range []bool{true, false} {
		var more []string
		if withTable {
			more = append(more, `create table cache ("key" varchar not null primary key, value text not null, expiration integer not null)`,
				`create table cache_locks ("key" varchar not null primary key, owner varchar not null, expiration integer not null)`)
		}
		path, db := appDatabase(t, more...)
		envFile := writeEnv(t, "APP_NAME=Shop\nCACHE_STORE=database\nDB_CONNECTION=sqlite\nDB_DATABASE="+path+
			"\nQUEUE_CONNECTION=redis\nREDIS_HOST=127.0.0.1\nREDIS_PORT="+strings.TrimPrefix(srv.Addr, "127.0.0.1:")+"\n")
		cfg, err := Load(App{EnvFile: envFile, Release: majorRelease(12)})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		conn, err := cfg.Connect(ctx, ConnectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if (conn.Cache.Store != nil) != withTable {
			t.Fatalf("cache table %v: store %v", withTable, conn.Cache.Store)
		}
		if withTable {
			admin, err := laraq.NewAdmin(conn)
			if err != nil {
				t.Fatal(err)
			}
			if err := admin.Restart(ctx); err != nil {
				t.Fatal(err)
			}
			var key, value string
			if err := db.QueryRow(`select "key", value from cache`).Scan(&key, &value); err != nil || key != cfg.CachePrefix+"illuminate:queue:restart" || !strings.HasPrefix(value, "i:") {
				t.Errorf("restart row %q %q %v (prefix %q)", key, value, err, cfg.CachePrefix)
			}
		} else if _, err := cfg.Connect(ctx, ConnectOptions{WithoutFailedStore: true, RequireSharedCache: true}); err == nil || !strings.Contains(err.Error(), "database cache store") {
			t.Errorf("a command writing signals without the cache table: %v", err)
		}
		conn.Close()
		db.Close()
	}
}

// TestCacheStoreDatabaseIsItsConnection: the database cache store opens on the database
// of its own connection (DB_CACHE_CONNECTION, a connection of config/database.php), not
// on the failed-job store's, and never on LARAQ_DATABASE (a database of laraq's own);
// LARAQ_CACHE_DATABASE names another. Its lock_lottery and lock_timeout are read.
func TestCacheStoreDatabaseIsItsConnection(t *testing.T) {
	srv := testenv.RedisServer(t)
	lockTables := []string{`create table cache ("key" varchar not null primary key, value text not null, expiration integer not null)`,
		`create table cache_locks ("key" varchar not null primary key, owner varchar not null, expiration integer not null)`}
	appPath, appDB := appDatabase(t, lockTables...)
	defer appDB.Close()
	cachePath, cacheDB := appDatabase(t, lockTables...)
	defer cacheDB.Close()
	otherPath, otherDB := appDatabase(t, lockTables...)
	defer otherDB.Close()
	laraqPath, laraqDB := appDatabase(t)
	defer laraqDB.Close()

	root := writeApp(t, map[string]string{
		"config/database.php": `<?php
return [
    'default' => env('DB_CONNECTION', 'sqlite'),
    'connections' => [
        'sqlite' => ['driver' => 'sqlite', 'url' => env('DB_URL'), 'database' => env('DB_DATABASE')],
        'cachedb' => ['driver' => 'sqlite', 'database' => env('CACHE_DB_PATH')],
    ],
];
`,
		"config/cache.php": `<?php
return [
    'default' => env('CACHE_STORE', 'database'),
    'stores' => [
        'database' => [
            'driver' => 'database',
            'connection' => env('DB_CACHE_CONNECTION'),
            'table' => 'cache',
            'lock_table' => 'cache_locks',
            'lock_connection' => env('DB_CACHE_LOCK_CONNECTION'),
            'lock_lottery' => [1, 50],
            'lock_timeout' => 600,
        ],
    ],
    'prefix' => 'shop-cache-',
];
`,
		".env": "APP_NAME=Shop\nCACHE_STORE=database\nDB_CONNECTION=sqlite\nDB_DATABASE=" + appPath + "\nDB_CACHE_CONNECTION=cachedb\nCACHE_DB_PATH=" + cachePath +
			"\nQUEUE_CONNECTION=redis\nREDIS_HOST=127.0.0.1\nREDIS_PORT=" + strings.TrimPrefix(srv.Addr, "127.0.0.1:") + "\n",
	})
	ctx := context.Background()
	restartIn := func(t *testing.T, env map[string]string) (where string) {
		t.Helper()
		cfg, err := Load(App{Root: root, LookupEnv: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.CacheLockLottery != [2]int{1, 50} || cfg.CacheLockTimeout != 600 {
			t.Errorf("lock lottery %v, lock timeout %d", cfg.CacheLockLottery, cfg.CacheLockTimeout)
		}
		conn, err := cfg.Connect(ctx, ConnectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if conn.Cache.Store == nil {
			t.Fatalf("no cache store; warnings %q", cfg.Warnings)
		}
		admin, err := laraq.NewAdmin(conn)
		if err != nil {
			t.Fatal(err)
		}
		if err := admin.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		for name, db := range map[string]*sql.DB{"app": appDB, "cache": cacheDB, "other": otherDB} {
			var n int
			if err := db.QueryRow(`select count(*) from cache where "key" = 'shop-cache-illuminate:queue:restart'`).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n == 1 {
				where += name
			}
			if _, err := db.Exec(`delete from cache`); err != nil {
				t.Fatal(err)
			}
		}
		return where
	}
	if got := restartIn(t, nil); got != "cache" {
		t.Errorf("restart written to %q, want the cache connection's database", got)
	}
	if got := restartIn(t, map[string]string{"LARAQ_DATABASE": "sqlite:" + laraqPath}); got != "cache" {
		t.Errorf("with LARAQ_DATABASE, restart written to %q, want the cache connection's database", got)
	}
	if got := restartIn(t, map[string]string{"LARAQ_CACHE_DATABASE": "sqlite:" + otherPath}); got != "other" {
		t.Errorf("with LARAQ_CACHE_DATABASE, restart written to %q", got)
	}
	if got := restartIn(t, map[string]string{"DB_CACHE_CONNECTION": ""}); got != "app" {
		t.Errorf("without DB_CACHE_CONNECTION, restart written to %q, want the default connection's database", got)
	}
	// Locks on a connection of their own: said, not followed.
	for lockConn, warned := range map[string]bool{"": false, "cachedb": false, "sqlite": true} {
		cfg, err := Load(App{Root: root, LookupEnv: func(k string) (string, bool) {
			return lockConn, k == "DB_CACHE_LOCK_CONNECTION"
		}})
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(strings.Join(cfg.Warnings, "\n"), `keeps its locks on connection "sqlite"`); got != warned {
			t.Errorf("DB_CACHE_LOCK_CONNECTION=%q: warned %v: %q", lockConn, got, cfg.Warnings)
		}
	}
}

// TestCacheLimiter: config cache.limiter names the RateLimiter's store. A redis store
// while the default one is the database store makes the job middleware count in Redis
// (Connection.Cache.RedisLimiter), as PHP's RateLimiter does; a store laraq cannot open
// is a warning; none, or the default store itself, changes nothing. The Redis
// connections the WithRedis middleware may name come with the connection.
func TestCacheLimiter(t *testing.T) {
	srv := testenv.RedisServer(t)
	path, db := appDatabase(t, `create table cache ("key" varchar not null primary key, value text not null, expiration integer not null)`,
		`create table cache_locks ("key" varchar not null primary key, owner varchar not null, expiration integer not null)`)
	defer db.Close()
	for _, tc := range []struct {
		limiter     string
		wantRedis   bool
		wantWarning bool
	}{
		{"", false, false},
		{"'database'", false, false},
		{"'redis'", true, false},
		{"'file'", false, true},
	} {
		limiter := ""
		if tc.limiter != "" {
			limiter = "    'limiter' => " + tc.limiter + ",\n"
		}
		root := writeApp(t, map[string]string{
			"config/cache.php": "<?php\nreturn [\n    'default' => env('CACHE_STORE', 'database'),\n" + limiter +
				"    'stores' => [\n        'database' => ['driver' => 'database', 'table' => 'cache'],\n" +
				"        'redis' => ['driver' => 'redis', 'connection' => 'cache'],\n        'file' => ['driver' => 'file', 'path' => '/tmp'],\n    ],\n" +
				"    'prefix' => 'shop-cache-',\n];\n",
			".env": "APP_NAME=Shop\nCACHE_STORE=database\nDB_CONNECTION=sqlite\nDB_DATABASE=" + path +
				"\nQUEUE_CONNECTION=redis\nREDIS_HOST=127.0.0.1\nREDIS_PORT=" + strings.TrimPrefix(srv.Addr, "127.0.0.1:") + "\n",
		})
		cfg, err := Load(App{Root: root, LookupEnv: func(string) (string, bool) { return "", false }})
		if err != nil {
			t.Fatal(err)
		}
		warned := strings.Contains(strings.Join(cfg.Warnings, "\n"), "cache.limiter")
		if warned != tc.wantWarning {
			t.Errorf("limiter %s: warnings %q", tc.limiter, cfg.Warnings)
		}
		conn, err := cfg.Connect(context.Background(), ConnectOptions{WithoutFailedStore: true})
		if err != nil {
			t.Fatal(err)
		}
		if conn.Cache.RedisLimiter != tc.wantRedis || conn.Cache.Store == nil {
			t.Errorf("limiter %s: RedisLimiter %v, store %v", tc.limiter, conn.Cache.RedisLimiter, conn.Cache.Store)
		}
		if conn.RedisConnections["default"] != conn.Client || conn.RedisConnections["cache"] != conn.Cache.Client {
			t.Errorf("limiter %s: Redis connections %v", tc.limiter, conn.RedisConnections)
		}
		conn.Close()
	}
}
