package rdb

import (
	"context"
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
	for s, want := range map[string]bool{
		"1": true, "-1.5": true, ".5": true, "5.": true, "1e3": true, " 1 ": true, "+0": true,
		"": false, "e3": false, "1e": false, "0x1A": false, "1 2": false, ".": false, "-": false,
	} {
		if got := isNumeric(s); got != want {
			t.Errorf("isNumeric(%q) = %v, want %v", s, got, want)
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
