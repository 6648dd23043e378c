package rdb

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

func TestSizesAndClear(t *testing.T) {
	full := state{
		"queues:%Q":          list("a", "b", "c"),
		"queues:%Q:notify":   ones(3),
		"queues:%Q:delayed":  zset("d", now),
		"queues:%Q:reserved": zset("r1", now, "r2", now),
		"queues:%Q:invalid":  list("bad"),
	}
	runCases(t, []opCase{{
		name: "sizes",
		seed: full,
		run: func(t *testing.T, ctx context.Context, e *env) {
			ready, delayed, reserved, err := e.r.Sizes(ctx, e.queue)
			mustNoErr(t, err)
			if ready != 3 || delayed != 1 || reserved != 2 {
				t.Errorf("sizes = %d %d %d", ready, delayed, reserved)
			}
			n, err := e.r.Size(ctx, e.queue)
			mustNoErr(t, err)
			if n != 6 {
				t.Errorf("size = %d", n)
			}
			head, err := e.r.OldestReady(ctx, e.queue)
			mustNoErr(t, err)
			if string(head) != "a" {
				t.Errorf("oldest = %q", head)
			}
			inv, err := e.r.Invalid(ctx, e.queue)
			mustNoErr(t, err)
			if len(inv) != 1 || string(inv[0]) != "bad" {
				t.Errorf("invalid = %q", inv)
			}
		},
		want: full,
	}, {
		name: "sizes of nothing",
		run: func(t *testing.T, ctx context.Context, e *env) {
			n, err := e.r.Size(ctx, e.queue)
			mustNoErr(t, err)
			head, err := e.r.OldestReady(ctx, e.queue)
			mustNoErr(t, err)
			if n != 0 || head != nil {
				t.Errorf("size %d oldest %q", n, head)
			}
		},
	}, {
		name: "clear deletes the four keys and keeps the invalid list",
		seed: full,
		run: func(t *testing.T, ctx context.Context, e *env) {
			n, err := e.r.Clear(ctx, e.queue)
			mustNoErr(t, err)
			if n != 6 {
				t.Errorf("cleared %d", n)
			}
		},
		want: state{"queues:%Q:invalid": list("bad")},
	}, {
		name: "clear invalid",
		seed: full,
		run: func(t *testing.T, ctx context.Context, e *env) {
			n, err := e.r.ClearInvalid(ctx, e.queue)
			mustNoErr(t, err)
			if n != 1 {
				t.Errorf("cleared %d", n)
			}
		},
		want: state{
			"queues:%Q":          list("a", "b", "c"),
			"queues:%Q:notify":   ones(3),
			"queues:%Q:delayed":  zset("d", now),
			"queues:%Q:reserved": zset("r1", now, "r2", now),
		},
	}})
}

func TestQueues(t *testing.T) {
	srv := testenv.RedisServer(t)
	c := srv.Client(t, 0)
	ctx := context.Background()
	prefix := testenv.Prefix(t)
	seedState(t, c, prefix, state{
		"queues:default":            list("x"),
		"queues:default:notify":     ones(1),
		"queues:emails:high:notify": ones(1),
		"queues:later:delayed":      zset("x", 1),
		"queues:{cl}:reserved":      zset("x", 1),
		"queues:broken:invalid":     list("x"),
		"queues:":                   list("x"), // no name: not a queue
		"queues::delayed":           zset("x", 1),
		"cache:queues:nope":         list("x"),
	})
	seedState(t, c, "other_"+prefix, state{"queues:foreign": list("x")})
	t.Cleanup(func() {
		for _, p := range []string{prefix, "other_" + prefix} {
			keys, _ := testenv.Keys(ctx, c, p)
			c.Del(ctx, keys...)
		}
	})
	for _, tags := range []bool{false, true} {
		r, err := New(c, Options{Prefix: prefix, ClusterHashTags: tags})
		mustNoErr(t, err)
		got, err := r.Queues(ctx)
		mustNoErr(t, err)
		want := []string{"broken", "default", "emails:high", "later", "{cl}"}
		if !slices.Equal(got, want) {
			t.Errorf("hash tags %v: queues = %q, want %q", tags, got, want)
		}
		// Every listed name maps back to the keys it was found under.
		if k := r.Keys("{cl}"); k.Reserved != prefix+"queues:{cl}:reserved" {
			t.Errorf("keys of {cl} = %+v", k)
		}
	}
}

func TestBlockForNotify(t *testing.T) {
	t.Parallel()
	ctx := context.Background()

	t.Run("token waiting", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, variants()[0])
		e.seed(t, state{"queues:%Q:notify": ones(2)})
		got, err := e.r.BlockForNotify(ctx, e.queue, time.Second)
		expectBool(t, "token", got, err, true)
		assertState(t, "one token consumed", e.dump(t), state{"queues:%Q:notify": ones(1)})
	})
	t.Run("timeout", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, variants()[0])
		start := time.Now()
		got, err := e.r.BlockForNotify(ctx, e.queue, 2*time.Second)
		expectBool(t, "token", got, err, false)
		if d := time.Since(start); d < 1900*time.Millisecond {
			t.Errorf("returned after %v, before the 2s timeout", d)
		}
	})
	t.Run("token pushed while waiting", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, variants()[3])
		go func() {
			time.Sleep(300 * time.Millisecond)
			_ = e.r.Push(context.Background(), e.queue, []byte(`{"attempts":0}`))
		}()
		got, err := e.r.BlockForNotify(ctx, e.queue, 0)
		expectBool(t, "token", got, err, true)
		assertState(t, "job left, token consumed", e.dump(t), state{"queues:%Q": list(`{"attempts":0}`)})
	})
	t.Run("cancel while waiting forever", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, variants()[0])
		cctx, cancel := context.WithCancel(ctx)
		time.AfterFunc(200*time.Millisecond, cancel)
		start := time.Now()
		got, err := e.r.BlockForNotify(cctx, e.queue, 0)
		if got || !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, %v; want false, context.Canceled", got, err)
		}
		if d := time.Since(start); d > BlockSlice+time.Second {
			t.Errorf("cancel noticed after %v", d)
		}
	})
	t.Run("negative timeout", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t, variants()[0])
		if _, err := e.r.BlockForNotify(ctx, e.queue, -time.Second); err == nil {
			t.Error("no error")
		}
	})
}
