package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/rdb"
)

// Release is the Laravel release whose payloads the benchmark queues: the one
// testdata/php/work.php runs, so that the PHP worker and the Go worker drain the same bytes.
var Release = laraq.Release{Major: 8, Minor: 83}

// Noop is testdata/php/jobs_consumer.php's App\Jobs\Noop, the benchmark's job: a handler
// that does nothing, so that only the queue's own cost is measured.
type Noop struct {
	N int64 `php:"n"`
	laraq.Queueable
}

// PHPClass is the job's PHP class.
func (Noop) PHPClass() string { return `App\Jobs\Noop` }

func connection(client redis.UniversalClient, prefix string, blockFor *time.Duration) *laraq.Connection {
	return &laraq.Connection{Client: client, Prefix: prefix, Release: Release, BlockFor: blockFor}
}

// Fill queues n no-op jobs on queue, with the payloads Laravel 8.83's dispatcher writes,
// pushed 1,000 at a time.
func Fill(ctx context.Context, client redis.UniversalClient, prefix, queue string, n int) error {
	_, err := FillWork(ctx, client, prefix, Work{Queues: []string{queue}, Jobs: n})
	return err
}

// Result is one measured run.
type Result struct {
	Jobs    int64
	Start   time.Time // when the measurement began
	Elapsed time.Duration
	Usage   Usage // what the run cost (after minus before)
}

// PerJob is the run's Usage per job.
func (r Result) PerJob() PerJob { return r.Usage.PerJob(r.Jobs) }

// Rate is jobs per second.
func (r Result) Rate() float64 { return float64(r.Jobs) / r.Elapsed.Seconds() }

// Drain runs a worker with concurrency slots on queues, in that priority order, until
// every queue is empty (StopWhenEmpty) and measures it: from before NewWorker to Run's
// return. It runs Noop and Padded jobs.
func Drain(ctx context.Context, client redis.UniversalClient, prefix string, queues []string, concurrency int) (Result, error) {
	var count atomic.Int64
	jobs := laraq.NewJobs()
	for _, class := range []string{Noop{}.PHPClass(), Padded{}.PHPClass()} {
		jobs.HandleFunc(class, func(context.Context, *laraq.JobInfo) error {
			count.Add(1)
			return nil
		})
	}
	before, err := Take(ctx, client)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	w, err := laraq.NewWorker(connection(client, prefix, nil), jobs, laraq.WorkerConfig{
		Queues: queues, Concurrency: concurrency, StopWhenEmpty: true,
		// A job FillWork left with an expired reservation comes back at attempt 2.
		Tries:  3,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return Result{}, err
	}
	if err := w.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
		return Result{}, fmt.Errorf("bench: drain: %w", err)
	}
	elapsed := time.Since(start)
	after, err := Take(ctx, client)
	if err != nil {
		return Result{}, err
	}
	return Result{Jobs: count.Load(), Start: start, Elapsed: elapsed, Usage: after.Sub(before)}, nil
}

// Yardstick runs Laravel's own pop effect (rdb.LaravelPopEffect) over every job of
// queue, batch jobs per script call, and measures it like Drain: Usage.ScriptTime per job
// is the least script time a pop can cost on this server.
func Yardstick(ctx context.Context, client redis.UniversalClient, prefix, queue string, batch int) (Result, error) {
	r, err := rdb.New(client, rdb.Options{Prefix: prefix})
	if err != nil {
		return Result{}, err
	}
	before, err := Take(ctx, client)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	var jobs int64
	for {
		n, err := r.LaravelPopEffect(ctx, queue, time.Now().Unix()+90, batch)
		if err != nil {
			return Result{}, err
		}
		if n == 0 {
			break
		}
		jobs += int64(n)
	}
	elapsed := time.Since(start)
	after, err := Take(ctx, client)
	if err != nil {
		return Result{}, err
	}
	return Result{Jobs: jobs, Start: start, Elapsed: elapsed, Usage: after.Sub(before)}, nil
}

// Pops takes every job of queue with the worker's pop (rdb.PopTicket), batch jobs per
// call, and measures it like Yardstick: the same script time per job the worker's pops
// cost at that batch size, without the rest of the worker.
func Pops(ctx context.Context, client redis.UniversalClient, prefix, queue string, batch int) (Result, error) {
	r, err := rdb.New(client, rdb.Options{Prefix: prefix})
	if err != nil {
		return Result{}, err
	}
	owner := "bench-" + queue
	before, err := Take(ctx, client)
	if err != nil {
		return Result{}, err
	}
	start := time.Now()
	var jobs int64
	for seq := int64(1); ; seq++ {
		popped, err := r.PopTicket(ctx, queue, time.Now().Unix()+90, batch, rdb.Ticket{Owner: owner, Seq: seq, Keep: time.Minute})
		if err != nil {
			return Result{}, err
		}
		if len(popped) == 0 {
			break
		}
		jobs += int64(len(popped))
	}
	elapsed := time.Since(start)
	after, err := Take(ctx, client)
	if err != nil {
		return Result{}, err
	}
	return Result{Jobs: jobs, Start: start, Elapsed: elapsed, Usage: after.Sub(before)}, r.ForgetTickets(ctx, owner, []string{queue})
}

// PickupLatency pushes n no-op jobs one at a time, every apart, to a worker with one
// slot idling on the notify list (block_for 0), and returns the median and 99th
// percentile of the time from the push to the handler's start.
func PickupLatency(ctx context.Context, client redis.UniversalClient, prefix, queue string, n int, every time.Duration) (p50, p99 time.Duration, err error) {
	blockFor := time.Duration(0)
	conn := connection(client, prefix, &blockFor)
	d, err := laraq.NewDispatcher(conn)
	if err != nil {
		return 0, 0, err
	}
	var mu sync.Mutex
	lat := make([]time.Duration, 0, n)
	started := make(chan struct{}, n)
	jobs := laraq.NewJobs()
	laraq.HandleClass(jobs, `App\Jobs\Noop`, func(ctx context.Context, j *laraq.Job[Noop]) error {
		since := time.Since(time.Unix(0, j.Command.N))
		mu.Lock()
		lat = append(lat, since)
		mu.Unlock()
		started <- struct{}{}
		return nil
	})
	w, err := laraq.NewWorker(conn, jobs, laraq.WorkerConfig{
		Queues: []string{queue}, Concurrency: 1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		return 0, 0, err
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	defer func() {
		cancel()
		<-done
	}()
	time.Sleep(50 * time.Millisecond) // the worker is idle in BLPOP
	tick := time.NewTicker(every)
	defer tick.Stop()
	for range n {
		<-tick.C
		if _, err := d.Dispatch(ctx, Noop{N: time.Now().UnixNano()}, laraq.OnQueue(queue)); err != nil {
			return 0, 0, err
		}
	}
	for range n {
		select {
		case <-started:
		case <-time.After(10 * time.Second):
			return 0, 0, errors.New("bench: a pushed job was not picked up within 10 s")
		}
	}
	slices.Sort(lat)
	return lat[len(lat)/2], lat[len(lat)*99/100], nil
}
