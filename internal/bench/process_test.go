package bench_test

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/bench"
)

// TestBenchProcess is scripts/bench-worker.sh's way in; it does nothing unless
// LARAQ_BENCH_MODE is set. The server is LARAQ_BENCH_REDIS (host:port), the keys are under
// LARAQ_BENCH_PREFIX, the queue is LARAQ_BENCH_QUEUE. Each mode prints one line of
// name=value pairs:
//
//	fill       queue LARAQ_BENCH_N no-op jobs; prints jobs=N
//	drain      drain the queue with LARAQ_BENCH_CONCURRENCY slots; prints jobs, seconds,
//	           jobs_per_sec, and per job: go_cpu_us, redis_cpu_us, script_us,
//	           script_calls, cmds, allocs; and vmhwm_kb (the process' peak RSS).
//	           LARAQ_BENCH_CPUPROFILE / LARAQ_BENCH_MEMPROFILE write pprof profiles of it.
//	yardstick  Laravel's pop effect over the whole queue, yardstickBatch jobs per call; prints
//	           the same fields as drain
//	pops       the worker's ticketed pop over the whole queue, LARAQ_BENCH_BATCH jobs per
//	           call (default 1); prints the same fields as drain
//	latency    LARAQ_BENCH_N jobs pushed 2 ms apart to an idle worker with block_for;
//	           prints p50_ms, p99_ms
func TestBenchProcess(t *testing.T) {
	mode := os.Getenv("LARAQ_BENCH_MODE")
	if mode == "" {
		return
	}
	ctx := context.Background()
	conc, _ := strconv.Atoi(os.Getenv("LARAQ_BENCH_CONCURRENCY"))
	client := redis.NewClient(&redis.Options{Addr: os.Getenv("LARAQ_BENCH_REDIS"), PoolSize: max(conc, 16) + 8, Protocol: protocol()})
	defer client.Close()
	prefix, queue := os.Getenv("LARAQ_BENCH_PREFIX"), os.Getenv("LARAQ_BENCH_QUEUE")
	n, _ := strconv.Atoi(os.Getenv("LARAQ_BENCH_N"))
	switch mode {
	case "fill":
		if err := bench.Fill(ctx, client, prefix, queue, n); err != nil {
			t.Fatal(err)
		}
		fmt.Printf("jobs=%d\n", n)
	case "drain":
		stop := profile(t)
		res, err := bench.Drain(ctx, client, prefix, queue, conc)
		stop()
		if err != nil {
			t.Fatal(err)
		}
		report(res)
	case "yardstick":
		res, err := bench.Yardstick(ctx, client, prefix, queue, yardstickBatch)
		if err != nil {
			t.Fatal(err)
		}
		report(res)
	case "pops":
		batch, _ := strconv.Atoi(os.Getenv("LARAQ_BENCH_BATCH"))
		res, err := bench.Pops(ctx, client, prefix, queue, max(batch, 1))
		if err != nil {
			t.Fatal(err)
		}
		report(res)
	case "latency":
		p50, p99, err := bench.PickupLatency(ctx, client, prefix, queue, n, 2*time.Millisecond)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("p50_ms=%.3f p99_ms=%.3f\n", ms(p50), ms(p99))
	default:
		t.Fatalf("unknown LARAQ_BENCH_MODE %q", mode)
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func report(r bench.Result) {
	p := r.PerJob()
	fmt.Printf("jobs=%d seconds=%.3f jobs_per_sec=%.0f go_cpu_us=%.2f redis_cpu_us=%.2f script_us=%.2f script_calls=%.3f cmds=%.2f allocs=%.1f alloc_bytes=%.0f vmhwm_kb=%d\n",
		r.Jobs, r.Elapsed.Seconds(), r.Rate(), us(p.GoCPU), us(p.RedisCPU), us(p.ScriptTime), p.ScriptCalls, p.Commands, p.Allocs, p.Bytes, bench.PeakRSS()/1024)
}

// profile starts the profiles LARAQ_BENCH_CPUPROFILE and LARAQ_BENCH_MEMPROFILE ask for;
// stop writes them.
func profile(t *testing.T) (stop func()) {
	cpu, mem := os.Getenv("LARAQ_BENCH_CPUPROFILE"), os.Getenv("LARAQ_BENCH_MEMPROFILE")
	if cpu != "" {
		f, err := os.Create(cpu)
		if err != nil {
			t.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		if cpu != "" {
			pprof.StopCPUProfile()
		}
		if mem != "" {
			f, err := os.Create(mem)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// yardstickBatch is how many jobs one call of the yardstick pops: enough to make the
// call's own cost vanish per job (under 1%), few enough that one call lasts about a
// millisecond, as long as a large pop. Longer calls are more often preempted on a busy
// machine, which commandstats' wall-clock usec would count against the yardstick.
const yardstickBatch = 100

// protocol is LARAQ_BENCH_PROTOCOL (2 or 3), else go-redis' default (3).
func protocol() int {
	p, _ := strconv.Atoi(os.Getenv("LARAQ_BENCH_PROTOCOL"))
	return p
}
