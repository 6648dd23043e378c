package rdb

import (
	"context"
	"testing"
)

// The yardstick must do exactly Laravel's pop effect, job for job, or the benchmarks
// compare the pop with something else: it leaves the state PopMany leaves (which the
// parity tests hold to Laravel's own pop), and stops at max.
func TestLaravelPopEffectIsThePopsEffect(t *testing.T) {
	ctx := context.Background()
	seed := state{"queues:%Q": list(sampleS8, sampleS12, `{"attempts":"7","x":[]}`, `{"attempts":1}`), "queues:%Q:notify": ones(3)}
	ours, yard := newEnv(t, variants()[0]), newEnv(t, variants()[0])
	ours.seed(t, seed)
	yard.seed(t, seed)
	jobs, err := ours.r.PopMany(ctx, ours.queue, until, 10)
	mustNoErr(t, err)
	n, err := yard.r.LaravelPopEffect(ctx, yard.queue, until, 10)
	mustNoErr(t, err)
	if n != len(jobs) || n != 4 {
		t.Fatalf("the yardstick took %d jobs, PopMany %d; want 4", n, len(jobs))
	}
	assertState(t, "yardstick vs PopMany", yard.dump(t), ours.dump(t))

	limited := newEnv(t, variants()[0])
	limited.seed(t, seed)
	n, err = limited.r.LaravelPopEffect(ctx, limited.queue, until, 1)
	mustNoErr(t, err)
	want := state{"queues:%Q": list(sampleS12, `{"attempts":"7","x":[]}`, `{"attempts":1}`), "queues:%Q:notify": ones(2),
		"queues:%Q:reserved": zset(sampleS8r, until)}
	if n != 1 {
		t.Fatalf("max 1 took %d", n)
	}
	assertState(t, "max 1", limited.dump(t), want)
}
