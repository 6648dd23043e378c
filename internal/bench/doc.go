// Package bench measures laraq's worker end to end on a real redis-server, for
// scripts/bench-worker.sh: it fills a queue with Laravel-identical no-op jobs
// (testdata/php/jobs_consumer.php's App\Jobs\Noop, as Laravel 8.83 queues them), drains
// it with a Worker built from the public API, measures the pickup latency of an idle
// worker waiting on block_for, and runs the yardstick: Laravel's own pop effect looped
// inside one script call (rdb.LaravelPopEffect), the least Redis can do per job.
//
// Each measurement brackets the work with a Usage: the process' own CPU time
// (getrusage), the server's CPU time (INFO cpu) and script time (INFO commandstats), and
// the Go heap's allocation count, so that a run reports per job what the worker and what
// Redis spent, besides jobs/s.
//
// For scripts/bench-scaling.sh, FillWork varies the work a drain does: payloads of a given
// size (Padded), jobs spread over many queues that Drain works in priority order, and a
// share of the jobs that only a migration brings back (due in :delayed, expired in
// :reserved). On a Redis Cluster (a *redis.ClusterClient) Take adds up every master's
// counters.
//
// The package's test binary is the scripts' way in (TestBenchProcess, driven by
// LARAQ_BENCH_* variables): one process per measurement, so that CPU time, allocations
// and peak RSS belong to that measurement alone.
//
//	u0, _ := bench.Take(ctx, client)
//	res, _ := bench.Drain(ctx, client, "laravel_database_", []string{"bench"}, 64)
//	fmt.Println(res.PerJob().GoCPU)
package bench
