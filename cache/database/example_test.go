package database_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/cache"
	cachedb "github.com/laraq/laraq/cache/database"
	fdb "github.com/laraq/laraq/failed/database"
	_ "modernc.org/sqlite"
)

// A connection whose application keeps its cache in the database (CACHE_STORE=database),
// on a handle the caller owns: the worker then reads queue:restart and queue:pause, counts
// maxExceptions and releases unique locks in the cache and cache_locks tables, where PHP
// does. laravel.Connect does the same from the application's .env.
func ExampleNew() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "cache-example")
	defer os.RemoveAll(dir)
	db, err := sql.Open("sqlite", filepath.Join(dir, "app.sqlite")+"?_txlock=immediate")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer db.Close()
	// The tables of the application's cache migration.
	for _, stmt := range []string{
		`create table cache ("key" varchar primary key, value text not null, expiration integer not null)`,
		`create table cache_locks ("key" varchar primary key, owner varchar not null, expiration integer not null)`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			fmt.Println(err)
			return
		}
	}
	store, err := cachedb.New(ctx, db, fdb.SQLite, cachedb.Options{Prefix: "laravel_cache_"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// A worker or admin on this connection keeps its signals in the store.
	conn := &laraq.Connection{Cache: laraq.CacheStore{Store: store}}
	_ = conn

	// What `php artisan queue:pause redis:mail` writes: forever(key, true), serialized.
	_ = store.Put(ctx, "illuminate:queue:paused:redis:mail", "b:1;", cache.Forever)
	v, found, _ := store.Get(ctx, "illuminate:queue:paused:redis:mail")
	fmt.Println(v, found)
	// Output: b:1; true
}
