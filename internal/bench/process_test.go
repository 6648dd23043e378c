package bench_test

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/bench"
)

// TestBenchProcess is the benchmark scripts' way in (scripts/bench-worker.sh,
// scripts/bench-scaling.sh); it does nothing unless LARAQ_BENCH_MODE is set. The server is
// LARAQ_BENCH_REDIS (host:port), or the Redis Cluster whose nodes LARAQ_BENCH_CLUSTER
// lists (host:port,host:port,...); the keys are under LARAQ_BENCH_PREFIX; the queue is
// LARAQ_BENCH_QUEUE, or several, comma-separated, in priority order. Each mode prints one
// line of name=value pairs:
//
//	fill       queue LARAQ_BENCH_N jobs (FillWork): spread over the queues, or all in the
//	           last with LARAQ_BENCH_LAST=1; payloads of LARAQ_BENCH_PAYLOAD_BYTES (default:
//	           the no-op's ~615); a share LARAQ_BENCH_DUE (0 to 1) left for a migration to
//	           bring back. Prints jobs, payload_bytes, delayed, reserved
//	drain      drain the queues with LARAQ_BENCH_CONCURRENCY slots, from the wall-clock
//	           instant LARAQ_BENCH_START_AT (Unix nanoseconds) if set, so that several
//	           processes start together; prints jobs, seconds, jobs_per_sec, and per job:
//	           go_cpu_us, redis_cpu_us, script_us, script_calls, cmds, allocs; and
//	           vmhwm_kb (the process' peak RSS), go_cpu_s (its CPU in all), start_ns and
//	           end_ns (the measurement's wall-clock span, Unix nanoseconds).
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
	client := newClient(max(conc, 16) + 8)
	defer client.Close()
	prefix, queues := os.Getenv("LARAQ_BENCH_PREFIX"), strings.Split(os.Getenv("LARAQ_BENCH_QUEUE"), ",")
	queue := queues[0]
	n, _ := strconv.Atoi(os.Getenv("LARAQ_BENCH_N"))
	switch mode {
	case "fill":
		w := bench.Work{Queues: queues, Jobs: n, Last: os.Getenv("LARAQ_BENCH_LAST") == "1"}
		w.PayloadBytes, _ = strconv.Atoi(os.Getenv("LARAQ_BENCH_PAYLOAD_BYTES"))
		if due := os.Getenv("LARAQ_BENCH_DUE"); due != "" {
			var err error
			if w.Due, err = strconv.ParseFloat(due, 64); err != nil {
				t.Fatalf("LARAQ_BENCH_DUE=%q: %v", due, err)
			}
		}
		filled, err := bench.FillWork(ctx, client, prefix, w)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("jobs=%d payload_bytes=%d delayed=%d reserved=%d\n", n, filled.PayloadBytes, filled.Delayed, filled.Reserved)
	case "drain":
		if at, err := strconv.ParseInt(os.Getenv("LARAQ_BENCH_START_AT"), 10, 64); err == nil {
			time.Sleep(time.Until(time.Unix(0, at)))
		}
		stop := profile(t)
		res, err := bench.Drain(ctx, client, prefix, queues, conc)
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
	fmt.Printf("jobs=%d seconds=%.3f jobs_per_sec=%.0f go_cpu_us=%.2f redis_cpu_us=%.2f script_us=%.2f script_calls=%.3f cmds=%.2f allocs=%.1f alloc_bytes=%.0f vmhwm_kb=%d go_cpu_s=%.4f start_ns=%d end_ns=%d\n",
		r.Jobs, r.Elapsed.Seconds(), r.Rate(), us(p.GoCPU), us(p.RedisCPU), us(p.ScriptTime), p.ScriptCalls, p.Commands, p.Allocs, p.Bytes, bench.PeakRSS()/1024,
		r.Usage.GoCPU.Seconds(), r.Start.UnixNano(), r.Start.Add(r.Elapsed).UnixNano())
}

// newClient connects to LARAQ_BENCH_CLUSTER's nodes when set, else to LARAQ_BENCH_REDIS,
// with pool connections each.
func newClient(pool int) redis.UniversalClient {
	if nodes := os.Getenv("LARAQ_BENCH_CLUSTER"); nodes != "" {
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(nodes, ","), PoolSize: pool, Protocol: protocol()})
	}
	return redis.NewClient(&redis.Options{Addr: os.Getenv("LARAQ_BENCH_REDIS"), PoolSize: pool, Protocol: protocol()})
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
