// Command asynq measures github.com/hibiken/asynq on the redis-server laraq's worker
// benchmark uses, with the same no-op jobs, for scripts/bench-worker.sh. It is a module of
// its own so that laraq's module never requires asynq: `go list -deps ./...` at the
// repository's root does not reach it.
//
//	asynq -redis 127.0.0.1:6379 -mode fill -n 20000 -queue q1 -payload job.json
//	asynq -redis 127.0.0.1:6379 -mode drain -n 20000 -queue q1 -concurrency 64
//
// fill enqueues n tasks of type "noop" whose payload is the bytes of -payload (a Laravel
// job, so both sides move the same bytes), on asynq queue -queue; drain runs an asynq
// Server with -concurrency workers and a handler that does nothing until n tasks were
// handled, and prints the fields laraq's drain prints (internal/bench's Usage: jobs/s,
// the process' and the server's CPU time per job, script time, commands, allocations,
// peak RSS).
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"sync/atomic"
	"time"

	"github.com/hibiken/asynq"
	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/bench"
)

func main() {
	addr := flag.String("redis", "127.0.0.1:6379", "redis-server host:port")
	mode := flag.String("mode", "drain", "fill or drain")
	n := flag.Int("n", 20000, "tasks")
	queue := flag.String("queue", "default", "asynq queue")
	concurrency := flag.Int("concurrency", 64, "asynq Server Concurrency")
	payloadFile := flag.String("payload", "", "file whose bytes are each task's payload (fill)")
	flag.Parse()
	ctx := context.Background()
	opt := asynq.RedisClientOpt{Addr: *addr, PoolSize: *concurrency + 16}
	switch *mode {
	case "fill":
		if err := fill(ctx, opt, *queue, *n, *payloadFile); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("jobs=%d\n", *n)
	case "drain":
		res, err := drain(ctx, opt, *queue, *n, *concurrency)
		if err != nil {
			log.Fatal(err)
		}
		p := res.PerJob()
		fmt.Printf("jobs=%d seconds=%.3f jobs_per_sec=%.0f go_cpu_us=%.2f redis_cpu_us=%.2f script_us=%.2f script_calls=%.3f cmds=%.2f allocs=%.1f alloc_bytes=%.0f vmhwm_kb=%d\n",
			res.Jobs, res.Elapsed.Seconds(), res.Rate(), us(p.GoCPU), us(p.RedisCPU), us(p.ScriptTime), p.ScriptCalls, p.Commands, p.Allocs, p.Bytes, bench.PeakRSS()/1024)
	default:
		log.Fatalf("unknown -mode %q", *mode)
	}
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

func fill(ctx context.Context, opt asynq.RedisClientOpt, queue string, n int, payloadFile string) error {
	payload, err := os.ReadFile(payloadFile)
	if err != nil {
		return err
	}
	c := asynq.NewClient(opt)
	defer c.Close()
	for range n {
		if _, err := c.EnqueueContext(ctx, asynq.NewTask("noop", payload), asynq.Queue(queue), asynq.MaxRetry(0)); err != nil {
			return err
		}
	}
	return nil
}

// drain runs a Server until n tasks were handled; the time runs from Start to the n-th
// handler call.
func drain(ctx context.Context, opt asynq.RedisClientOpt, queue string, n, concurrency int) (bench.Result, error) {
	probe := redis.NewClient(&redis.Options{Addr: opt.Addr})
	defer probe.Close()
	var count atomic.Int64
	done := make(chan struct{})
	mux := asynq.NewServeMux()
	mux.HandleFunc("noop", func(context.Context, *asynq.Task) error {
		if count.Add(1) == int64(n) {
			close(done)
		}
		return nil
	})
	srv := asynq.NewServer(opt, asynq.Config{
		Concurrency: concurrency, Queues: map[string]int{queue: 1}, LogLevel: asynq.ErrorLevel,
	})
	before, err := bench.Take(ctx, probe)
	if err != nil {
		return bench.Result{}, err
	}
	start := time.Now()
	if err := srv.Start(mux); err != nil {
		return bench.Result{}, err
	}
	select {
	case <-done:
	case <-time.After(10 * time.Minute):
		return bench.Result{}, fmt.Errorf("asynq handled %d of %d tasks in 10 minutes", count.Load(), n)
	}
	elapsed := time.Since(start)
	after, err := bench.Take(ctx, probe)
	srv.Shutdown()
	if err != nil {
		return bench.Result{}, err
	}
	return bench.Result{Jobs: count.Load(), Elapsed: elapsed, Usage: after.Sub(before)}, nil
}
