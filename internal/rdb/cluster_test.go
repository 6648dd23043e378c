package rdb

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// TestCluster runs every operation through a go-redis ClusterClient on a real cluster:
// EVALSHA is routed by its first key, so it only works when all keys of a call share a
// slot, which the hash tags guarantee.
func TestCluster(t *testing.T) {
	t.Parallel()
	addrs := testenv.RedisCluster(t)
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	t.Cleanup(func() { _ = cc.Close() })
	ctx := context.Background()

	r, err := New(cc, Options{Prefix: "laravel_database_", ClusterHashTags: true})
	mustNoErr(t, err)
	mustNoErr(t, r.LoadScripts(ctx))
	queues := []string{"default", "emails", "{legacy}", "high", "low"}
	for _, q := range queues {
		mustNoErr(t, r.Push(ctx, q, []byte(sampleS8)))
		mustNoErr(t, r.PushBulk(ctx, q, toBytes([]string{sampleS12, `{"bad":1}`})))
		mustNoErr(t, r.Later(ctx, q, now-1, []byte(`{"attempts":0,"later":1}`)))
		if n, err := r.MigrateDelayed(ctx, q, now, NoLimit); n != 1 || err != nil {
			t.Fatalf("%s: migrate delayed %d %v", q, n, err)
		}
		job, reserved, err := r.Pop(ctx, q, now)
		if err != nil || string(job) != sampleS8 || string(reserved) != sampleS8r {
			t.Fatalf("%s: pop %s %s %v", q, job, reserved, err)
		}
		if ok, err := r.Release(ctx, q, reserved, now); !ok || err != nil {
			t.Fatalf("%s: release %v %v", q, ok, err)
		}
		jobs, err := r.PopMany(ctx, q, now+90, 3)
		if err != nil || len(jobs) != 3 || jobs[1].Invalid == nil {
			t.Fatalf("%s: pop many %+v %v", q, jobs, err)
		}
		if ok, err := r.DeleteReserved(ctx, q, jobs[0].Reserved); !ok || err != nil {
			t.Fatalf("%s: delete %v %v", q, ok, err)
		}
		if ok, err := r.Unreserve(ctx, q, jobs[2].Job, jobs[2].Reserved); !ok || err != nil {
			t.Fatalf("%s: unreserve %v %v", q, ok, err)
		}
		if n, err := r.MigrateReserved(ctx, q, now+90, NoLimit); n != 0 || err != nil {
			t.Fatalf("%s: migrate reserved %d %v", q, n, err)
		}
		if ok, err := r.BlockForNotify(ctx, q, time.Second); !ok || err != nil {
			t.Fatalf("%s: block %v %v", q, ok, err)
		}
		ready, delayed, reserved2, err := r.Sizes(ctx, q)
		if err != nil || ready != 1 || delayed != 1 || reserved2 != 0 {
			t.Fatalf("%s: sizes %d %d %d %v", q, ready, delayed, reserved2, err)
		}
		if n, err := r.Clear(ctx, q); n != 2 || err != nil {
			t.Fatalf("%s: clear %d %v", q, n, err)
		}
	}
	// The invalid lists are what is left; the names come back as they are in the keys.
	got, err := r.Queues(ctx)
	mustNoErr(t, err)
	if want := "[{default} {emails} {high} {legacy} {low}]"; fmt.Sprint(got) != want {
		t.Errorf("queues = %v, want %s", got, want)
	}
	slots := map[uint16]bool{}
	for _, q := range queues {
		slots[slot(r.Keys(q).Queue)] = true
	}
	if len(slots) < 2 {
		t.Errorf("queues all in one slot; the test does not exercise routing")
	}

	// A pipeline of deletions for queues in different slots is split per node.
	var finished []Finished
	for _, q := range queues {
		mustNoErr(t, r.Push(ctx, q, []byte(sampleS8)))
		jobs, err := r.PopTicket(ctx, q, now+90, 5, Ticket{Owner: "w", Seq: 1, Keep: time.Minute})
		if err != nil || len(jobs) != 1 {
			t.Fatalf("%s: ticketed pop %+v %v", q, jobs, err)
		}
		finished = append(finished, Finished{Queue: q, Reserved: jobs[0].Reserved})
	}
	finished = append(finished, Finished{Queue: "default", Reserved: []byte(sampleS8)}) // never reserved
	deleted, errs, err := r.DeleteReservedMany(ctx, finished)
	mustNoErr(t, err)
	if fmt.Sprint(deleted) != "[true true true true true false]" || fmt.Sprint(errs) != "[<nil> <nil> <nil> <nil> <nil> <nil>]" {
		t.Errorf("deleted across slots %v %v", deleted, errs)
	}
	for _, q := range queues {
		mustNoErr(t, cc.Del(ctx, r.Keys(q).Ticket("w")).Err())
	}

	// Without tags the keys of one queue live in different slots and the server refuses.
	plain, err := New(cc, Options{Prefix: "laravel_database_"})
	mustNoErr(t, err)
	if err := plain.Push(ctx, "default", []byte(sampleS8)); err == nil || !strings.Contains(err.Error(), "CROSSSLOT") {
		t.Errorf("push without hash tags: %v, want CROSSSLOT", err)
	}

	// Cache keys of different slots are read without MGET.
	cache, err := NewCache(cc, CacheKeys{RedisPrefix: "laravel_database_", Prefix: "laravel_cache_"})
	mustNoErr(t, err)
	mustNoErr(t, cache.Pause(ctx, "redis", "emails"))
	all, paused, err := cache.Paused(ctx, "redis", []string{"default", "emails", "high", "low"})
	if err != nil || all || fmt.Sprint(paused) != "[false true false false]" {
		t.Errorf("paused %v %v %v", all, paused, err)
	}
	if _, _, err := cache.CountJobException(ctx, "u", 2); err != nil {
		t.Error(err)
	}
	// So are the restart keys of several schemes.
	l8 := CacheKeys{RedisPrefix: "laravel_database_", Prefix: "laravel_cache", Separator: true}
	multi, err := NewCache(cc, cache.Keys(), l8)
	mustNoErr(t, err)
	mustNoErr(t, cc.Set(ctx, l8.Restart(), "1700000005", 0).Err())
	mustNoErr(t, cc.Set(ctx, cache.Keys().Restart(), "1700000003", 0).Err())
	if ts, ok, err := multi.RestartTimestamp(ctx); ts != 1700000005 || !ok || err != nil {
		t.Errorf("restart across schemes on a cluster: %d %v %v", ts, ok, err)
	}
	mustNoErr(t, cc.Set(ctx, l8.PausedAll(), "b:1;", 0).Err())
	if all, _, err := multi.Paused(ctx, "redis", []string{"default"}); !all || err != nil {
		t.Errorf("pauseAll of an alternative scheme on a cluster: %v %v", all, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.BlockForNotify(cctx, "default", 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled block: %v", err)
	}
}
