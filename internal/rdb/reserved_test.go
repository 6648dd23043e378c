package rdb

import (
	"context"
	"encoding/json"
	"testing"
)

func expectBool(t *testing.T, what string, got bool, err error, want bool) {
	t.Helper()
	mustNoErr(t, err)
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

// reEncoded is what a Go program would get by decoding and marshalling the reserved copy:
// same data, different bytes.
func reEncoded(t testing.TB, s string) string {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) == s {
		t.Fatalf("re-encoding %s gave the same bytes", s)
	}
	return string(b)
}

func TestRelease(t *testing.T) {
	other := `{"id":"o","attempts":2}`
	runCases(t, []opCase{{
		name: "exact reserved bytes move to delayed",
		seed: state{"queues:%Q:reserved": zset(sampleS8r, until, other, until+1), "queues:%Q:delayed": zset(other, now+500)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			ok, err := e.r.Release(ctx, e.queue, []byte(sampleS8r), now+10)
			expectBool(t, "released", ok, err, true)
		},
		want: state{"queues:%Q:reserved": zset(other, until+1), "queues:%Q:delayed": zset(sampleS8r, now+10, other, now+500)},
	}, {
		name: "re-encoded bytes remove and add nothing",
		seed: state{"queues:%Q:reserved": zset(sampleS8r, until)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			ok, err := e.r.Release(ctx, e.queue, []byte(reEncoded(t, sampleS8r)), now)
			expectBool(t, "released", ok, err, false)
			ok, err = e.r.Release(ctx, e.queue, []byte(sampleS8), now)
			expectBool(t, "released with the original bytes", ok, err, false)
		},
		want: state{"queues:%Q:reserved": zset(sampleS8r, until)},
	}, {
		name: "expired reservation already migrated back is not duplicated",
		seed: state{"queues:%Q": list(sampleS8r), "queues:%Q:notify": ones(1)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			ok, err := e.r.Release(ctx, e.queue, []byte(sampleS8r), now+10)
			expectBool(t, "released", ok, err, false)
		},
		want: state{"queues:%Q": list(sampleS8r), "queues:%Q:notify": ones(1)},
	}})
}

func TestDeleteReserved(t *testing.T) {
	runCases(t, []opCase{{
		name: "exact reserved bytes",
		seed: state{"queues:%Q:reserved": zset(sampleS12r, until, sampleS8r, until)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			ok, err := e.r.DeleteReserved(ctx, e.queue, []byte(sampleS12r))
			expectBool(t, "deleted", ok, err, true)
		},
		want: state{"queues:%Q:reserved": zset(sampleS8r, until)},
	}, {
		name: "re-encoded or original bytes remove nothing",
		seed: state{"queues:%Q:reserved": zset(sampleS12r, until)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			ok, err := e.r.DeleteReserved(ctx, e.queue, []byte(reEncoded(t, sampleS12r)))
			expectBool(t, "deleted re-encoded", ok, err, false)
			ok, err = e.r.DeleteReserved(ctx, e.queue, []byte(sampleS12))
			expectBool(t, "deleted original", ok, err, false)
		},
		want: state{"queues:%Q:reserved": zset(sampleS12r, until)},
	}})
}

func TestUnreserve(t *testing.T) {
	next := `{"id":"n","attempts":0}`
	runCases(t, []opCase{{
		name: "original goes back to the head with a token",
		seed: state{"queues:%Q": list(next), "queues:%Q:notify": ones(1), "queues:%Q:reserved": zset(sampleS8r, until)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			ok, err := e.r.Unreserve(ctx, e.queue, []byte(sampleS8), []byte(sampleS8r))
			expectBool(t, "unreserved", ok, err, true)
		},
		want: state{"queues:%Q": list(sampleS8, next), "queues:%Q:notify": ones(2)},
	}, {
		name: "gone reservation pushes nothing",
		seed: state{"queues:%Q": list(sampleS8r), "queues:%Q:notify": ones(1)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			ok, err := e.r.Unreserve(ctx, e.queue, []byte(sampleS8), []byte(sampleS8r))
			expectBool(t, "unreserved", ok, err, false)
		},
		want: state{"queues:%Q": list(sampleS8r), "queues:%Q:notify": ones(1)},
	}, {
		name: "pop then unreserve restores the queue",
		seed: state{"queues:%Q": list(sampleS12, next), "queues:%Q:notify": ones(2)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			job, reserved, err := e.r.Pop(ctx, e.queue, until)
			mustNoErr(t, err)
			ok, err := e.r.Unreserve(ctx, e.queue, job, reserved)
			expectBool(t, "unreserved", ok, err, true)
		},
		want: state{"queues:%Q": list(sampleS12, next), "queues:%Q:notify": ones(2)},
	}})
}

func TestMigrate(t *testing.T) {
	ready := `{"id":"r","attempts":0}`
	many := payloads(250, `{"n":%03d,"attempts":1}`)
	manyZ := make([]any, 0, 2*len(many))
	for i, p := range many {
		// Scores run against the member order, so score order is what the list must show.
		manyZ = append(manyZ, p, now-int64(i))
	}
	reversed := make([]string, len(many))
	for i, p := range many {
		reversed[len(many)-1-i] = p
	}
	migrate := func(from Zset, limit int, want int64) func(t *testing.T, ctx context.Context, e *env) {
		return func(t *testing.T, ctx context.Context, e *env) {
			n, err := e.r.MigrateExpired(ctx, from, e.queue, now, limit)
			mustNoErr(t, err)
			if n != want {
				t.Errorf("moved %d, want %d", n, want)
			}
		}
	}
	runCases(t, []opCase{{
		name: "due delayed jobs appended in score order with a token each",
		seed: state{"queues:%Q": list(ready), "queues:%Q:notify": ones(1),
			"queues:%Q:delayed": zset("c", now, "a", now-10, "b", now-5, "d", now+1)},
		run:  migrate(Delayed, NoLimit, 3),
		want: state{"queues:%Q": list(ready, "a", "b", "c"), "queues:%Q:notify": ones(4), "queues:%Q:delayed": zset("d", now+1)},
	}, {
		name: "expired reservations",
		seed: state{"queues:%Q:reserved": zset(sampleS8r, now-1, sampleS12r, now+30)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			n, err := e.r.MigrateReserved(ctx, e.queue, now, NoLimit)
			mustNoErr(t, err)
			if n != 1 {
				t.Errorf("moved %d", n)
			}
		},
		want: state{"queues:%Q": list(sampleS8r), "queues:%Q:notify": ones(1), "queues:%Q:reserved": zset(sampleS12r, now+30)},
	}, {
		name: "nothing due",
		seed: state{"queues:%Q:delayed": zset("x", now+1)},
		run:  migrate(Delayed, NoLimit, 0),
		want: state{"queues:%Q:delayed": zset("x", now+1)},
	}, {
		name: "limit with equal scores takes the lowest ranks only",
		seed: state{"queues:%Q:delayed": zset("d", now, "c", now, "b", now, "a", now, "e", now-50, "f", now+1)},
		run:  migrate(Delayed, 3, 3),
		want: state{"queues:%Q": list("e", "a", "b"), "queues:%Q:notify": ones(3), "queues:%Q:delayed": zset("c", now, "d", now, "f", now+1)},
	}, {
		name: "limit larger than the due set",
		seed: state{"queues:%Q:delayed": zset("a", now, "b", now+1)},
		run:  migrate(Delayed, 10, 1),
		want: state{"queues:%Q": list("a"), "queues:%Q:notify": ones(1), "queues:%Q:delayed": zset("b", now+1)},
	}, {
		name: "limit 0 means no limit",
		seed: state{"queues:%Q:delayed": zset("a", now, "b", now)},
		run:  migrate(Delayed, 0, 2),
		want: state{"queues:%Q": list("a", "b"), "queues:%Q:notify": ones(2)},
	}, {
		name: "more than one chunk of 100",
		seed: state{"queues:%Q:reserved": zset(manyZ...)},
		run:  migrate(Reserved, NoLimit, 250),
		want: state{"queues:%Q": list(reversed...), "queues:%Q:notify": ones(250)},
	}, {
		name: "more than one chunk with a limit",
		seed: state{"queues:%Q:delayed": zset(manyZ...)},
		run:  migrate(Delayed, 120, 120),
		want: state{"queues:%Q": list(reversed[:120]...), "queues:%Q:notify": ones(120), "queues:%Q:delayed": zset(manyZ[:2*130]...)},
	}})
}

func TestMigrateUnknownSource(t *testing.T) {
	e := newEnv(t, variants()[0])
	if _, err := e.r.MigrateExpired(context.Background(), Zset(9), e.queue, now, 0); err == nil {
		t.Fatal("no error for an unknown zset")
	}
}
