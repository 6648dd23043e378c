package rdb

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// The parity tests run one operation twice on identical starting states: once with laraq,
// once with Laravel 8's own RedisQueue / cache store (testdata/php/queue_op.php), each
// under its own prefix on the same server, and require the same key state afterwards
// (every key, type, list order, zset members and scores, cache values and TTLs) and the
// same result. PHP's clock is frozen at `now` so scores computed from it are exact.

// side is where one implementation works: its prefix and queue name.
type side struct {
	prefix, queue, seg string
}

type parityCase struct {
	name string
	// naming: "" = prefix + "default"; "none" = no prefix, unique queue names;
	// "hyphen" = 12.x-style prefix; "tagged" = a `{name}` cluster-style queue.
	naming string
	seed   state // queue keys (%Q = the queue's key segment)
	cache  state // cache keys (database 1), relative to the Redis prefix
	stdin  string
	args   []string // queue_op.php operation and arguments
	// goOp performs the same operation with laraq and returns its result in the form
	// canonical() gives PHP's output.
	goOp func(t *testing.T, ctx context.Context, r *RDB, queue string) string
	// wantEmpty says the operation leaves no keys (else an empty state is suspicious).
	wantEmpty bool
}

func popResult(job, reserved []byte) string {
	return fmt.Sprintf("job=%s\nreserved=%s", job, reserved)
}

// canonical turns queue_op.php's output into the form goOp returns.
func canonical(t *testing.T, op string, out []byte) string {
	t.Helper()
	if op != "pop" && op != "pop-script" {
		return strings.TrimSpace(string(out))
	}
	var v struct{ Job, Reserved *string }
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatalf("php %s output %q: %v", op, out, err)
	}
	dec := func(s *string) []byte {
		if s == nil {
			return nil
		}
		b, err := base64.StdEncoding.DecodeString(*s)
		if err != nil {
			t.Fatalf("php %s output: %v", op, err)
		}
		return b
	}
	return popResult(dec(v.Job), dec(v.Reserved))
}

func goPop(t *testing.T, ctx context.Context, r *RDB, q string) string {
	// RedisQueue::pop with retry_after 90: migrate delayed, migrate reserved, pop.
	if _, err := r.MigrateDelayed(ctx, q, now, NoLimit); err != nil {
		t.Fatal(err)
	}
	if _, err := r.MigrateReserved(ctx, q, now, NoLimit); err != nil {
		t.Fatal(err)
	}
	job, reserved, err := r.Pop(ctx, q, now+90)
	mustNoErr(t, err)
	return popResult(job, reserved)
}

func parityCases() []parityCase {
	other := `{"uuid":"u2","job":"A@b","data":{"x":"a/b"},"id":"2","attempts":3}`
	bulk := payloads(150, `{"job":"A@b","data":{"n":%d},"id":"x","attempts":0}`)
	bulkJSON, _ := json.Marshal(func() []string {
		out := make([]string, len(bulk))
		for i, p := range bulk {
			out[i] = base64.StdEncoding.EncodeToString([]byte(p))
		}
		return out
	}())
	many := payloads(230, `{"n":%03d,"attempts":1}`)
	manyZ := make([]any, 0, 2*len(many))
	for i, p := range many {
		manyZ = append(manyZ, p, now-int64(i%7)) // many equal scores
	}
	pushS8 := func(t *testing.T, ctx context.Context, r *RDB, q string) string {
		mustNoErr(t, r.Push(ctx, q, []byte(sampleS8)))
		return ""
	}
	return []parityCase{{
		name:  "push",
		seed:  state{"queues:%Q": list(other), "queues:%Q:notify": ones(1)},
		stdin: sampleS8, args: []string{"push"},
		goOp: pushS8,
	}, {
		name: "push without prefix", naming: "none",
		stdin: sampleS8, args: []string{"push"},
		goOp: pushS8,
	}, {
		name: "push with a 12.x prefix", naming: "hyphen",
		stdin: sampleS8, args: []string{"push"},
		goOp: pushS8,
	}, {
		name:  "bulk",
		seed:  state{"queues:%Q": list(other)},
		stdin: string(bulkJSON), args: []string{"bulk"},
		goOp: func(t *testing.T, ctx context.Context, r *RDB, q string) string {
			mustNoErr(t, r.PushBulk(ctx, q, toBytes(bulk)))
			return ""
		},
	}, {
		name:  "later",
		seed:  state{"queues:%Q:delayed": zset(other, now+5)},
		stdin: sampleS12, args: []string{"later", fmt.Sprint(now + 60)},
		goOp: func(t *testing.T, ctx context.Context, r *RDB, q string) string {
			mustNoErr(t, r.Later(ctx, q, now+60, []byte(sampleS12)))
			return ""
		},
	}, {
		name: "pop S8",
		seed: state{"queues:%Q": list(sampleS8, other), "queues:%Q:notify": ones(2)},
		args: []string{"pop"}, goOp: goPop,
	}, {
		name: "pop S12",
		seed: state{"queues:%Q": list(sampleS12), "queues:%Q:notify": ones(1)},
		args: []string{"pop"}, goOp: goPop,
	}, {
		name: "pop after migrating due delayed and expired reserved jobs",
		seed: state{
			"queues:%Q":          list(other),
			"queues:%Q:notify":   ones(1),
			"queues:%Q:delayed":  zset(sampleS12, now-5, `{"d":2,"attempts":0}`, now+50, `{"d":3,"attempts":0}`, now),
			"queues:%Q:reserved": zset(sampleS8r, now-1, `{"r":2,"attempts":1}`, now+20),
		},
		args: []string{"pop"}, goOp: goPop,
	}, {
		name: "pop from an empty queue",
		seed: state{"queues:%Q:notify": ones(2), "queues:%Q:delayed": zset(other, now+1)},
		args: []string{"pop"}, goOp: goPop,
	}, {
		name: "pop without prefix", naming: "none",
		seed: state{"queues:%Q": list(sampleS8), "queues:%Q:notify": ones(1)},
		args: []string{"pop"}, goOp: goPop,
	}, {
		name: "pop from a cluster-named queue", naming: "tagged",
		seed: state{"queues:%Q": list(sampleS12), "queues:%Q:notify": ones(1), "queues:%Q:delayed": zset(sampleS8, now)},
		args: []string{"pop"}, goOp: goPop,
	}, {
		name: "pop script with numeric-string attempts",
		seed: state{"queues:%Q": list(`{"job":"X@y","attempts":"2","data":[]}`), "queues:%Q:notify": ones(1)},
		args: []string{"pop-script"},
		goOp: func(t *testing.T, ctx context.Context, r *RDB, q string) string {
			job, reserved, err := r.Pop(ctx, q, now+90)
			mustNoErr(t, err)
			return popResult(job, reserved)
		},
	}, {
		name:  "release",
		seed:  state{"queues:%Q:reserved": zset(sampleS8r, now+90, other, now+10)},
		stdin: sampleS8r, args: []string{"release", fmt.Sprint(now + 30)},
		goOp: func(t *testing.T, ctx context.Context, r *RDB, q string) string {
			ok, err := r.Release(ctx, q, []byte(sampleS8r), now+30)
			expectBool(t, "released", ok, err, true)
			return ""
		},
	}, {
		name:  "delete reserved",
		seed:  state{"queues:%Q:reserved": zset(sampleS8r, now+90, sampleS12r, now+90)},
		stdin: sampleS12r, args: []string{"delete"},
		goOp: func(t *testing.T, ctx context.Context, r *RDB, q string) string {
			ok, err := r.DeleteReserved(ctx, q, []byte(sampleS12r))
			expectBool(t, "deleted", ok, err, true)
			return ""
		},
	}, {
		name:  "delete with re-encoded bytes",
		seed:  state{"queues:%Q:reserved": zset(sampleS8r, now+90)},
		stdin: sampleS8, args: []string{"delete"},
		goOp: func(t *testing.T, ctx context.Context, r *RDB, q string) string {
			ok, err := r.DeleteReserved(ctx, q, []byte(sampleS8))
			expectBool(t, "deleted", ok, err, false)
			return ""
		},
	}, {
		name: "migrate delayed in chunks with equal scores",
		seed: state{"queues:%Q": list(other), "queues:%Q:notify": ones(1),
			"queues:%Q:delayed": zset(append(manyZ, "future", now+1)...)},
		args: []string{"migrate", "delayed"},
		goOp: func(t *testing.T, ctx context.Context, r *RDB, q string) string {
			n, err := r.MigrateDelayed(ctx, q, now, NoLimit)
			mustNoErr(t, err)
			return fmt.Sprint(n)
		},
	}, {
		name: "migrate reserved",
		seed: state{"queues:%Q:reserved": zset(sampleS8r, now, sampleS12r, now+1)},
		args: []string{"migrate", "reserved"},
		goOp: func(t *testing.T, ctx context.Context, r *RDB, q string) string {
			n, err := r.MigrateReserved(ctx, q, now, NoLimit)
			mustNoErr(t, err)
			return fmt.Sprint(n)
		},
	}, {
		name: "size",
		seed: state{"queues:%Q": list(other, sampleS8), "queues:%Q:delayed": zset(sampleS12, now),
			"queues:%Q:reserved": zset(sampleS8r, now), "queues:%Q:notify": ones(2)},
		args: []string{"size"},
		goOp: func(t *testing.T, ctx context.Context, r *RDB, q string) string {
			n, err := r.Size(ctx, q)
			mustNoErr(t, err)
			return fmt.Sprint(n)
		},
	}, {
		name: "clear",
		seed: state{"queues:%Q": list(other, sampleS8), "queues:%Q:delayed": zset(sampleS12, now),
			"queues:%Q:reserved": zset(sampleS8r, now), "queues:%Q:notify": ones(2)},
		args: []string{"clear"}, wantEmpty: true,
		goOp: func(t *testing.T, ctx context.Context, r *RDB, q string) string {
			n, err := r.Clear(ctx, q)
			mustNoErr(t, err)
			return fmt.Sprint(n)
		},
	}, {
		name:  "restart signal",
		cache: state{"laravel_cache:illuminate:queue:restart": str("1600000000")},
		args:  []string{"restart"},
		goOp: func(t *testing.T, ctx context.Context, r *RDB, q string) string {
			mustNoErr(t, r.Cache().SignalRestart(ctx, now))
			return ""
		},
	}, {
		name: "pause",
		args: []string{"pause", "redis"},
		goOp: func(t *testing.T, ctx context.Context, r *RDB, q string) string {
			mustNoErr(t, r.Cache().Pause(ctx, "redis", q))
			return ""
		},
	}, {
		name:  "resume",
		cache: state{"laravel_cache:illuminate:queue:paused:redis:default": str("b:1;"), "laravel_cache:illuminate:queue:paused:redis:other": str("b:1;")},
		args:  []string{"resume", "redis"}, wantEmpty: true,
		goOp: func(t *testing.T, ctx context.Context, r *RDB, q string) string {
			mustNoErr(t, r.Cache().Resume(ctx, "redis", q))
			return ""
		},
	}, {
		name: "first exception",
		args: []string{"exception", "u-1", "3"},
		goOp: countException("u-1", 3),
	}, {
		name:  "counted exception",
		cache: state{"laravel_cache:job-exceptions:u-1": {Type: "string", Str: ptr("1"), TTL: 500}},
		args:  []string{"exception", "u-1", "3"},
		goOp:  countException("u-1", 3),
	}, {
		name:  "exception reaching maxExceptions",
		cache: state{"laravel_cache:job-exceptions:u-1": {Type: "string", Str: ptr("2"), TTL: 500}},
		args:  []string{"exception", "u-1", "3"}, wantEmpty: true,
		goOp: countException("u-1", 3),
	}, {
		name:  "exception counter at 0",
		cache: state{"laravel_cache:job-exceptions:u-1": {Type: "string", Str: ptr("0"), TTL: 500}},
		args:  []string{"exception", "u-1", "1"}, wantEmpty: true,
		goOp: countException("u-1", 1),
	}}
}

func ptr(s string) *string { return &s }

func countException(uuid string, max int64) func(t *testing.T, ctx context.Context, r *RDB, q string) string {
	return func(t *testing.T, ctx context.Context, r *RDB, q string) string {
		_, exceeded, err := r.Cache().CountJobException(ctx, uuid, max)
		mustNoErr(t, err)
		if exceeded {
			return "failed"
		}
		return "counted"
	}
}

func TestParityWithPHP(t *testing.T) {
	testenv.NeedPHP(t)
	for _, client := range []string{"phpredis", "predis"} {
		t.Run(client, func(t *testing.T) {
			t.Parallel()
			for _, tc := range parityCases() {
				t.Run(tc.name, func(t *testing.T) { runParity(t, client, tc) })
			}
		})
	}
}

func newSide(t *testing.T, naming string) side {
	switch naming {
	case "none":
		q := "lqtest" + testenv.RandomName(6)
		return side{prefix: "", queue: q, seg: q}
	case "hyphen":
		return side{prefix: "lq" + testenv.RandomName(4) + "-database-", queue: "default", seg: "default"}
	case "tagged":
		return side{prefix: testenv.Prefix(t), queue: "{default}", seg: "{default}"}
	}
	return side{prefix: testenv.Prefix(t), queue: "default", seg: "default"}
}

// parityState is the queue keys (database 0) and, with a prefix, the cache keys (database 1)
// of one side, with the prefix removed and the queue segment replaced by %Q.
func parityState(t *testing.T, c0, c1 *redis.Client, s side) (queue, cache state) {
	t.Helper()
	queue = state{}
	for k, v := range dumpState(t, c0, s.prefix, "queues:"+escapeGlob(s.seg)+"*") {
		queue[strings.Replace(k, "queues:"+s.seg, "queues:%Q", 1)] = v
	}
	if s.prefix != "" && c1 != nil {
		cache = dumpState(t, c1, s.prefix, "*")
	}
	return queue, cache
}

func runParity(t *testing.T, client string, tc parityCase) {
	t.Helper()
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	c0, c1 := srv.Client(t, 0), srv.Client(t, 1)
	goSide, phpSide := newSide(t, tc.naming), newSide(t, tc.naming)
	for _, s := range []side{goSide, phpSide} {
		seedState(t, c0, s.prefix, tc.seed.withQueue(s.seg))
		if tc.cache != nil {
			seedState(t, c1, s.prefix, tc.cache)
		}
		t.Cleanup(func() {
			for _, c := range []*redis.Client{c0, c1} {
				pattern := escapeGlob(s.prefix) + "queues:" + escapeGlob(s.seg)
				if c == c1 {
					if s.prefix == "" {
						continue
					}
					pattern = escapeGlob(s.prefix)
				}
				if keys, _ := testenv.Keys(ctx, c, pattern); len(keys) > 0 {
					c.Del(ctx, keys...)
				}
			}
		})
	}

	r, err := New(c0, Options{Prefix: goSide.prefix, Cache: CacheOptions{
		Client: c1, Keys: CacheKeys{RedisPrefix: goSide.prefix, Prefix: "laravel_cache", Separator: true},
	}})
	mustNoErr(t, err)
	goOut := tc.goOp(t, ctx, r, goSide.queue)

	php := testenv.PHPEnv{Redis: srv, Prefix: phpSide.prefix, Client: client, CachePrefix: "laravel_cache", RetryAfter: 90}
	args := append([]string{"--queue=" + phpSide.queue, fmt.Sprintf("--now=%d", now)}, tc.args...)
	phpOut := canonical(t, tc.args[0], php.Run(t, []byte(tc.stdin), "queue_op.php", args...))

	if goOut != phpOut {
		t.Errorf("result differs\n  go: %q\n php: %q", goOut, phpOut)
	}
	goQ, goC := parityState(t, c0, c1, goSide)
	phpQ, phpC := parityState(t, c0, c1, phpSide)
	if !sameState(goQ, phpQ, 0) {
		t.Errorf("queue keys differ\n  go: %s\n php: %s", showState(goQ), showState(phpQ))
	}
	if !sameState(goC, phpC, 2) {
		t.Errorf("cache keys differ\n  go: %s\n php: %s", showState(goC), showState(phpC))
	}
	if len(goQ)+len(goC) == 0 && !tc.wantEmpty {
		t.Errorf("no keys left on either side; the comparison proves little")
	}
}

// TestParityDivergences pins the two places where laraq deliberately does not do what
// Laravel 8 does, so a change on either side is noticed.
func TestParityDivergences(t *testing.T) {
	testenv.NeedPHP(t)
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	c0 := srv.Client(t, 0)
	noAttempts := `{"job":"X@y","data":{"a":1}}`

	t.Run("payload without attempts", func(t *testing.T) {
		goSide, phpSide := newSide(t, ""), newSide(t, "")
		cleanupPrefix(t, c0, goSide.prefix)
		cleanupPrefix(t, c0, phpSide.prefix)
		seed := state{"queues:%Q": list(noAttempts), "queues:%Q:notify": ones(1)}
		seedState(t, c0, goSide.prefix, seed.withQueue("default"))
		seedState(t, c0, phpSide.prefix, seed.withQueue("default"))
		r, err := New(c0, Options{Prefix: goSide.prefix})
		mustNoErr(t, err)
		if _, _, err := r.Pop(ctx, "default", now+90); !errors.Is(err, ErrInvalidJob) {
			t.Fatalf("go pop: %v", err)
		}
		// phpredis turns the script error into a false reply: pop() just finds nothing.
		out := testenv.PHPEnv{Redis: srv, Prefix: phpSide.prefix}.Run(t, nil, "queue_op.php", "pop-script")
		if got := canonical(t, "pop-script", out); got != popResult(nil, nil) {
			t.Fatalf("php pop of a payload without attempts: %s", got)
		}
		goQ, _ := parityState(t, c0, nil, side{prefix: goSide.prefix, queue: "default", seg: "default"})
		phpQ, _ := parityState(t, c0, nil, side{prefix: phpSide.prefix, queue: "default", seg: "default"})
		// Laravel: the LPOP happened before the error, the job is gone (the token stays).
		assertState(t, "php", phpQ, state{"queues:%Q:notify": ones(1)})
		// laraq: kept whole in the invalid list.
		assertState(t, "go", goQ, state{"queues:%Q:invalid": list(noAttempts)})
	})

	t.Run("release after the reservation expired", func(t *testing.T) {
		goSide, phpSide := newSide(t, ""), newSide(t, "")
		cleanupPrefix(t, c0, goSide.prefix)
		cleanupPrefix(t, c0, phpSide.prefix)
		// The reservation expired and another worker moved the reserved copy back.
		seed := state{"queues:%Q": list(sampleS8r), "queues:%Q:notify": ones(1)}
		seedState(t, c0, goSide.prefix, seed.withQueue("default"))
		seedState(t, c0, phpSide.prefix, seed.withQueue("default"))
		r, err := New(c0, Options{Prefix: goSide.prefix})
		mustNoErr(t, err)
		ok, err := r.Release(ctx, "default", []byte(sampleS8r), now+30)
		expectBool(t, "released", ok, err, false)
		testenv.PHPEnv{Redis: srv, Prefix: phpSide.prefix}.Run(t, []byte(sampleS8r), "queue_op.php", "release", fmt.Sprint(now+30))
		goQ, _ := parityState(t, c0, nil, side{prefix: goSide.prefix, queue: "default", seg: "default"})
		phpQ, _ := parityState(t, c0, nil, side{prefix: phpSide.prefix, queue: "default", seg: "default"})
		// Laravel: a second copy in :delayed, the job will run twice.
		assertState(t, "php", phpQ, state{"queues:%Q": list(sampleS8r), "queues:%Q:notify": ones(1), "queues:%Q:delayed": zset(sampleS8r, now+30)})
		assertState(t, "go", goQ, state{"queues:%Q": list(sampleS8r), "queues:%Q:notify": ones(1)})
	})
}

// cleanupPrefix deletes every key under a non-empty prefix when the test ends.
func cleanupPrefix(t *testing.T, c *redis.Client, prefix string) {
	t.Cleanup(func() {
		ctx := context.Background()
		if keys, _ := testenv.Keys(ctx, c, escapeGlob(prefix)); len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
}
