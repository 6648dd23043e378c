package bench_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/bench"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
)

// FillWork queues what it is asked for — payload length, spread, the due share left in
// :delayed and expired in :reserved — and a drain over the queues in priority order
// runs every job once, those brought back by its migrations included.
func TestFillWorkThenDrain(t *testing.T) {
	ctx := context.Background()
	client := testenv.RedisServer(t).Client(t, 0)
	prefix := testenv.Prefix(t)
	r, err := rdb.New(client, rdb.Options{Prefix: prefix})
	mustNoErr(t, err)
	queues := []string{"high", "default", "low"}

	filled, err := bench.FillWork(ctx, client, prefix, bench.Work{Queues: queues, Jobs: 301, PayloadBytes: 8192, Due: 0.1})
	mustNoErr(t, err)
	if filled.PayloadBytes < 8192-8 || filled.PayloadBytes > 8192+8 || filled.Delayed != 15 || filled.Reserved != 15 {
		t.Fatalf("filled %+v, want 8 KB payloads, 15 delayed, 15 reserved", filled)
	}
	now := strconv.FormatInt(time.Now().Unix(), 10)
	for i, q := range queues {
		ready, delayed, reserved, err := r.Sizes(ctx, q)
		mustNoErr(t, err)
		want := int64(100)
		if i == 0 {
			want = 101 // 301 jobs over three queues
		}
		// 10% of each queue's jobs is due: half delayed, half reserved (rounded).
		if ready+delayed+reserved != want || delayed != 5 || reserved != 5 {
			t.Fatalf("queue %s: %d ready, %d delayed, %d reserved; want %d in all, 5 delayed, 5 reserved", q, ready, delayed, reserved, want)
		}
		k := r.Keys(q)
		late, _ := client.ZCount(ctx, k.Delayed, "("+now, "+inf").Result()
		live, _ := client.ZCount(ctx, k.Reserved, now, "+inf").Result()
		if late != 0 || live != 0 {
			t.Fatalf("queue %s: %d delayed jobs not yet due, %d reservations not expired", q, late, live)
		}
		head, err := client.LIndex(ctx, k.Queue, 0).Result()
		mustNoErr(t, err)
		if len(head) < 8192-8 || len(head) > 8192+8 || !strings.Contains(head, `App\\Jobs\\Padded`) {
			t.Fatalf("queue %s holds a %d-byte payload: %.200s", q, len(head), head)
		}
	}

	res, err := bench.Drain(ctx, client, prefix, queues, 16)
	mustNoErr(t, err)
	if res.Jobs != 301 {
		t.Fatalf("the drain ran %d of 301 jobs", res.Jobs)
	}
	for _, q := range queues {
		if ready, delayed, reserved, err := r.Sizes(ctx, q); err != nil || ready+delayed+reserved != 0 {
			t.Fatalf("queue %s left %d ready, %d delayed, %d reserved (%v)", q, ready, delayed, reserved, err)
		}
	}

	// Last: every job in the last queue; without a size, the no-op.
	filled, err = bench.FillWork(ctx, client, prefix, bench.Work{Queues: []string{"a", "b"}, Jobs: 10, Last: true})
	mustNoErr(t, err)
	a, _ := client.LLen(ctx, r.Keys("a").Queue).Result()
	b, _ := client.LLen(ctx, r.Keys("b").Queue).Result()
	if a != 0 || b != 10 || filled.PayloadBytes > 700 {
		t.Fatalf("Last: %d and %d jobs, payloads of %d bytes", a, b, filled.PayloadBytes)
	}
}

// On a Redis Cluster, Take adds up every master's counters: a drain of queues on three
// different masters counts the commands of all three.
func TestTakeSumsClusterMasters(t *testing.T) {
	ctx := context.Background()
	addrs := testenv.RedisCluster(t)
	client := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs})
	defer client.Close()
	prefix := testenv.Prefix(t)

	// One queue per master; each name is its own hash tag, as Laravel ≤13.4 applications
	// name cluster queues.
	masters := map[string]bool{}
	var queues []string
	for i := 0; len(queues) < 3 && i < 1000; i++ {
		q := "{q" + strconv.Itoa(i) + "}"
		m, err := client.MasterForKey(ctx, prefix+"queues:"+q)
		mustNoErr(t, err)
		if addr := m.Options().Addr; !masters[addr] {
			masters[addr] = true
			queues = append(queues, q)
		}
	}
	if len(queues) != 3 {
		t.Fatalf("found queues on %d masters", len(queues))
	}
	_, err := bench.FillWork(ctx, client, prefix, bench.Work{Queues: queues, Jobs: 300})
	mustNoErr(t, err)
	res, err := bench.Drain(ctx, client, prefix, queues, 8)
	mustNoErr(t, err)
	// Each job costs five or so commands on its queue's master (its share of a pop's
	// scripted LRANGE, ZADD, LTRIMs and ticket, a ZREM of its reserved copy): about 1,600
	// in all, of which one master's counters hold a third.
	if u := res.Usage; res.Jobs != 300 || u.Commands < 1000 || u.ScriptCalls < 3 || u.RedisCPU <= 0 {
		t.Fatalf("drain of 300 jobs on three masters measured %d jobs, %+v", res.Jobs, u)
	}
}

// The padded jobs are Laravel's own: Laravel 8.83's queue:work runs every one of them
// (testdata/php/jobs_consumer.php's App\Jobs\Padded), as it runs the no-ops.
func TestPaddedJobsRunInPHP(t *testing.T) {
	testenv.NeedPHP(t)
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	client := srv.Client(t, 0)
	prefix := testenv.Prefix(t)
	_, err := bench.FillWork(ctx, client, prefix, bench.Work{Queues: []string{"padded"}, Jobs: 20, PayloadBytes: 64 << 10})
	mustNoErr(t, err)
	out := testenv.PHPEnv{Redis: srv, Prefix: prefix}.Run(t, nil, "work.php", "--queue=padded", "--stop-when-empty", "--sleep=0")
	if done := strings.Count(string(out), `Processed:  App\Jobs\Padded`); done != 20 {
		t.Fatalf("PHP processed %d of 20 padded jobs:\n%s", done, out)
	}
	if n, err := client.Exists(ctx, prefix+"queues:padded", prefix+"queues:padded:reserved").Result(); err != nil || n != 0 {
		t.Fatalf("%d keys of the queue left (%v)", n, err)
	}
}
