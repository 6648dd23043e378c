package rdb

import (
	"context"
	"fmt"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// cacheEnv is a Cache on database 1 (Laravel's cache connection) with its own prefix.
func cacheEnv(t *testing.T, separator bool) (*Cache, *redis.Client, string) {
	t.Helper()
	srv := testenv.RedisServer(t)
	c := srv.Client(t, 1)
	prefix := testenv.Prefix(t)
	queueClient := srv.Client(t, 0)
	r, err := New(queueClient, Options{Prefix: prefix, Cache: CacheOptions{
		Client: c, Keys: CacheKeys{RedisPrefix: prefix, Prefix: "laravel_cache", Separator: separator},
	}})
	mustNoErr(t, err)
	t.Cleanup(func() {
		keys, _ := testenv.Keys(context.Background(), c, prefix)
		if len(keys) > 0 {
			c.Del(context.Background(), keys...)
		}
	})
	return r.Cache(), c, prefix
}

func TestCacheRestart(t *testing.T) {
	ctx := context.Background()
	cache, c, prefix := cacheEnv(t, true)
	if _, ok, err := cache.RestartTimestamp(ctx); ok || err != nil {
		t.Fatalf("absent signal: ok %v err %v", ok, err)
	}
	mustNoErr(t, cache.SignalRestart(ctx, now))
	assertState(t, "after restart", dumpState(t, c, prefix, "*"), state{"laravel_cache:illuminate:queue:restart": str("1700000000")})
	ts, ok, err := cache.RestartTimestamp(ctx)
	if ts != now || !ok || err != nil {
		t.Errorf("RestartTimestamp = %d %v %v", ts, ok, err)
	}
	mustNoErr(t, c.Set(ctx, cache.Keys().Restart(), "i:1700000001;", 0).Err())
	if ts, _, err := cache.RestartTimestamp(ctx); ts != now+1 || err != nil {
		t.Errorf("serialized int: %d %v", ts, err)
	}
	mustNoErr(t, c.Set(ctx, cache.Keys().Restart(), "garbage", 0).Err())
	if _, _, err := cache.RestartTimestamp(ctx); err == nil {
		t.Error("no error for a non-integer signal")
	}
}

func TestCachePause(t *testing.T) {
	ctx := context.Background()
	cache, c, prefix := cacheEnv(t, false)
	mustNoErr(t, cache.Pause(ctx, "redis", "emails"))
	mustNoErr(t, cache.Pause(ctx, "redis", "default"))
	mustNoErr(t, cache.Resume(ctx, "redis", "default"))
	assertState(t, "after pause", dumpState(t, c, prefix, "*"), state{"laravel_cacheilluminate:queue:paused:redis:emails": str("b:1;")})
	all, paused, err := cache.Paused(ctx, "redis", []string{"default", "emails", "other"})
	mustNoErr(t, err)
	if all || paused[0] || !paused[1] || paused[2] {
		t.Errorf("Paused = %v %v", all, paused)
	}
	mustNoErr(t, cache.PauseAll(ctx))
	if all, _, _ := cache.Paused(ctx, "redis", nil); !all {
		t.Error("global pause not seen")
	}
	mustNoErr(t, cache.ResumeAll(ctx))
	if all, _, _ := cache.Paused(ctx, "redis", nil); all {
		t.Error("global pause still seen")
	}
}

// TestCacheAlternativeSchemes: with alternative key schemes the restart signal is the
// greatest timestamp under any scheme, pause flags are set under any scheme, and writes
// keep to the primary scheme.
func TestCacheAlternativeSchemes(t *testing.T) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	c := srv.Client(t, 1)
	prefix := testenv.Prefix(t)
	t.Cleanup(func() {
		keys, _ := testenv.Keys(context.Background(), c, prefix)
		if len(keys) > 0 {
			c.Del(context.Background(), keys...)
		}
	})
	primary := CacheKeys{RedisPrefix: prefix, Prefix: "app_cache_"}
	l8 := CacheKeys{RedisPrefix: prefix, Prefix: "app_cache", Separator: true}
	l10 := CacheKeys{RedisPrefix: prefix, Prefix: "app_cache_", Separator: true}
	l12 := CacheKeys{RedisPrefix: prefix + "h-", Prefix: "app-cache-"}
	// The duplicate of the primary and of l8 are dropped.
	cache, err := NewCache(c, primary, l8, primary, l10, l12, l8)
	mustNoErr(t, err)
	if got := len(cache.Watched()); got != 4 {
		t.Fatalf("watched %d schemes, want 4: %v", got, cache.Watched())
	}
	if cache.Watched()[0] != primary {
		t.Errorf("first watched scheme %v, want the primary", cache.Watched()[0])
	}

	if ts, ok, err := cache.RestartTimestamp(ctx); ok || ts != 0 || err != nil {
		t.Fatalf("no key set: %d %v %v", ts, ok, err)
	}
	set := func(k, v string) { t.Helper(); mustNoErr(t, c.Set(ctx, k, v, 0).Err()) }
	restart := func(want int64) {
		t.Helper()
		ts, ok, err := cache.RestartTimestamp(ctx)
		if ts != want || !ok || err != nil {
			t.Errorf("RestartTimestamp = %d %v %v, want %d", ts, ok, err, want)
		}
	}
	set(l8.Restart(), "1700000010")
	restart(1700000010)
	set(primary.Restart(), "1700000005")
	restart(1700000010)
	set(l12.Restart(), "i:1700000020;")
	restart(1700000020)
	set(l10.Restart(), "1700000030")
	restart(1700000030)
	// A stray value under an alternative scheme is ignored; under the primary it is an error.
	set(l10.Restart(), "garbage")
	restart(1700000020)
	set(primary.Restart(), "garbage")
	if _, _, err := cache.RestartTimestamp(ctx); err == nil {
		t.Error("no error for a non-integer primary signal")
	}
	mustNoErr(t, c.Del(ctx, primary.Restart(), l10.Restart(), l12.Restart()).Err())
	restart(1700000010)
	// A key of no watched scheme changes nothing.
	set(prefix+"other_cache:illuminate:queue:restart", "1800000000")
	restart(1700000010)

	// Writes use the primary scheme only.
	mustNoErr(t, cache.SignalRestart(ctx, 1700000040))
	if v := c.Get(ctx, primary.Restart()).Val(); v != "1700000040" {
		t.Errorf("primary restart key %q", v)
	}
	if v := c.Get(ctx, l8.Restart()).Val(); v != "1700000010" {
		t.Errorf("SignalRestart wrote the l8 key: %q", v)
	}
	mustNoErr(t, cache.Pause(ctx, "redis", "emails"))
	if n := c.Exists(ctx, l8.Paused("redis", "emails"), l10.Paused("redis", "emails"), l12.Paused("redis", "emails")).Val(); n != 0 {
		t.Errorf("Pause wrote %d alternative keys", n)
	}

	queues := []string{"default", "emails", "high", "low"}
	paused := func(wantAll bool, want string) {
		t.Helper()
		all, p, err := cache.Paused(ctx, "redis", queues)
		if err != nil || all != wantAll || fmt.Sprint(p) != want {
			t.Errorf("Paused = %v %v %v, want %v %s", all, p, err, wantAll, want)
		}
	}
	paused(false, "[false true false false]")
	set(l12.Paused("redis", "high"), "b:1;")
	set(l8.Paused("redis", "default"), "b:0;") // falsy under one scheme
	set(l10.Paused("sqs", "low"), "b:1;")      // another connection
	paused(false, "[false true true false]")
	set(l10.Paused("redis", "default"), "b:1;") // truthy under another
	paused(false, "[true true true false]")
	set(l8.PausedAll(), "b:1;")
	paused(true, "[true true true false]")
	mustNoErr(t, cache.Resume(ctx, "redis", "emails"))
	mustNoErr(t, c.Del(ctx, l8.PausedAll(), l12.Paused("redis", "high"), l10.Paused("redis", "default")).Err())
	paused(false, "[false false false false]")
}

func TestCacheJobExceptions(t *testing.T) {
	ctx := context.Background()
	cache, c, prefix := cacheEnv(t, true)
	key := "laravel_cache:job-exceptions:u1"
	for i, want := range []int64{1, 2} {
		n, exceeded, err := cache.CountJobException(ctx, "u1", 3)
		if n != want || exceeded || err != nil {
			t.Fatalf("exception %d: count %d exceeded %v err %v", i+1, n, exceeded, err)
		}
	}
	s := dumpState(t, c, prefix, "*")
	if s[key].TTL < JobExceptionsTTL-2 || s[key].TTL > JobExceptionsTTL {
		t.Errorf("counter TTL %d, want about %d", s[key].TTL, JobExceptionsTTL)
	}
	s[key] = keyState{Type: s[key].Type, Str: s[key].Str}
	assertState(t, "counting", s, state{key: str("2")})
	n, exceeded, err := cache.CountJobException(ctx, "u1", 3)
	if n != 3 || !exceeded || err != nil {
		t.Fatalf("third exception: %d %v %v", n, exceeded, err)
	}
	assertState(t, "forgotten", dumpState(t, c, prefix, "*"), state{})

	// A counter reset to 0 by someone else is re-created with a fresh TTL, like PHP does.
	mustNoErr(t, c.Set(ctx, prefix+key, "0", 0).Err())
	if n, err := cache.IncrementJobExceptions(ctx, "u1"); n != 1 || err != nil {
		t.Fatalf("from 0: %d %v", n, err)
	}
	if ttl := dumpState(t, c, prefix, "*")[key].TTL; ttl < JobExceptionsTTL-2 {
		t.Errorf("TTL after reset = %d", ttl)
	}
	// A value INCRBY cannot count is an error, as it is for PHP.
	mustNoErr(t, c.Set(ctx, prefix+key, "b:1;", 0).Err())
	if _, err := cache.IncrementJobExceptions(ctx, "u1"); err == nil {
		t.Error("no error incrementing b:1;")
	}
}

func TestPHPTruthy(t *testing.T) {
	for v, want := range map[any]bool{
		nil: false, "0": false, "": false, "1": true, "0.0": true, " 0": true, "1700000000": true,
		"b:1;": true, "b:0;": false, "i:0;": false, "i:5;": true, "N;": false, `s:0:"";`: false,
		`s:1:"0";`: false, `s:1:"a";`: true, "a:0:{}": false, "a:1:{i:0;i:1;}": true, "d:0;": false,
		"d:0.5;": true, "garbage": false, `O:8:"stdClass":0:{}`: true,
	} {
		if got := phpTruthy(v); got != want {
			t.Errorf("phpTruthy(%#v) = %v, want %v", v, got, want)
		}
	}
}

func TestNewRejectsNilClients(t *testing.T) {
	if _, err := New(nil, Options{}); err == nil {
		t.Error("New(nil) gave no error")
	}
	if _, err := NewCache(nil, CacheKeys{}); err == nil {
		t.Error("NewCache(nil) gave no error")
	}
}
