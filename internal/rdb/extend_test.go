package rdb

import (
	"context"
	"testing"
)

func TestExtendReservation(t *testing.T) {
	other := `{"id":"o","attempts":2}`
	runCases(t, []opCase{{
		name: "the exact reserved bytes get the later expiry",
		seed: state{"queues:%Q:reserved": zset(sampleS8r, until, other, until)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			held, err := e.r.ExtendReservation(ctx, e.queue, []byte(sampleS8r), until+90)
			expectBool(t, "held", held, err, true)
		},
		want: state{"queues:%Q:reserved": zset(sampleS8r, until+90, other, until)},
	}, {
		name: "a reservation is never shortened",
		seed: state{"queues:%Q:reserved": zset(sampleS8r, until)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			held, err := e.r.ExtendReservation(ctx, e.queue, []byte(sampleS8r), until-30)
			expectBool(t, "held", held, err, true)
		},
		want: state{"queues:%Q:reserved": zset(sampleS8r, until)},
	}, {
		name: "a job no longer reserved is not added back",
		seed: state{"queues:%Q": list(sampleS8r), "queues:%Q:notify": ones(1), "queues:%Q:reserved": zset(other, until)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			held, err := e.r.ExtendReservation(ctx, e.queue, []byte(sampleS8r), until+90)
			expectBool(t, "held", held, err, false)
		},
		want: state{"queues:%Q": list(sampleS8r), "queues:%Q:notify": ones(1), "queues:%Q:reserved": zset(other, until)},
	}, {
		name: "re-encoded bytes extend nothing",
		seed: state{"queues:%Q:reserved": zset(sampleS8r, until)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			held, err := e.r.ExtendReservation(ctx, e.queue, []byte(reEncoded(t, sampleS8r)), until+90)
			expectBool(t, "held", held, err, false)
		},
		want: state{"queues:%Q:reserved": zset(sampleS8r, until)},
	}})
}
