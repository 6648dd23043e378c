package database_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	cachedb "github.com/laraq/laraq/cache/database"
	"github.com/laraq/laraq/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestStoreAgainstPHP: on SQLite, MariaDB and PostgreSQL, with the tables the latest
// release's own schema builder makes, what the Go store writes is what Laravel's
// DatabaseStore and DatabaseLock read, and the other way round: values, expiry,
// increments, and locks taken, refused, re-taken by their owner and released.
func TestStoreAgainstPHP(t *testing.T) {
	major := testenv.Majors[len(testenv.Majors)-1]
	for _, backend := range []string{"sqlite", "mariadb", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			t.Parallel()
			testenv.NeedPeer(t, major)
			var dsn, spec string
			switch backend {
			case "sqlite":
				dsn = testenv.SQLite(t)
				spec = strings.TrimPrefix(dsn, "sqlite:")
				if err := os.WriteFile(spec, nil, 0o644); err != nil {
					t.Fatal(err)
				}
			case "mariadb":
				dsn = testenv.MariaDB(t)
				spec = dsn
			default:
				dsn = testenv.Postgres(t)
				spec = dsn
			}
			ctx := context.Background()
			prefix := "app_cache_"
			php := testenv.PHPEnv{Major: major, CachePrefix: prefix, CacheStoreDB: spec}
			run := func(args ...string) map[string]any {
				t.Helper()
				var v map[string]any
				if err := json.Unmarshal(php.Run(t, nil, "ops_cache.php", args...), &v); err != nil {
					t.Fatal(err)
				}
				return v
			}
			if _, err := cachedb.Open(ctx, dsn, cachedb.Options{Prefix: prefix}); !errors.Is(err, cachedb.ErrNoTable) {
				t.Fatalf("Open before the migration: %v, want ErrNoTable", err)
			}
			run("migrate")
			s, err := cachedb.Open(ctx, dsn, cachedb.Options{Prefix: prefix})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()

			if err := s.Put(ctx, "greeting", `s:5:"hello";`, 60); err != nil {
				t.Fatal(err)
			}
			if v := run("get", "greeting")["value"]; v != "hello" {
				t.Errorf("PHP reads %v", v)
			}
			if err := s.Put(ctx, "greeting", `s:3:"bye";`, 60); err != nil {
				t.Fatal(err)
			}
			if v := run("get", "greeting")["value"]; v != "bye" {
				t.Errorf("PHP reads %v after the upsert", v)
			}
			run("forever", "count", "5")
			if v, ok, err := s.Get(ctx, "count"); err != nil || !ok || v != "i:5;" {
				t.Errorf("Go reads PHP's value as %q %v %v", v, ok, err)
			}
			if n, ok, err := s.Increment(ctx, "count", 2); err != nil || !ok || n != 7 {
				t.Errorf("increment: %d %v %v", n, ok, err)
			}
			if v := run("increment", "count")["value"]; v != 8.0 {
				t.Errorf("PHP increments to %v", v)
			}
			// add: only a key without an unexpired row is written, by either side.
			if ok, err := s.Add(ctx, "window", "i:1700000060;", 60); err != nil || !ok {
				t.Errorf("Go add of a new key: %v %v", ok, err)
			}
			if v := run("add", "window", "5", "60")["added"]; v != false {
				t.Errorf("PHP added over Go's row: %v", v)
			}
			if v := run("get", "window")["value"]; v != 1700000060.0 {
				t.Errorf("PHP reads Go's added value as %v", v)
			}
			if v := run("add", "hits", "0", "60")["added"]; v != true {
				t.Errorf("PHP add of a new key: %v", v)
			}
			if ok, err := s.Add(ctx, "hits", "i:9;", 60); err != nil || ok {
				t.Errorf("Go added over PHP's row: %v %v", ok, err)
			}
			if v, ok, err := s.Get(ctx, "hits"); err != nil || !ok || v != "i:0;" {
				t.Errorf("Go reads PHP's added value as %q %v %v", v, ok, err)
			}
			if err := s.Put(ctx, "stale", "i:1;", -1); err != nil {
				t.Fatal(err)
			}
			if ok, err := s.Add(ctx, "stale", "i:2;", 60); err != nil || !ok {
				t.Errorf("Go add over an expired row: %v %v", ok, err)
			}
			if v := run("get", "stale")["value"]; v != 2.0 {
				t.Errorf("PHP reads %v after an add over an expired row", v)
			}
			run("forever", "flag", "true")
			if _, ok, _ := s.Increment(ctx, "flag", 1); ok {
				t.Error("a boolean was incremented; DatabaseStore refuses what is not numeric")
			}
			if err := s.Put(ctx, "gone", "i:1;", -1); err != nil {
				t.Fatal(err)
			}
			if _, ok, err := s.Get(ctx, "gone"); ok || err != nil {
				t.Errorf("an expired value reads as set: %v", err)
			}
			if v := run("get", "gone")["value"]; v != nil {
				t.Errorf("PHP reads an expired value as %v", v)
			}
			if err := s.Forget(ctx, "greeting"); err != nil {
				t.Fatal(err)
			}
			if v := run("get", "greeting")["value"]; v != nil {
				t.Errorf("PHP reads a forgotten value as %v", v)
			}

			const lock = "laravel_unique_job:App\\Jobs\\Sync:7"
			if v := run("lock", lock, "60", "php-1")["acquired"]; v != true {
				t.Fatalf("PHP lock: %v", v)
			}
			if got, err := s.AcquireLock(ctx, lock, "go-1", 60); err != nil || got {
				t.Errorf("Go took PHP's lock: %v %v", got, err)
			}
			if owner, held, err := s.LockOwner(ctx, lock); err != nil || !held || owner != "php-1" {
				t.Errorf("owner %q %v %v", owner, held, err)
			}
			// The owner re-takes its lock, for longer (for as long, within the same second,
			// MySQL reports no row changed and PHP's acquire() answers false: so does Go's).
			if got, err := s.AcquireLock(ctx, lock, "php-1", 120); err != nil || !got {
				t.Errorf("the owner re-takes its lock: %v %v", got, err)
			}
			if v := run("lock", lock, "180", "php-1")["acquired"]; v != true {
				t.Errorf("PHP's owner re-takes the lock: %v", v)
			}
			if ok, err := s.ReleaseLock(ctx, lock, "go-1"); err != nil || ok {
				t.Errorf("released by another owner: %v %v", ok, err)
			}
			if ok, err := s.ReleaseLock(ctx, lock, "php-1"); err != nil || !ok {
				t.Errorf("release: %v %v", ok, err)
			}
			if got, err := s.AcquireLock(ctx, lock, "go-1", 0); err != nil || !got {
				t.Errorf("Go takes the free lock: %v %v", got, err)
			}
			if v := run("lock", lock, "60", "php-2")["acquired"]; v != false {
				t.Errorf("PHP took Go's lock: %v", v)
			}
			if v := run("lock-owner", lock)["owner"]; v != "go-1" {
				t.Errorf("PHP reads the owner %v", v)
			}
			if ok, err := s.ForceReleaseLock(ctx, lock); err != nil || !ok {
				t.Errorf("force release: %v %v", ok, err)
			}
			if v := run("lock", lock, "60", "php-2")["acquired"]; v != true {
				t.Errorf("PHP cannot take the released lock: %v", v)
			}
		})
	}
}
