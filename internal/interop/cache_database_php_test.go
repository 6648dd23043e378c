package interop

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	cachedb "github.com/laraq/laraq/cache/database"
	"github.com/laraq/laraq/internal/testenv"
)

// TestDatabaseCacheStoreAgainstPHP: with the database cache store, the default of
// Laravel 11+ skeletons (CACHE_STORE=database) and a choice on every release, laraq and
// each release's own DatabaseStore and DatabaseLock (7.x+) share the cache and
// cache_locks tables (SQLite, as the skeleton): `queue:restart` and `queue:pause` written by PHP stop and pause a Go worker;
// laraq's restart and pause read back in PHP; counters and locks taken on one side are
// seen, re-taken, released and refused on the other as PHP's own would be.
func TestDatabaseCacheStoreAgainstPHP(t *testing.T) {
	t.Parallel()
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		ctx := context.Background()
		dsn := testenv.SQLite(t)
		prefix := testenv.Prefix(t)
		cachePrefix := "lqc" + testenv.RandomName(4) + "_"
		php := testenv.PHPEnv{Major: major, Redis: srv, Prefix: prefix, CachePrefix: cachePrefix,
			CacheStoreDB: strings.TrimPrefix(dsn, "sqlite:")}
		php.Run(t, nil, "ops_cache.php", "migrate")
		phpGet := func(key string) any {
			t.Helper()
			var v struct{ Value any }
			if err := json.Unmarshal(php.Run(t, nil, "ops_cache.php", "get", key), &v); err != nil {
				t.Fatal(err)
			}
			return v.Value
		}
		phpJSON := func(args ...string) map[string]any {
			t.Helper()
			var v map[string]any
			if err := json.Unmarshal(php.Run(t, nil, "ops_cache.php", args...), &v); err != nil {
				t.Fatal(err)
			}
			return v
		}

		store, err := cachedb.Open(ctx, dsn, cachedb.Options{Prefix: cachePrefix})
		if err != nil {
			t.Fatal(err)
		}
		defer store.Close()
		conn := &laraq.Connection{Client: srv.Client(t, 0), Prefix: prefix, Release: laraq.Release{Major: major, Minor: 50},
			Cache: laraq.CacheStore{Store: store}}
		admin, err := laraq.NewAdmin(conn)
		if err != nil {
			t.Fatal(err)
		}

		// laraq's signals, read by PHP.
		before := time.Now().Unix()
		if err := admin.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		if ts, ok := phpGet("illuminate:queue:restart").(float64); !ok || int64(ts) < before || int64(ts) > time.Now().Unix() {
			t.Errorf("PHP reads laraq's restart signal as %v", phpGet("illuminate:queue:restart"))
		}
		q := "c" + testenv.RandomName(4)
		if err := admin.Pause(ctx, "", q); err != nil {
			t.Fatal(err)
		}
		if v := phpGet("illuminate:queue:paused:redis:" + q); v != true {
			t.Errorf("PHP reads laraq's pause flag as %v", v)
		}
		if err := admin.Resume(ctx, "", q); err != nil {
			t.Fatal(err)
		}
		if v := phpGet("illuminate:queue:paused:redis:" + q); v != nil {
			t.Errorf("after laraq's resume PHP reads %v", v)
		}

		// PHP's counters and locks, through laraq's store.
		phpJSON("forever", "job-exceptions:u1", "0")
		if n, ok, err := store.Increment(ctx, "job-exceptions:u1", 1); err != nil || !ok || n != 1 {
			t.Errorf("Go increments PHP's counter: %d %v %v", n, ok, err)
		}
		if v := phpJSON("increment", "job-exceptions:u1")["value"]; v != 2.0 {
			t.Errorf("PHP increments after Go: %v", v)
		}
		if _, ok, _ := store.Increment(ctx, "job-exceptions:missing", 1); ok {
			t.Error("Go incremented a missing counter; DatabaseStore returns false")
		}
		if major < 7 {
			t.Log("database locks skipped: DatabaseLock is 7.x+ (5.8 and 6.x's DatabaseStore takes no locks; unique jobs, which use them, are 8.x+)")
		} else {
			if v := phpJSON("lock", "laravel_unique_job:A:1", "60", "php-owner")["acquired"]; v != true {
				t.Fatalf("PHP lock: %v", v)
			}
			if owner, held, err := store.LockOwner(ctx, "laravel_unique_job:A:1"); err != nil || !held || owner != "php-owner" {
				t.Errorf("Go reads PHP's lock: %q %v %v", owner, held, err)
			}
			if got, _ := store.AcquireLock(ctx, "laravel_unique_job:A:1", "go-owner", 60); got {
				t.Error("Go took a lock PHP holds")
			}
			if released, err := store.ReleaseLock(ctx, "laravel_unique_job:A:1", "go-owner"); err != nil || released {
				t.Errorf("Go released another owner's lock: %v %v", released, err)
			}
			if released, err := store.ReleaseLock(ctx, "laravel_unique_job:A:1", "php-owner"); err != nil || !released {
				t.Errorf("Go released PHP's lock with its owner: %v %v", released, err)
			}
			if got, err := store.AcquireLock(ctx, "laravel_unique_job:A:1", "go-owner", 60); err != nil || !got {
				t.Errorf("Go takes the free lock: %v %v", got, err)
			}
			if v := phpJSON("lock", "laravel_unique_job:A:1", "60", "php-owner")["acquired"]; v != false {
				t.Errorf("PHP took the lock Go holds: %v", v)
			}
			if v := phpJSON("lock", "laravel_unique_job:A:1", "60", "go-owner")["acquired"]; v != true {
				t.Errorf("PHP re-takes the lock for its owner: %v", v)
			}
			if v := phpJSON("lock-owner", "laravel_unique_job:A:1")["owner"]; v != "go-owner" {
				t.Errorf("PHP reads the owner %v", v)
			}
			if released, err := store.ForceReleaseLock(ctx, "laravel_unique_job:A:1"); err != nil || !released {
				t.Errorf("force release: %v %v", released, err)
			}
			if v := phpJSON("lock-owner", "laravel_unique_job:A:1")["owner"]; v != nil {
				t.Errorf("after the force release PHP reads the owner %v", v)
			}

		}

		// PHP's pause and restart, obeyed by a Go worker.
		phpJSON("forever", "illuminate:queue:paused:redis:"+q, "true")
		var ran atomic.Int32
		jobs := laraq.NewJobs()
		jobs.HandleFunc(`App\Jobs\Ping`, func(ctx context.Context, j *laraq.JobInfo) error { ran.Add(1); return nil })
		w, err := laraq.NewWorker(conn, jobs, laraq.WorkerConfig{Queues: []string{q}, SignalInterval: 50 * time.Millisecond,
			Sleep: 50 * time.Millisecond, Logger: testkit.QuietLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		d, err := laraq.NewDispatcher(conn)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.DispatchString(ctx, `App\Jobs\Ping`, map[string]any{}, laraq.OnQueue(q)); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		time.Sleep(700 * time.Millisecond)
		if ran.Load() != 0 {
			t.Error("the worker ran a job of a queue PHP paused")
		}
		phpJSON("forget", "illuminate:queue:paused:redis:"+q)
		testkit.WaitFor(t, 10*time.Second, "the job to run after PHP's resume", func() bool { return ran.Load() == 1 })
		phpJSON("forever", "illuminate:queue:restart", strconv.FormatInt(time.Now().Unix()+5, 10))
		select {
		case err := <-done:
			if !errors.Is(err, laraq.ErrRestart) {
				t.Errorf("the worker stopped with %v, want ErrRestart", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the worker did not stop on PHP's queue:restart")
		}
	})
}
