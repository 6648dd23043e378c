package laraq_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// noop is testdata/php/jobs_consumer.php's App\Jobs\Noop, the benchmark's job.
type noop struct {
	N int64 `php:"n"`
	laraq.Queueable
}

func (noop) PHPClass() string { return `App\Jobs\Noop` }

// benchRedis is the server of LARAQ_BENCH_REDIS (host:port, for go test -bench against a
// server of your own), else the test binary's own. (scripts/bench-worker.sh drives
// internal/bench instead.)
func benchRedis(tb testing.TB) (client *redis.Client, prefix string) {
	tb.Helper()
	if addr := os.Getenv("LARAQ_BENCH_REDIS"); addr != "" {
		c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 128})
		tb.Cleanup(func() { c.Close() })
		return c, os.Getenv("LARAQ_BENCH_PREFIX")
	}
	c := testenv.RedisServer(tb).Client(tb, 0)
	return c, testenv.Prefix(tb)
}

// fill queues n no-op jobs with Laravel-identical payloads, in batches.
func fill(tb testing.TB, client redis.UniversalClient, prefix, queue string, n int) {
	tb.Helper()
	ctx := context.Background()
	p, err := testkit.NewDispatcher(client, testkit.DispatchSetup{Prefix: prefix})
	if err != nil {
		tb.Fatal(err)
	}
	r, err := rdb.New(client, rdb.Options{Prefix: prefix})
	if err != nil {
		tb.Fatal(err)
	}
	batch := make([][]byte, 0, 1000)
	for i := range n {
		m, err := p.Prepare(noop{N: int64(i)}, laraq.OnQueue(queue))
		if err != nil {
			tb.Fatal(err)
		}
		batch = append(batch, m.Payload)
		if len(batch) == cap(batch) || i == n-1 {
			if err := r.PushBulk(ctx, queue, batch); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// commandCalls sums the calls of every command in INFO commandstats.
func commandCalls(tb testing.TB, client redis.UniversalClient) int64 {
	tb.Helper()
	info, err := client.Info(context.Background(), "commandstats").Result()
	if err != nil {
		tb.Fatal(err)
	}
	var total int64
	for _, line := range strings.Split(info, "\n") {
		if !strings.HasPrefix(line, "cmdstat_") || strings.HasPrefix(line, "cmdstat_info:") {
			continue
		}
		_, rest, _ := strings.Cut(line, "calls=")
		n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
		total += n
	}
	return total
}

func noopRegistry(count *atomic.Int64) *laraq.Jobs {
	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\Noop`, func(ctx context.Context, job *laraq.JobInfo) error {
		count.Add(1)
		return nil
	})
	return reg
}

// drain runs a consumer on queue until it is empty and returns the jobs run and the time.
func drain(tb testing.TB, client redis.UniversalClient, prefix, queue string, concurrency int) (int64, time.Duration) {
	tb.Helper()
	var count atomic.Int64
	c, err := testkit.NewWorker(client, testkit.Setup{
		Queues: []string{queue}, Prefix: prefix, Registry: noopRegistry(&count), Concurrency: concurrency,
		StopWhenEmpty: true, Logger: testkit.SlogTo(discard{}),
	})
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	if err := c.Run(context.Background()); !errors.Is(err, laraq.ErrQueueEmpty) {
		tb.Fatal(err)
	}
	return count.Load(), time.Since(start)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// BenchmarkDrain drains b.N queued no-op jobs with 16 goroutines (LARAQ_BENCH_CONCURRENCY
// to change) and reports jobs/s and the Redis commands each job cost (INFO commandstats,
// which counts the commands scripts run too).
func BenchmarkDrain(b *testing.B) {
	conc := 16
	if n, err := strconv.Atoi(os.Getenv("LARAQ_BENCH_CONCURRENCY")); err == nil && n > 0 {
		conc = n
	}
	client, prefix := benchRedis(b)
	queue := "bench" + testenv.RandomName(3)
	fill(b, client, prefix, queue, b.N)
	b.ReportAllocs()
	before := commandCalls(b, client)
	b.ResetTimer()
	n, d := drain(b, client, prefix, queue, conc)
	b.StopTimer()
	if n != int64(b.N) {
		b.Fatalf("ran %d of %d", n, b.N)
	}
	b.ReportMetric(float64(n)/d.Seconds(), "jobs/s")
	b.ReportMetric(float64(commandCalls(b, client)-before-1)/float64(n), "redis-cmds/job")
}

// BenchmarkPickupLatency pushes b.N jobs one at a time, 2 ms apart, to a worker that
// waits on the notify list (BlockFor), and reports the time from push to handler start.
func BenchmarkPickupLatency(b *testing.B) {
	client, prefix := benchRedis(b)
	queue := "lat" + testenv.RandomName(3)
	p50, p99 := pickupLatency(b, client, prefix, queue, b.N, 2*time.Millisecond)
	b.ReportMetric(float64(p50.Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(p99.Microseconds())/1000, "p99-ms")
}

func pickupLatency(tb testing.TB, client redis.UniversalClient, prefix, queue string, n int, every time.Duration) (p50, p99 time.Duration) {
	p, err := testkit.NewDispatcher(client, testkit.DispatchSetup{Prefix: prefix})
	if err != nil {
		tb.Fatal(err)
	}
	var mu sync.Mutex
	lat := make([]time.Duration, 0, n)
	started := make(chan struct{}, n)
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\Noop`, func(ctx context.Context, cmd *noop, job *laraq.JobInfo) error {
		d := time.Since(time.Unix(0, cmd.N))
		mu.Lock()
		lat = append(lat, d)
		mu.Unlock()
		started <- struct{}{}
		return nil
	})
	c, err := testkit.NewWorker(client, testkit.Setup{
		Queues: []string{queue}, Prefix: prefix, Registry: reg, Concurrency: 1,
		BlockFor: new(time.Duration(0)), Logger: testkit.SlogTo(discard{}),
	})
	if err != nil {
		tb.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	time.Sleep(50 * time.Millisecond) // idle in BLPOP
	tick := time.NewTicker(every)
	for range n {
		<-tick.C
		if _, err := p.Dispatch(ctx, noop{N: time.Now().UnixNano()}, laraq.OnQueue(queue)); err != nil {
			tb.Fatal(err)
		}
	}
	tick.Stop()
	for range n {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			tb.Fatal("a pushed job was not picked up")
		}
	}
	cancel()
	<-done
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100]
}
