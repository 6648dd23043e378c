package rdb

import (
	"context"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

func TestLocks(t *testing.T) {
	ctx := context.Background()
	srv := testenv.RedisServer(t).Client(t, 0)
	p := testenv.Prefix(t)
	l, err := NewLocks(srv, CacheKeys{RedisPrefix: p, Prefix: "laravel_cache", Separator: true})
	if err != nil {
		t.Fatal(err)
	}
	key := p + "laravel_cache:laravel_unique_job:App\\Jobs\\X42"
	if got := l.Key(`laravel_unique_job:App\Jobs\X42`); got != key {
		t.Fatalf("key %q, want %q", got, key)
	}
	ok, err := l.Acquire(ctx, `laravel_unique_job:App\Jobs\X42`, "owner1", 60)
	expectBool(t, "first acquire", ok, err, true)
	ok, err = l.Acquire(ctx, `laravel_unique_job:App\Jobs\X42`, "owner2", 60)
	expectBool(t, "second acquire", ok, err, false)
	if ttl := srv.TTL(ctx, key).Val(); ttl <= 0 || ttl.Seconds() > 60 {
		t.Errorf("ttl %v, want 60 s", ttl)
	}
	if v := srv.Get(ctx, key).Val(); v != "owner1" {
		t.Errorf("value %q, want the owner as is", v)
	}
	ok, err = l.Release(ctx, `laravel_unique_job:App\Jobs\X42`, "owner2")
	expectBool(t, "release by another owner", ok, err, false)
	owner, held, err := l.Owner(ctx, `laravel_unique_job:App\Jobs\X42`)
	if err != nil || !held || owner != "owner1" {
		t.Errorf("owner %q %v %v", owner, held, err)
	}
	ok, err = l.Release(ctx, `laravel_unique_job:App\Jobs\X42`, "owner1")
	expectBool(t, "release by its owner", ok, err, true)

	// uniqueFor 0: SETNX, no expiry; forceRelease deletes it whoever holds it.
	ok, err = l.Acquire(ctx, "n", "o", 0)
	expectBool(t, "acquire forever", ok, err, true)
	if ttl := srv.TTL(ctx, p+"laravel_cache:n").Val(); ttl != -1 {
		t.Errorf("ttl %v, want none", ttl)
	}
	ok, err = l.ForceRelease(ctx, "n")
	expectBool(t, "force release", ok, err, true)
	ok, err = l.ForceRelease(ctx, "n")
	expectBool(t, "force release of nothing", ok, err, false)
}
