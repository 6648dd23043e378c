package faults

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// On a three-master Redis Cluster, a Laravel 13.4 application's queue "default" has
// keys in different slots: the worker stops at its first script with one line naming
// the queue and the fix (PHP's 13.4 fails the same way; laravel's cluster test shows
// it). The fix works: the queue named {default} on 13.4, or "default" on 13.5+, whose
// names laraq tags by itself, is worked.
func TestClusterQueueWithoutHashTagStops(t *testing.T) {
	t.Parallel()
	addrs := testenv.RedisCluster(t)
	env := map[string]string{"LARAQ_REDIS_CLUSTER": strings.Join(addrs, ",")}
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { client.Close() })
	prefix := testenv.Prefix(t)
	args := func(version, queue string, extra ...string) []string {
		return append([]string{"--prefix", prefix, "--laravel-version", version, "--no-cache", "--queue", queue, "--sleep", "0.1"}, extra...)
	}

	var r runs
	w := startWork(t, env, handlers(&r), args("13.4.0", "default")...)
	if rc := w.exit(t, 20*time.Second); rc != laraq.ExitRedisSetup {
		t.Fatalf("exit %d, want %d:\n%s", rc, laraq.ExitRedisSetup, w.log())
	}
	oneLine(t, w, "redis at cluster "+addrs[0], `the keys of queue "default" are in different Cluster slots`, "CROSSSLOT",
		"fix: name the queue {default}", "Laravel 13.5+")
	if len(w.logLines("taking jobs from redis failed; retrying")) != 0 {
		t.Errorf("the worker retried CROSSSLOT:\n%s", w.log())
	}

	for _, tc := range []struct {
		version, queue string
		hashTags       bool
		n              int
	}{
		{"13.4.0", "{default}", false, 1},
		{"13.5.0", "default", true, 2},
	} {
		conn := &laraq.Connection{Client: client, Prefix: prefix, Release: laraq.Release{Major: 13, Minor: 4}, HashTags: tc.hashTags}
		if tc.hashTags {
			conn.Release.Minor = 5
		}
		dispatch(t, conn, tc.queue, tc.n)
		w := startWork(t, env, handlers(&r), args(tc.version, tc.queue, "--stop-when-empty")...)
		if rc := w.exit(t, 20*time.Second); rc != 0 || !r.once(tc.n) {
			t.Fatalf("%s queue %s: exit %d, runs %v:\n%s", tc.version, tc.queue, rc, r.of(tc.n), w.log())
		}
	}
}

// An ACL user denied EVALSHA, or a server without it (rename-command), stops the worker
// at its first pop with one line naming the command and the fix, exit 3; the password
// shows nowhere and the jobs are as they were.
func TestCommandTheWorkerNeedsStops(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name  string
		extra []string
		deny  string // the ACL rule of the worker's user ("": the default user)
		parts []string
	}{
		{"acl-user-without-evalsha", nil, "-evalsha",
			[]string{"the user may not run EVALSHA, which laraq needs", "NOPERM", "fix: grant it: ACL SETUSER worker +evalsha"}},
		// The restart signal's read (GET), after the first pops.
		{"acl-user-without-get", nil, "-get",
			[]string{"the user may not run GET, which laraq needs", "NOPERM", "fix: grant it: ACL SETUSER worker +get"}},
		{"server-without-evalsha", []string{"--rename-command", "EVALSHA", ""}, "",
			[]string{"the server does not know EVALSHA, which laraq needs", "unknown command", "fix: use Redis 5 or later"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			srv := testenv.PrivateRedis(t, tc.extra...)
			admin := srv.Client(t, 0)
			url := "redis://" + srv.Addr + "/0"
			if tc.deny != "" {
				if err := admin.Do(ctx, "acl", "setuser", "worker", "on", ">s3cret-pass", "~*", "&*", "+@all", tc.deny).Err(); err != nil {
					t.Fatal(err)
				}
				url = "redis://worker:s3cret-pass@" + srv.Addr + "/0"
			}
			// A plain RPUSH, as Laravel's push script does it: the dispatcher itself needs
			// EVALSHA.
			for _, p := range []string{`{"uuid":"u1","job":"x","data":{},"attempts":0}`, `{"uuid":"u2","job":"x","data":{},"attempts":0}`} {
				if err := admin.RPush(ctx, "app_queues:default", p).Err(); err != nil {
					t.Fatal(err)
				}
				if err := admin.RPush(ctx, "app_queues:default:notify", 1).Err(); err != nil {
					t.Fatal(err)
				}
			}
			before := queueState(t, admin, "app_queues:default")
			var r runs
			w := startWork(t, nil, handlers(&r), "--redis", url, "--prefix", "app_", "--laravel-version", release.String(), "--sleep", "0.1")
			if rc := w.exit(t, 10*time.Second); rc != laraq.ExitRedisSetup {
				t.Fatalf("exit %d, want %d:\n%s", rc, laraq.ExitRedisSetup, w.log())
			}
			oneLine(t, w, append([]string{"redis at " + srv.Addr + "/0: "}, tc.parts...)...)
			if strings.Contains(w.log(), "s3cret-pass") {
				t.Errorf("the password shows in the output:\n%s", w.log())
			}
			if after := queueState(t, admin, "app_queues:default"); !reflect.DeepEqual(after, before) || r.total() != 0 {
				t.Errorf("the jobs changed or ran (%d runs):\nbefore %v\nafter  %v", r.total(), before, after)
			}
		})
	}
}

// --stop-when-empty with Redis gone does not wait forever: after 10 s of failed pops it
// exits 1 with one line saying so. (Out of memory, which heals by itself, keeps the
// retry without --stop-when-empty: cli's TestWorkHealthUnderMaxmemory.)
func TestStopWhenEmptyWithRedisGone(t *testing.T) {
	t.Parallel()
	srv := testenv.PrivateRedis(t)
	srv.Stop() // nothing listens on its port now
	var r runs
	t0 := time.Now()
	w := startWork(t, nil, handlers(&r), "--redis", "redis://"+srv.Addr+"/0", "--prefix", "app_", "--laravel-version", release.String(),
		"--no-cache", "--sleep", "0.1", "--stop-when-empty")
	rc := w.exit(t, 30*time.Second)
	if rc != 1 || time.Since(t0) < 9*time.Second {
		t.Fatalf("exit %d after %v, want 1 after about 10 s:\n%s", rc, time.Since(t0), w.log())
	}
	oneLine(t, w, "queues could not be worked", "no pop succeeded for 10s")
}
