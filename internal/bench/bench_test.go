package bench_test

import (
	"context"
	"testing"

	"github.com/laraq/laraq/internal/bench"
	"github.com/laraq/laraq/internal/testenv"
)

// The harness measures what it says: every job filled is drained or popped once, and
// the counters it subtracts move by what the run did.
func TestMeasurements(t *testing.T) {
	ctx := context.Background()
	client := testenv.RedisServer(t).Client(t, 0)
	prefix := testenv.Prefix(t)

	mustNoErr(t, bench.Fill(ctx, client, prefix, "drain", 300))
	res, err := bench.Drain(ctx, client, prefix, []string{"drain"}, 8)
	mustNoErr(t, err)
	u := res.Usage
	// Each job costs a pop (in a script, with others) and a ZREM of its reserved copy.
	if res.Jobs != 300 || u.ScriptCalls < 1 || u.ScriptCalls > 300+10 || u.Commands < 2*300 || u.GoCPU <= 0 || u.Mallocs == 0 {
		t.Fatalf("drain of 300 jobs measured %d jobs, %+v", res.Jobs, u)
	}

	mustNoErr(t, bench.Fill(ctx, client, prefix, "yard", 250))
	res, err = bench.Yardstick(ctx, client, prefix, "yard", 100)
	mustNoErr(t, err)
	// 100 + 100 + 50, then an empty call (and an EVALSHA answered NOSCRIPT, then EVAL,
	// when the script is new to the server); each job is LPOP, ZADD, LPOP in the script,
	// plus the empty call's LPOP. A new connection may add its HELLO and CLIENT SETINFO.
	calls, own := res.Usage.ScriptCalls, res.Usage.Commands-res.Usage.ScriptCalls
	if res.Jobs != 250 || calls < 4 || calls > 5 || own < 3*250+1 || own > 3*250+1+3 {
		t.Fatalf("yardstick over 250 jobs measured %d jobs, %+v", res.Jobs, res.Usage)
	}
	if n, err := client.LLen(ctx, prefix+"queues:yard").Result(); err != nil || n != 0 {
		t.Fatalf("the yardstick left %d jobs (%v)", n, err)
	}
	if rss := bench.PeakRSS(); rss <= 0 {
		t.Fatalf("peak RSS %d", rss)
	}
}

func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
