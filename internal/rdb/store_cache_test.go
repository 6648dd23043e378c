package rdb

import (
	"context"
	"testing"
	"time"

	cachedb "github.com/laraq/laraq/cache/database"
	fdb "github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/internal/testenv"
)

// TestStoreCache: the worker's cache rules on a database store (SQLite, tables as the
// 11+ stub makes them): the values are the serialized ones Laravel's Repository writes,
// under the store's prefix; maxExceptions counts to the limit and forgets; pause flags
// and the restart signal read back.
func TestStoreCache(t *testing.T) {
	ctx := context.Background()
	dsn := testenv.SQLite(t)
	db, _, _, err := fdb.OpenDB(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`create table "cache" ("key" varchar not null, "value" text not null, "expiration" integer not null, primary key ("key"))`,
		`create table "cache_locks" ("key" varchar not null, "owner" varchar not null, "expiration" integer not null, primary key ("key"))`,
	} {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	now := time.Unix(1_700_000_000, 0)
	store, err := cachedb.Open(ctx, dsn, cachedb.Options{Prefix: "app_cache_", Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c := NewStoreCache(store)

	if _, ok, err := c.RestartTimestamp(ctx); ok || err != nil {
		t.Fatalf("restart before any signal: %v %v", ok, err)
	}
	if err := c.SignalRestart(ctx, 1_700_000_123); err != nil {
		t.Fatal(err)
	}
	if v, _, _ := store.Get(ctx, "illuminate:queue:restart"); v != "i:1700000123;" {
		t.Errorf("restart stored as %q", v)
	}
	if ts, ok, err := c.RestartTimestamp(ctx); !ok || err != nil || ts != 1_700_000_123 {
		t.Errorf("restart %d %v %v", ts, ok, err)
	}

	if err := c.Pause(ctx, "redis", "mail"); err != nil {
		t.Fatal(err)
	}
	if all, paused, err := c.Paused(ctx, "redis", []string{"default", "mail"}); err != nil || all || paused[0] || !paused[1] {
		t.Errorf("paused %v %v %v", all, paused, err)
	}
	if err := c.PauseAll(ctx); err != nil {
		t.Fatal(err)
	}
	if all, _, _ := c.Paused(ctx, "redis", nil); !all {
		t.Error("pause-all not read")
	}
	if err := c.ResumeAll(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Resume(ctx, "redis", "mail"); err != nil {
		t.Fatal(err)
	}
	if all, paused, _ := c.Paused(ctx, "redis", []string{"mail"}); all || paused[0] {
		t.Error("resume not read")
	}

	for i, want := range []struct {
		count    int64
		exceeded bool
	}{{1, false}, {2, false}, {3, true}, {1, false}} {
		n, exceeded, err := c.CountJobException(ctx, "u1", 3)
		if err != nil || n != want.count || exceeded != want.exceeded {
			t.Errorf("exception %d: %d %v %v, want %d %v", i+1, n, exceeded, err, want.count, want.exceeded)
		}
	}
	if v, ok, _ := store.Get(ctx, "job-exceptions:u1"); !ok || v != "i:1;" {
		t.Errorf("counter %q %v", v, ok)
	}
	now = now.Add(JobExceptionsTTL * time.Second)
	if _, ok, _ := store.Get(ctx, "job-exceptions:u1"); ok {
		t.Error("the counter outlived its day")
	}
}
