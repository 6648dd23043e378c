package rdb

import (
	"context"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

func hash(ttl int64, kv ...string) keyState {
	h := map[string]string{}
	for i := 0; i < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	return keyState{Type: "hash", Hash: h, TTL: ttl}
}

// TestDurationLimiter seeds a limiter hash, runs one call and asserts the whole key state
// and the reply: windows opening, filling, refusing (and still counting), expiring, the
// string comparison at the window's end, and the read-only check.
func TestDurationLimiter(t *testing.T) {
	const name = "7ab6f0c2e1d43a6b0b5f1e4c9d2a8f31"
	at := func(sec int64, micro int64) time.Time { return time.Unix(sec, micro*1000) }
	const now = 1700000000
	type result struct {
		w   DurationWindow
		too bool
	}
	cases := []struct {
		name string
		seed state
		run  func(ctx context.Context, d *DurationLimiter) (result, error)
		want state
		res  result
	}{{
		name: "acquire opens a window",
		run: func(ctx context.Context, d *DurationLimiter) (result, error) {
			w, err := d.Acquire(ctx, name, 2, 60, at(now, 250000))
			return result{w: w}, err
		},
		want: state{name: hash(120, "start", "1700000000", "end", "1700000060", "count", "1")},
		res:  result{w: DurationWindow{Acquired: true, DecaysAt: now + 60, Remaining: 1}},
	}, {
		name: "acquire inside the window",
		seed: state{name: hash(100, "start", "1699999980", "end", "1700000040", "count", "1")},
		run: func(ctx context.Context, d *DurationLimiter) (result, error) {
			w, err := d.Acquire(ctx, name, 2, 60, at(now, 250000))
			return result{w: w}, err
		},
		want: state{name: hash(100, "start", "1699999980", "end", "1700000040", "count", "2")},
		res:  result{w: DurationWindow{Acquired: true, DecaysAt: 1700000040, Remaining: 0}},
	}, {
		name: "a refused attempt is counted too",
		seed: state{name: hash(100, "start", "1699999980", "end", "1700000040", "count", "2")},
		run: func(ctx context.Context, d *DurationLimiter) (result, error) {
			w, err := d.Acquire(ctx, name, 2, 60, at(now, 250000))
			return result{w: w}, err
		},
		want: state{name: hash(100, "start", "1699999980", "end", "1700000040", "count", "3")},
		res:  result{w: DurationWindow{Acquired: false, DecaysAt: 1700000040, Remaining: 0}},
	}, {
		name: "an expired window restarts",
		seed: state{name: hash(30, "start", "1699999900", "end", "1699999960", "count", "9")},
		run: func(ctx context.Context, d *DurationLimiter) (result, error) {
			w, err := d.Acquire(ctx, name, 5, 10, at(now, 1))
			return result{w: w}, err
		},
		want: state{name: hash(20, "start", "1700000000", "end", "1700000010", "count", "1")},
		res:  result{w: DurationWindow{Acquired: true, DecaysAt: now + 10, Remaining: 4}},
	}, {
		// "1700000040" <= "1700000040": the last whole second is inside ...
		name: "the end second itself is inside",
		seed: state{name: hash(100, "start", "1699999980", "end", "1700000040", "count", "1")},
		run: func(ctx context.Context, d *DurationLimiter) (result, error) {
			w, err := d.Acquire(ctx, name, 3, 60, at(1700000040, 0))
			return result{w: w}, err
		},
		want: state{name: hash(100, "start", "1699999980", "end", "1700000040", "count", "2")},
		res:  result{w: DurationWindow{Acquired: true, DecaysAt: 1700000040, Remaining: 1}},
	}, {
		// ... but "1700000040.5" > "1700000040" as strings: a fraction later it restarts.
		name: "a fraction after the end restarts",
		seed: state{name: hash(100, "start", "1699999980", "end", "1700000040", "count", "1")},
		run: func(ctx context.Context, d *DurationLimiter) (result, error) {
			w, err := d.Acquire(ctx, name, 3, 60, at(1700000040, 500000))
			return result{w: w}, err
		},
		want: state{name: hash(120, "start", "1700000040", "end", "1700000100", "count", "1")},
		res:  result{w: DurationWindow{Acquired: true, DecaysAt: 1700000100, Remaining: 2}},
	}, {
		name: "check without a window",
		run: func(ctx context.Context, d *DurationLimiter) (result, error) {
			w, too, err := d.TooManyAttempts(ctx, name, 2, 60, at(now, 0))
			return result{w: w, too: too}, err
		},
		want: state{},
		res:  result{w: DurationWindow{DecaysAt: 0, Remaining: now + 60}},
	}, {
		name: "check of a full window",
		seed: state{name: hash(100, "start", "1699999980", "end", "1700000040", "count", "3")},
		run: func(ctx context.Context, d *DurationLimiter) (result, error) {
			w, too, err := d.TooManyAttempts(ctx, name, 2, 60, at(now, 0))
			return result{w: w, too: too}, err
		},
		want: state{name: hash(100, "start", "1699999980", "end", "1700000040", "count", "3")},
		res:  result{w: DurationWindow{DecaysAt: 1700000040, Remaining: -1}, too: true},
	}, {
		name: "check of a window with room",
		seed: state{name: hash(100, "start", "1699999980", "end", "1700000040", "count", "1")},
		run: func(ctx context.Context, d *DurationLimiter) (result, error) {
			w, too, err := d.TooManyAttempts(ctx, name, 2, 60, at(now, 0))
			return result{w: w, too: too}, err
		},
		want: state{name: hash(100, "start", "1699999980", "end", "1700000040", "count", "1")},
		res:  result{w: DurationWindow{DecaysAt: 1700000040, Remaining: 1}},
	}, {
		name: "clear",
		seed: state{name: hash(100, "start", "1699999980", "end", "1700000040", "count", "1"), "other": str("x")},
		run: func(ctx context.Context, d *DurationLimiter) (result, error) {
			return result{}, d.Clear(ctx, name)
		},
		want: state{"other": str("x")},
	}}
	c := testenv.RedisServer(t).Client(t, 0)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			p := testenv.Prefix(t)
			seedState(t, c, p, tc.seed)
			d, err := NewDurationLimiter(c, p)
			mustNoErr(t, err)
			got, err := tc.run(ctx, d)
			mustNoErr(t, err)
			if got != tc.res {
				t.Errorf("reply %+v, want %+v", got, tc.res)
			}
			if s := dumpState(t, c, p, "*"); !sameState(s, tc.want, 1) {
				t.Errorf("state\n got: %s\nwant: %s", showState(s), showState(tc.want))
			}
		})
	}
}
