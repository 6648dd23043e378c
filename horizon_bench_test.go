package laraq_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/bench"
	"github.com/laraq/laraq/internal/testkit"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// benchStep is Laraq\HorizonTest\Step (testdata/php/horizon/jobs.php) with the plan
// ["ok"]: a job Horizon's PHP harness runs as well as a Go worker.
type benchStep struct {
	Tries int64    `php:"tries"`
	Plan  []string `php:"plan"`
	User  any      `php:"user"`
	Users any      `php:"users"`
	Note  string   `php:"note"`
	laraq.Queueable
}

func (benchStep) PHPClass() string { return `Laraq\HorizonTest\Step` }

// hzBench is the connection of a Horizon benchmark: the queue's prefix and Horizon's.
type hzBench struct {
	client   *redis.Client
	prefix   string
	hzPrefix string
}

func newHzBench(tb testing.TB) *hzBench {
	tb.Helper()
	base := "lq" + testenv.RandomName(4)
	return &hzBench{client: testenv.RedisServer(tb).Client(tb, 0), prefix: base + "_database_", hzPrefix: base + "_horizon:"}
}

func (b *hzBench) conn(horizon bool) *laraq.Connection {
	c := &laraq.Connection{Client: b.client, Prefix: b.prefix, Release: laraq.Release{Major: 11, Minor: 56}, Cache: laraq.CacheStore{Disabled: true}}
	if horizon {
		c.Horizon = &laraq.HorizonOptions{Prefix: b.hzPrefix}
	}
	return c
}

// fill dispatches n Step jobs onto queue, through Horizon when horizon is set (prepared
// payloads and pushed records, as a Horizon application's dispatches leave them).
func (b *hzBench) fill(tb testing.TB, queue string, n int, horizon bool) {
	tb.Helper()
	d, err := laraq.NewDispatcher(b.conn(horizon))
	if err != nil {
		tb.Fatal(err)
	}
	batch := make([]any, 0, 500)
	for i := range n {
		batch = append(batch, benchStep{Tries: 3, Plan: []string{"ok"}})
		if len(batch) == cap(batch) || i == n-1 {
			if _, err := d.DispatchBulk(context.Background(), batch, laraq.OnQueue(queue)); err != nil {
				tb.Fatal(err)
			}
			batch = batch[:0]
		}
	}
}

// drain runs a worker on queue until it is empty and returns the jobs run and the time.
func (b *hzBench) drain(tb testing.TB, queue string, concurrency int, horizon bool) (int64, time.Duration) {
	tb.Helper()
	var count atomic.Int64
	reg := laraq.NewJobs()
	reg.HandleFunc(`Laraq\HorizonTest\Step`, func(ctx context.Context, job *laraq.JobInfo) error {
		count.Add(1)
		return nil
	})
	w, err := laraq.NewWorker(b.conn(horizon), reg, laraq.WorkerConfig{Queues: []string{queue}, Concurrency: concurrency,
		StopWhenEmpty: true, Logger: testkit.SlogTo(discard{})})
	if err != nil {
		tb.Fatal(err)
	}
	start := time.Now()
	if err := w.Run(context.Background()); !errors.Is(err, laraq.ErrQueueEmpty) {
		tb.Fatal(err)
	}
	return count.Load(), time.Since(start)
}

// BenchmarkDrainHorizon drains b.N Step jobs that Horizon's queue pushed twice with 16
// goroutines, Horizon's records off and on, and reports both rates and on/off (target
// >= 0.7).
func BenchmarkDrainHorizon(b *testing.B) {
	hb := newHzBench(b)
	q := "hz" + testenv.RandomName(3)
	hb.fill(b, q+"off", b.N, true)
	hb.fill(b, q+"on", b.N, true)
	b.ReportAllocs()
	b.ResetTimer()
	nOff, dOff := hb.drain(b, q+"off", 16, false)
	nOn, dOn := hb.drain(b, q+"on", 16, true)
	b.StopTimer()
	if nOff != int64(b.N) || nOn != int64(b.N) {
		b.Fatalf("ran %d and %d of %d", nOff, nOn, b.N)
	}
	off, on := float64(nOff)/dOff.Seconds(), float64(nOn)/dOn.Seconds()
	b.ReportMetric(off, "jobs/s-off")
	b.ReportMetric(on, "jobs/s-horizon")
	b.ReportMetric(on/off, "horizon/off")
}

// TestHorizonBenchProcess is scripts/bench-horizon.sh's way into this package; it does
// nothing unless LARAQ_HORIZON_BENCH_N is set. In one run, on one redis-server, it
// drains N Step jobs with Horizon's PHP worker path (testdata/php/horizon/op.php work:
// Laravel's Worker on Horizon's RedisQueue with its listeners, one process, the Laravel
// 11 peer), then, LARAQ_HORIZON_BENCH_ROUNDS times, the same jobs (pushed through
// Horizon's queue every time) with the Go worker at concurrency 16 with Horizon's records
// off and on, back to back in alternating order. It prints the best rates, each side's
// CPU per job (the server's and this process's, medians of the rounds) and the median of
// the rounds' on/off ratios: each ratio pairs two runs a second apart, so a machine whose
// speed drifts (other tenants of a shared host) moves both alike.
func TestHorizonBenchProcess(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("LARAQ_HORIZON_BENCH_N"))
	if n <= 0 {
		return
	}
	rounds, _ := strconv.Atoi(os.Getenv("LARAQ_HORIZON_BENCH_ROUNDS"))
	rounds = max(rounds, 1)
	hb := newHzBench(t)
	srv := testenv.RedisServer(t)
	php := testenv.HorizonPHP{Major: 11, Redis: srv, Prefix: hb.prefix, HorizonPrefix: hb.hzPrefix}
	hb.fill(t, "php", n, true)
	cmd := php.Command(t, "work")
	cmd.Stdin = strings.NewReader(fmt.Sprintf(`{"queue": %q, "max": %d}`, "php", n+1))
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("php: %v\n%s", err, stderr.String())
	}
	phpRate := float64(n) / time.Since(start).Seconds()
	if !strings.Contains(out.String(), fmt.Sprintf(`"runs":%d`, n)) {
		t.Fatalf("PHP ran %s, want %d jobs", out.String(), n)
	}
	var offRate, onRate float64
	ratios := make([]float64, 0, rounds)
	perJob := map[bool][]jobCost{} // each round's CPU per job, records off and on
	for round := range rounds {
		rate := map[bool]float64{}
		order := []bool{false, true}
		if round%2 == 1 {
			order = []bool{true, false}
		}
		for _, horizon := range order {
			// The same jobs both times, pushed by Horizon's queue as in an application
			// that runs Horizon: only the worker's bookkeeping differs.
			queue := fmt.Sprintf("r%dgo%v", round, horizon)
			hb.fill(t, queue, n, true)
			before := hb.usage(t)
			ran, d := hb.drain(t, queue, 16, horizon)
			if ran != int64(n) {
				t.Fatalf("Go ran %d of %d", ran, n)
			}
			rate[horizon] = float64(n) / d.Seconds()
			perJob[horizon] = append(perJob[horizon], costPerJob(before, hb.usage(t), n))
		}
		offRate, onRate = max(offRate, rate[false]), max(onRate, rate[true])
		ratios = append(ratios, rate[true]/rate[false])
	}
	ratio := median(ratios)
	verdict := "met"
	if ratio < 0.8 { // issue 22
		verdict = "MISSED"
	}
	fmt.Printf("\n%d Step jobs per run, one redis-server; Go: best of %d rounds\n", n, rounds)
	fmt.Printf("%-46s %10s %12s\n", "worker", "jobs/s", "vs PHP")
	fmt.Printf("%-46s %10.0f %12s\n", "PHP queue:work on Horizon's queue (1 process)", phpRate, "1.0x")
	fmt.Printf("%-46s %10.0f %11.1fx\n", "Go, concurrency 16, Horizon records off", offRate, offRate/phpRate)
	fmt.Printf("%-46s %10.0f %11.1fx\n", "Go, concurrency 16, Horizon records on", onRate, onRate/phpRate)
	off, on := medianCost(perJob[false]), medianCost(perJob[true])
	fmt.Printf("\nPer job, the median of the rounds (µs)     %10s %12s %12s\n", "Redis CPU", "worker CPU", "script time")
	fmt.Printf("%-42s %10.1f %12.1f %12.1f\n", "Horizon records off", off.redis, off.worker, off.script)
	fmt.Printf("%-42s %10.1f %12.1f %12.1f\n", "Horizon records on", on.redis, on.worker, on.script)
	fmt.Printf("The records add %.1f µs of Redis CPU and %.1f µs of worker CPU per job; (off's CPU)/(on's CPU) = %.2f\n",
		on.redis-off.redis, on.worker-off.worker, (off.redis+off.worker)/(on.redis+on.worker))
	fmt.Printf("\nHorizon records on/off: %.2f, the median of %d rounds (%.2f to %.2f) (target >= 0.8: %s)\n",
		ratio, rounds, ratios[0], ratios[len(ratios)-1], verdict)
}

// jobCost is the CPU one drain spent per job, in microseconds: the server's, the worker
// process's, and the server's time inside scripts.
type jobCost struct{ redis, worker, script float64 }

// usage reads the counters a drain's cost is the difference of.
func (b *hzBench) usage(tb testing.TB) bench.Usage {
	tb.Helper()
	u, err := bench.Take(context.Background(), b.client)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}

func costPerJob(before, after bench.Usage, n int) jobCost {
	us := func(d time.Duration) float64 { return float64(d.Microseconds()) / float64(n) }
	return jobCost{redis: us(after.RedisCPU - before.RedisCPU), worker: us(after.GoCPU - before.GoCPU),
		script: us(after.ScriptTime - before.ScriptTime)}
}

// medianCost is the median of each figure of costs on its own.
func medianCost(costs []jobCost) jobCost {
	var server, worker, script []float64
	for _, c := range costs {
		server, worker, script = append(server, c.redis), append(worker, c.worker), append(script, c.script)
	}
	return jobCost{redis: median(server), worker: median(worker), script: median(script)}
}

// median of v (sorted in place); the mean of the middle two for an even count.
func median(v []float64) float64 {
	slices.Sort(v)
	m := v[len(v)/2]
	if len(v)%2 == 0 {
		m = (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	return m
}
