package laravel

import (
	"context"
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
