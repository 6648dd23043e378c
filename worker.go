package laraq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/worker"
	"github.com/laraq/laraq/phpclass"
)

// Reasons Run returns when the worker stopped by itself. Each lets in-flight jobs finish
// first. `laraq work` exits 0 for ErrRestart, ErrMaxJobs, ErrMaxTime and ErrQueueEmpty
// and 12 for ErrMemoryLimit, as queue:work does (see ExitStatus).
var (
	// ErrRestart: the queue:restart signal changed (`php artisan queue:restart`).
	ErrRestart = worker.ErrRestart
	// ErrMaxJobs: MaxJobs jobs were taken.
	ErrMaxJobs = worker.ErrMaxJobs
	// ErrMaxTime: the worker ran for MaxTime.
	ErrMaxTime = worker.ErrMaxTime
	// ErrQueueEmpty: StopWhenEmpty and every queue was empty.
	ErrQueueEmpty = worker.ErrQueueEmpty
	// ErrMemoryLimit: the process used more than MemoryLimit.
	ErrMemoryLimit = worker.ErrMemoryLimit
	// ErrQueuesUnavailable is wrapped by the error of a StopWhenEmpty worker that could
	// not tell its queues were empty: a queue was skipped (the error wraps each one's
	// *RedisConfigError of ErrRedisWrongType), or no pop succeeded for 10 s (it wraps
	// Redis' last error).
	ErrQueuesUnavailable = worker.ErrQueuesUnavailable
)

// Exit statuses of `laraq work` (ExitStatus).
const (
	// ExitRedisSetup: Redis refused the worker for a reason no retry heals: refused
	// credentials (*RedisAuthError) or a *RedisConfigError. Restarting the worker
	// does not help until the setup is fixed (systemd: RestartPreventExitStatus=3).
	ExitRedisSetup = 3
	// ExitMemoryLimit: ErrMemoryLimit, queue:work's status for --memory.
	ExitMemoryLimit = 12
)

// ExitStatus is the status a queue:work process exits with after Run returned err: 0
// when it stopped by itself for a reason that asks its supervisor to start it again
// (ErrRestart, ErrMaxJobs, ErrMaxTime, ErrQueueEmpty) or was told to stop (nil), 12 for
// ErrMemoryLimit, as queue:work does, ExitRedisSetup (3) for a Redis setup no retry
// fixes (*RedisAuthError, *RedisConfigError, also wrapped in ErrQueuesUnavailable), and 1
// for any other error. `laraq work` exits with it.
func ExitStatus(err error) int {
	var auth *RedisAuthError
	var setup *RedisConfigError
	switch {
	case err == nil, errors.Is(err, ErrRestart), errors.Is(err, ErrMaxJobs), errors.Is(err, ErrMaxTime),
		errors.Is(err, ErrQueueEmpty):
		return 0
	case errors.Is(err, ErrMemoryLimit):
		return ExitMemoryLimit
	case errors.As(err, &auth), errors.As(err, &setup):
		return ExitRedisSetup
	}
	return 1
}

// Worker is a Go queue worker that shares Laravel's Redis queues with PHP workers, as
// `php artisan queue:work` does. Its methods are safe for concurrent use.
type Worker struct {
	w *worker.Worker
}

// NewWorker returns a worker running jobs' handlers on the connection's queues, with
// queue:work's options in cfg. The connection's client stays owned by the caller.
//
// The worker uses up to Concurrency + 2 connections of the client's pool at once: one per
// running job (acknowledgements), one for popping and blocking, one for signals. NewWorker
// logs a warning when the pool is smaller; set redis.Options.PoolSize accordingly
// (go-redis defaults to 10 per CPU).
func NewWorker(conn *Connection, jobs *Jobs, cfg WorkerConfig) (*Worker, error) {
	if jobs == nil {
		return nil, errors.New("laraq: NewWorker with nil jobs")
	}
	if cfg.AckReplicas < 0 || cfg.AckReplicasTimeout < 0 {
		return nil, fmt.Errorf("laraq: AckReplicas %d, AckReplicasTimeout %s: want 0 or more", cfg.AckReplicas, cfg.AckReplicasTimeout)
	}
	s, err := settings(conn, cfg)
	if err != nil {
		return nil, err
	}
	r, err := conn.rdb(replicaAcks(s))
	if err != nil {
		return nil, err
	}
	if err := checkClasses(s, jobs); err != nil {
		return nil, err
	}
	if s.Horizon, err = conn.horizon(s.Now, s.Logger); err != nil {
		return nil, err
	}
	if s.Chain, err = conn.dispatcher(dispatcherConfig{now: s.Now, createPayload: cfg.CreatePayloadUsing}, s.Horizon); err != nil {
		return nil, err
	}
	s.Client, s.RDB, s.Signals, s.Locks = conn.Client, r, conn.signals(r), conn.locks
	s.Batches, s.Encrypter = conn.Batches, conn.Encrypter
	if s.MiddlewareEnv, s.MiddlewareRedis, err = conn.middlewareEnv(s, cfg.Limiters); err != nil {
		return nil, err
	}
	conn.describeTo(s)
	size, ok := poolSize(conn.Client)
	s.PoolSize = size
	if ok && size < s.Concurrency+2 {
		s.Logger.Warn("redis pool smaller than the worker needs; jobs will wait for connections",
			"pool_size", size, "needed", s.Concurrency+2, "concurrency", s.Concurrency)
	}
	w, err := worker.New(s, jobs)
	if err != nil {
		return nil, err
	}
	return &Worker{w: w}, nil
}

// replicaAcks are the worker's acknowledgement confirmations (WorkerConfig.AckReplicas),
// which log when they stop and start again. An acknowledgement waits at most a quarter
// of retry_after: the ones behind it wait too, and must land before their
// reservations expire.
func replicaAcks(s *worker.Config) rdb.ReplicaAcks {
	if limit := time.Duration(s.RetryAfter) * time.Second / 4; s.AckReplicas > 0 && s.AckReplicasTimeout > limit {
		s.AckReplicasTimeout = max(limit, time.Millisecond)
	}
	return rdb.ReplicaAcks{Replicas: s.AckReplicas, Timeout: s.AckReplicasTimeout, OnConfirming: func(confirming bool, err error) {
		if confirming {
			s.Logger.Info("the replicas confirm acknowledgements again", "replicas", s.AckReplicas)
			return
		}
		s.Logger.Warn("acknowledgements are not confirmed by the replicas: jobs count as done without them until they answer again (a failover meanwhile may run a job again)",
			"err", err, "replicas", s.AckReplicas)
	}}
}

// checkClasses compares the Go types jobs declares with their classes (WorkerConfig.Classes)
// before the worker takes a job: every problem is in the error, with its fix; a warning
// (fields in another order than serialize() writes them) is logged, as is a manifest
// read from another release than the connection's, whose trait properties and defaults
// are that release's.
func checkClasses(s *worker.Config, jobs *Jobs) error {
	m := s.Classes
	if m == nil {
		return nil
	}
	if mr, err := ParseRelease(m.Laravel); err == nil && !s.JobRelease.IsZero() && (mr.Major != s.JobRelease.Major || mr.Minor != s.JobRelease.Minor) {
		s.Logger.Warn("the class facts were read from another Laravel release than the connection's", "classes", m.Laravel, "connection", s.JobRelease.String())
	}
	var problems []phpclass.Problem
	for _, p := range phpclass.CheckAll(m, jobs.Types()) {
		if p.Warning {
			s.Logger.Warn(p.String(), "class", p.Class)
		} else {
			problems = append(problems, p)
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("laraq: %w", &phpclass.CheckError{Problems: problems})
	}
	return nil
}

// poolSize reads the connection pool size of the clients go-redis makes.
func poolSize(c redis.UniversalClient) (int, bool) {
	switch cl := c.(type) {
	case interface{ Options() *redis.Options }: // *redis.Client, and wrappers of one
		return cl.Options().PoolSize, true
	case *redis.ClusterClient:
		return cl.Options().PoolSize, true
	case *redis.Ring:
		return cl.Options().PoolSize, true
	}
	return 0, false
}

// Pause stops taking new jobs until Resume (SIGUSR2 for `php artisan queue:work`).
// Running jobs go on; the worker still stops on restart signals and cancellation.
func (w *Worker) Pause() { w.w.Pause() }

// Resume takes jobs again after Pause (SIGCONT).
func (w *Worker) Resume() { w.w.Resume() }

// Paused reports whether Pause is in effect.
func (w *Worker) Paused() bool { return w.w.Paused() }

// Run works the queues until ctx is cancelled (then returns nil) or a stop condition
// is met (ErrRestart, ErrMaxJobs, ErrMaxTime, ErrQueueEmpty, ErrMemoryLimit). Either
// way no new job is taken and jobs in flight are given time to finish: all the time
// they need after a stop condition, ShutdownGrace after cancellation. A job still
// running after that stays reserved and comes back to a worker after RetryAfter; none
// is lost.
//
// Redis errors are logged and the call retried with backoff, except the refusals no
// retry heals, which end Run at first sight: refused credentials (*RedisAuthError) and
// a *RedisConfigError (a replica, a Cluster slot clash, a command the ACL user may not
// run or the server lacks). READONLY after a pop succeeded, or through Sentinel, is
// retried for ReadOnlyGrace first, as a failover in progress. A key of one queue holding the wrong type does not
// end Run: that queue is skipped (EventQueueSkipped) and tried again every
// SkippedQueueRetry while the others go on. Out of memory is retried.
func (w *Worker) Run(ctx context.Context) error { return w.w.Run(ctx) }
