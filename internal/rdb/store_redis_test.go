package rdb

import (
	"context"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

func strTTL(v string, ttl int64) keyState { k := str(v); k.TTL = ttl; return k }

// TestRedisStore seeds the cache database, runs one store operation and asserts the whole
// key state and the answer: RedisStore's add, put, increment, forget and get, numbers
// stored raw and other values serialized, under 8.x's "prefix:" key scheme.
func TestRedisStore(t *testing.T) {
	const k = "laravel_cache:" // the store prefix with 8.x–10.x's separator
	type answer struct {
		ok    bool
		n     int64
		value string
	}
	cases := []struct {
		name string
		seed state
		run  func(ctx context.Context, s *RedisStore) (answer, error)
		want state
		ans  answer
	}{{
		name: "add a missing key",
		run: func(ctx context.Context, s *RedisStore) (answer, error) {
			ok, err := s.Add(ctx, "c0ffee:timer", "i:1700000060;", 60)
			return answer{ok: ok}, err
		},
		want: state{k + "c0ffee:timer": strTTL("1700000060", 60)},
		ans:  answer{ok: true},
	}, {
		name: "add keeps an existing value and its ttl",
		seed: state{k + "c0ffee": strTTL("3", 40)},
		run: func(ctx context.Context, s *RedisStore) (answer, error) {
			ok, err := s.Add(ctx, "c0ffee", "i:0;", 60)
			return answer{ok: ok}, err
		},
		want: state{k + "c0ffee": strTTL("3", 40)},
	}, {
		name: "add for no time lives a second",
		run: func(ctx context.Context, s *RedisStore) (answer, error) {
			ok, err := s.Add(ctx, "x", `s:3:"abc";`, 0)
			return answer{ok: ok}, err
		},
		want: state{k + "x": strTTL(`s:3:"abc";`, 1)},
		ans:  answer{ok: true},
	}, {
		name: "put stores numbers raw",
		seed: state{k + "n": strTTL("7", 5)},
		run: func(ctx context.Context, s *RedisStore) (answer, error) {
			if err := s.Put(ctx, "n", "i:1;", 60); err != nil {
				return answer{}, err
			}
			if err := s.Put(ctx, "f", "d:1.5;", 60); err != nil {
				return answer{}, err
			}
			if err := s.Put(ctx, "s", `s:2:"42";`, 60); err != nil {
				return answer{}, err
			}
			return answer{}, s.Put(ctx, "b", "b:1;", 60)
		},
		want: state{k + "n": strTTL("1", 60), k + "f": strTTL("1.5", 60), k + "s": strTTL("42", 60), k + "b": strTTL("b:1;", 60)},
	}, {
		name: "increment keeps the ttl",
		seed: state{k + "c0ffee": strTTL("1", 50)},
		run: func(ctx context.Context, s *RedisStore) (answer, error) {
			n, ok, err := s.Increment(ctx, "c0ffee", 1)
			return answer{ok: ok, n: n}, err
		},
		want: state{k + "c0ffee": strTTL("2", 50)},
		ans:  answer{ok: true, n: 2},
	}, {
		name: "increment creates a missing key without ttl",
		run: func(ctx context.Context, s *RedisStore) (answer, error) {
			n, ok, err := s.Increment(ctx, "c0ffee", 1)
			return answer{ok: ok, n: n}, err
		},
		want: state{k + "c0ffee": str("1")},
		ans:  answer{ok: true, n: 1},
	}, {
		name: "increment of a serialized value fails without error",
		seed: state{k + "flag": str("b:1;")},
		run: func(ctx context.Context, s *RedisStore) (answer, error) {
			n, ok, err := s.Increment(ctx, "flag", 1)
			return answer{ok: ok, n: n}, err
		},
		want: state{k + "flag": str("b:1;")},
	}, {
		name: "get returns a raw number raw",
		seed: state{k + "c0ffee": strTTL("4", 50), k + "b": str("b:1;")},
		run: func(ctx context.Context, s *RedisStore) (answer, error) {
			v, ok, err := s.Get(ctx, "c0ffee")
			if err != nil || !ok || v != "4" {
				return answer{ok: ok, value: v}, err
			}
			v, ok, err = s.Get(ctx, "b")
			return answer{ok: ok, value: v}, err
		},
		want: state{k + "c0ffee": strTTL("4", 50), k + "b": str("b:1;")},
		ans:  answer{ok: true, value: "b:1;"},
	}, {
		name: "forget",
		seed: state{k + "c0ffee": strTTL("4", 50), k + "c0ffee:timer": strTTL("1700000060", 50)},
		run: func(ctx context.Context, s *RedisStore) (answer, error) {
			return answer{}, s.Forget(ctx, "c0ffee")
		},
		want: state{k + "c0ffee:timer": strTTL("1700000060", 50)},
	}}
	c := testenv.RedisServer(t).Client(t, 0)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			p := testenv.Prefix(t)
			seedState(t, c, p, tc.seed)
			s, err := NewRedisStore(c, nil, CacheKeys{RedisPrefix: p, Prefix: "laravel_cache", Separator: true})
			mustNoErr(t, err)
			got, err := tc.run(ctx, s)
			mustNoErr(t, err)
			if got != tc.ans {
				t.Errorf("answer %+v, want %+v", got, tc.ans)
			}
			if s := dumpState(t, c, p, "*"); !sameState(s, tc.want, 1) {
				t.Errorf("state\n got: %s\nwant: %s", showState(s), showState(tc.want))
			}
		})
	}
}

// TestRedisStoreLocks: the store's locks live on the lock connection, named like cache
// keys.
func TestRedisStoreLocks(t *testing.T) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	cacheDB, lockDB := srv.Client(t, 1), srv.Client(t, 0)
	p := testenv.Prefix(t)
	s, err := NewRedisStore(cacheDB, lockDB, CacheKeys{RedisPrefix: p, Prefix: "laravel-cache-"})
	mustNoErr(t, err)
	ok, err := s.AcquireLock(ctx, "laravel-queue-overlap:App\\Jobs\\Sync:7", "owner-a", 30)
	expectBool(t, "acquire", ok, err, true)
	assertState(t, "lock connection", dumpState(t, lockDB, p, "*"),
		state{"laravel-cache-laravel-queue-overlap:App\\Jobs\\Sync:7": strTTL("owner-a", 30)})
	assertState(t, "cache connection", dumpState(t, cacheDB, p, "*"), state{})
	if owner, held, err := s.LockOwner(ctx, "laravel-queue-overlap:App\\Jobs\\Sync:7"); err != nil || !held || owner != "owner-a" {
		t.Errorf("owner %q %v %v", owner, held, err)
	}
	ok, err = s.ReleaseLock(ctx, "laravel-queue-overlap:App\\Jobs\\Sync:7", "owner-a")
	expectBool(t, "release", ok, err, true)
	assertState(t, "after release", dumpState(t, lockDB, p, "*"), state{})
}
