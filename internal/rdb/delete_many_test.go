package rdb

import (
	"context"
	"testing"
)

func TestDeleteReservedMany(t *testing.T) {
	other := `{"id":"o","attempts":1}`
	runCases(t, []opCase{{
		name: "exact members go, re-encoded and missing ones stay",
		seed: state{"queues:%Q:reserved": zset(sampleS12r, until, sampleS8r, until, other, until+1)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			got, errs, err := e.r.DeleteReservedMany(ctx, []Finished{
				{e.queue, []byte(sampleS12r)},
				{e.queue, []byte(reEncoded(t, sampleS8r))},
				{e.queue, []byte(other)},
				{e.queue, []byte(`{"id":"never","attempts":1}`)},
			})
			mustNoErr(t, err)
			want := []bool{true, false, true, false}
			for i := range want {
				if got[i] != want[i] || errs[i] != nil {
					t.Errorf("job %d: deleted %v (%v), want %v", i, got[i], errs[i], want[i])
				}
			}
		},
		want: state{"queues:%Q:reserved": zset(sampleS8r, until)},
	}, {
		name: "one job is a plain ZREM",
		seed: state{"queues:%Q:reserved": zset(sampleS8r, until)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			got, _, err := e.r.DeleteReservedMany(ctx, []Finished{{e.queue, []byte(sampleS8r)}})
			expectBool(t, "deleted", got[0], err, true)
			got, _, err = e.r.DeleteReservedMany(ctx, nil)
			if err != nil || len(got) != 0 {
				t.Errorf("no jobs: %v %v", got, err)
			}
		},
		want: state{},
	}})
}

func TestDeleteReservedManyReportsErrors(t *testing.T) {
	e := newEnv(t, variants()[0])
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, errs, err := e.r.DeleteReservedMany(ctx, []Finished{{e.queue, []byte("a")}, {e.queue, []byte("b")}})
	if err == nil || errs[0] == nil || errs[1] == nil {
		t.Fatalf("cancelled context: err %v, errs %v", err, errs)
	}
}
