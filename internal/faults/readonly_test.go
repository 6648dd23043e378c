package faults

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// replicaOf makes c a replica of the server at port (0: a master again) and, for a
// replica, waits until it has synced.
func replicaOf(t *testing.T, c *redis.Client, port int) {
	t.Helper()
	ctx := context.Background()
	if port == 0 {
		if err := c.Do(ctx, "replicaof", "no", "one").Err(); err != nil {
			t.Fatal(err)
		}
		return
	}
	if err := c.Do(ctx, "replicaof", "127.0.0.1", strconv.Itoa(port)).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the replica to sync", func() bool {
		info, _ := c.Info(ctx, "replication").Result()
		return strings.Contains(info, "master_link_status:up")
	})
}

// A worker pointed at a replica stops at its first pop with one line naming the
// server and the fix, exit 3, and takes nothing: the jobs stay as they were on the
// master.
func TestReplicaAtStartStops(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	master := testenv.PrivateRedis(t)
	replica := testenv.PrivateRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(master.Port))
	mc := master.Client(t, 0)
	conn := &laraq.Connection{Client: mc, Prefix: "app_", Release: release}
	dispatch(t, conn, "default", 1, 2)
	before := queueState(t, mc, "app_queues:default")
	eventually(t, 20*time.Second, "the replica to hold the jobs", func() bool {
		n, _ := replica.Client(t, 0).LLen(ctx, "app_queues:default").Result()
		return n == 2
	})
	var r runs
	t0 := time.Now()
	w := startWork(t, nil, handlers(&r), "--redis", "redis://"+replica.Addr+"/0", "--prefix", "app_",
		"--laravel-version", release.String(), "--sleep", "0.1")
	if rc := w.exit(t, 10*time.Second); rc != laraq.ExitRedisSetup {
		t.Fatalf("exit %d, want %d:\n%s", rc, laraq.ExitRedisSetup, w.log())
	}
	t.Logf("stopped %v after start", time.Since(t0).Round(time.Millisecond))
	oneLine(t, w, "redis at "+replica.Addr+"/0: the server is a read-only replica", "READONLY",
		"fix: point laraq at the master")
	if len(w.logLines("taking jobs from redis failed; retrying")) != 0 {
		t.Errorf("the worker retried a replica's refusal:\n%s", w.log())
	}
	if r.total() != 0 {
		t.Errorf("%d jobs ran", r.total())
	}
	if after := queueState(t, mc, "app_queues:default"); !reflect.DeepEqual(after, before) {
		t.Errorf("the jobs changed:\nbefore %v\nafter  %v", before, after)
	}

	// The library: Run returns the error the line is, which errors.Is tells apart.
	lw, err := laraq.NewWorker(&laraq.Connection{Client: replica.Client(t, 0), Prefix: "app_", Release: release}, handlers(&r),
		laraq.WorkerConfig{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	err = lw.Run(ctx)
	var ce *laraq.RedisConfigError
	if !errors.Is(err, laraq.ErrRedisReadOnly) || !errors.As(err, &ce) || ce.Server != replica.Addr+"/0" ||
		laraq.ExitStatus(err) != laraq.ExitRedisSetup || !strings.HasSuffix(w.lastLine(), err.Error()) {
		t.Errorf("Run returned %v, want the *RedisConfigError of the line", err)
	}
}

// The master a worker pops from turns replica (as in a failover: its replica promoted,
// itself demoted) and back: the worker retries READONLY while --readonly-grace lasts,
// /healthz says it cannot take jobs meanwhile, and it goes on once the server is a
// master again. Every job runs once and none is left reserved. With a shorter grace,
// it stops with the same line as at start, exit 3.
func TestMasterTurnedReplicaMidRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		grace string
		back  bool // made a master again before the grace ends
	}{
		{"back-within-grace", "30", true},
		{"grace-ends", "6", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			a := testenv.PrivateRedis(t)
			b := testenv.PrivateRedis(t, "--replicaof", "127.0.0.1", strconv.Itoa(a.Port))
			ac, bc := a.Client(t, 0), b.Client(t, 0)
			connA := &laraq.Connection{Client: ac, Prefix: "app_", Release: release}
			connB := &laraq.Connection{Client: bc, Prefix: "app_", Release: release}
			var r runs
			w := startWork(t, nil, handlers(&r), "--redis", "redis://"+a.Addr+"/0", "--prefix", "app_",
				"--laravel-version", release.String(), "--sleep", "0.1", "--readonly-grace", tc.grace)
			dispatch(t, connA, "default", 1, 2, 3)
			eventually(t, 20*time.Second, "the first jobs to run", func() bool { return r.once(1, 2, 3) })

			// The failover: b promoted, a demoted to its replica.
			replicaOf(t, bc, 0)
			replicaOf(t, ac, b.Port)
			dispatch(t, connB, "default", 4, 5, 6)
			eventually(t, 20*time.Second, "/healthz 503", func() bool { code, _ := w.health(t); return code == 503 })
			code, h := w.health(t)
			if !h.Refused || !strings.Contains(h.Reason, "read-only replica") {
				t.Errorf("/healthz %d %+v while the server is a replica", code, h)
			}
			if n := r.total(); n != 3 {
				t.Errorf("%d runs while the worker's server is a replica, want 3", n)
			}

			if !tc.back {
				if rc := w.exit(t, 20*time.Second); rc != laraq.ExitRedisSetup {
					t.Fatalf("exit %d, want %d:\n%s", rc, laraq.ExitRedisSetup, w.log())
				}
				oneLine(t, w, "redis at "+a.Addr+"/0: the server is a read-only replica", "fix: point laraq at the master")
				if n, _ := bc.ZCard(ctx, "app_queues:default:reserved").Result(); n != 0 {
					t.Errorf("%d jobs reserved", n)
				}
				if n, _ := bc.LLen(ctx, "app_queues:default").Result(); n != 3 {
					t.Errorf("%d jobs ready on the new master, want 3", n)
				}
				return
			}

			time.Sleep(3 * time.Second)
			if w.exited() {
				t.Fatalf("the worker stopped within the grace:\n%s", w.log())
			}
			// Back: a master again, b its replica.
			replicaOf(t, ac, 0)
			replicaOf(t, bc, a.Port)
			eventually(t, 20*time.Second, "the jobs of the failover to run", func() bool { return r.once(4, 5, 6) })
			dispatch(t, connA, "default", 7, 8, 9)
			eventually(t, 20*time.Second, "the later jobs to run", func() bool { return r.once(7, 8, 9) })
			eventually(t, 10*time.Second, "/healthz 200", func() bool { code, _ := w.health(t); return code == 200 })
			if len(w.logLines("redis became a read-only replica")) != 1 {
				t.Errorf("want one warning about the replica:\n%s", w.log())
			}
			if rc := w.stop(t); rc != 0 {
				t.Fatalf("exit %d:\n%s", rc, w.log())
			}
			if r.total() != 9 {
				t.Errorf("%d runs of 9 jobs", r.total())
			}
			for k, s := range queueState(t, ac, "app_queues:default") {
				if !strings.HasSuffix(k, ":notify") && len(s.Members) != 0 {
					t.Errorf("%s holds %v", k, s.Members)
				}
			}
		})
	}
}
