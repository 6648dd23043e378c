package laraq

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/horizon"
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/worker"
	"github.com/laraq/laraq/middleware"
	"github.com/laraq/laraq/phpclass"
)

// Defaults of WorkerConfig. Each matches `php artisan queue:work` unless said otherwise.
const (
	DefaultConcurrency     = 1
	DefaultSleep           = 3 * time.Second  // --sleep
	DefaultMigrateInterval = time.Second      // laraq's throttle; PHP migrates before every pop
	DefaultTries           = 1                // --tries
	DefaultBackoff         = 0                // --backoff, in seconds
	DefaultTimeout         = 60 * time.Second // --timeout
	DefaultShutdownGrace   = 10 * time.Second // supervisor's default stopwaitsecs
	DefaultSignalInterval  = time.Second      // how often restart and pause keys are read
	DefaultUnhandledDelay  = 5 * time.Second
	// DefaultAckReplicasTimeout is how long a confirmation of AckReplicas waits.
	DefaultAckReplicasTimeout = rdb.DefaultReplicaAckTimeout
	// DefaultMemoryLimit is queue:work's --memory=128 (megabytes), in bytes: QueueWork's
	// MemoryLimit. The zero WorkerConfig has no limit.
	DefaultMemoryLimit = 128 << 20
	// DefaultReadOnlyGrace is WorkerConfig.ReadOnlyGrace's default: longer than a
	// Sentinel failover takes (down-after-milliseconds, 30 s by default, plus the
	// election and the promotion's few seconds).
	DefaultReadOnlyGrace = time.Minute
	// DefaultSkippedQueueRetry is WorkerConfig.SkippedQueueRetry's default.
	DefaultSkippedQueueRetry = 30 * time.Second
)

// QueueWork returns the options `php artisan queue:work` runs with when it is given
// none, which `laraq work` starts from before it applies its flags: the defaults above
// and queue:work's memory limit (DefaultMemoryLimit: Run returns ErrMemoryLimit past it
// and ExitStatus makes that 12). A library worker built from it behaves as `laraq work`
// with no flags on the same Connection.
func QueueWork() WorkerConfig { return WorkerConfig{MemoryLimit: DefaultMemoryLimit} }

// PoolSizes are the least connection pools a worker with these options needs: on the
// queue's client, one connection per running job (its acknowledgements) plus the loop's
// pops and blocking reads, the signal reads and a metrics scrape; on the cache's client,
// one per running job (maxExceptions counters) plus the signal reads. package laravel
// sizes the clients it opens with them (laravel.ConnectOptions.Worker); NewWorker warns
// when the queue's pool is smaller than Concurrency + 2.
func (c WorkerConfig) PoolSizes() (queue, cache int) {
	n := c.Concurrency
	if n <= 0 {
		n = DefaultConcurrency
	}
	return n + 4, n + 2
}

// UnlimitedTries is WorkerConfig.Tries for queue:work's --tries=0: a job without a
// maxTries of its own is tried until it succeeds.
const UnlimitedTries = -1

// UnhandledAction is what a worker does with a job whose class has no handler.
type UnhandledAction int

const (
	// FailUnhandled fails the job (default): it leaves the reserved set and is written to
	// the failed store with an error naming its class, so `php artisan queue:retry` can
	// push it again once a handler exists. Without a failed store (Connection.Failed nil)
	// failing would delete the job, so it is released as with ReleaseUnhandled.
	FailUnhandled UnhandledAction = iota
	// ReleaseUnhandled releases the job to the delayed set for UnhandledPolicy.Delay. The
	// attempt stays counted, so after its tries a PHP worker's "already exceeded" check
	// will fail it.
	ReleaseUnhandled
	// HandBackUnhandled puts the job, as it was before this pop (attempts not
	// incremented), back at the head of its ready list, for mixed fleets where a PHP
	// worker on the same queue should run it. To avoid spinning on it, this worker then
	// stops popping that queue for UnhandledPolicy.Delay.
	HandBackUnhandled
)

func (a UnhandledAction) String() string {
	switch a {
	case FailUnhandled:
		return "fail"
	case ReleaseUnhandled:
		return "release"
	case HandBackUnhandled:
		return "hand-back"
	}
	return fmt.Sprintf("UnhandledAction(%d)", int(a))
}

// UnhandledPolicy says what happens to a job no handler is registered for. No job is
// ever deleted just because nobody handled it.
type UnhandledPolicy struct {
	// Action is the decision. Default FailUnhandled.
	Action UnhandledAction
	// Delay is the release delay (ReleaseUnhandled) or how long a queue is left alone
	// after a hand-back (HandBackUnhandled). Default DefaultUnhandledDelay (5 s).
	Delay time.Duration
}

// WorkerConfig configures a Worker: the options of `php artisan queue:work`. The zero
// value works like `queue:work` with no options on the connection's default queue.
type WorkerConfig struct {
	// Queues are the bare queue names to work, in priority order: each loop takes jobs
	// from the first queue that has some (--queue=high,default). Default: the
	// connection's Queue.
	Queues []string
	// Unhandled is what happens to jobs no handler takes. Default: fail them.
	Unhandled UnhandledPolicy

	// Concurrency is how many jobs run at once in this process. A job is popped only
	// when a slot is free, so at most Concurrency jobs are reserved by this process
	// (plus those abandoned after a timeout, see Timeout). The Redis client's pool needs
	// Concurrency + 2 connections (see NewWorker). Default DefaultConcurrency.
	Concurrency int
	// Sleep is how long to wait when no queue had a job and the connection has no
	// BlockFor (--sleep). Default DefaultSleep; negative: do not wait.
	Sleep time.Duration
	// MigrateInterval throttles the migration of due delayed jobs, then expired
	// reservations, to the ready list: at most once per interval per queue, before a
	// pop. PHP runs both scripts before every pop. Default DefaultMigrateInterval;
	// negative: before every pop, like PHP.
	MigrateInterval time.Duration

	// Tries is --tries, for jobs whose payload has no maxTries: 0 means DefaultTries (1),
	// UnlimitedTries is queue:work's --tries=0.
	Tries int
	// Backoff is --backoff: seconds before retrying a failed attempt, indexed by attempt
	// (the last value repeats), for jobs whose payload has no backoff (or delay).
	// Default [DefaultBackoff].
	Backoff []int
	// Timeout is --timeout: how long a job may run when its payload has no timeout. The
	// handler's context ends then; see TimeoutReleases for what happens to the job.
	// Default DefaultTimeout; negative: no timeout (PHP's --timeout=0).
	Timeout time.Duration
	// TimeoutReleases releases a timed-out job (with its backoff) instead of doing what
	// PHP does. PHP kills the worker process and leaves the job reserved, attempt
	// counted, until retry_after passes and it is migrated back (unless the timeout failed
	// it: last try, maxExceptions reached, failOnTimeout). A Go worker cannot kill a
	// goroutine: it abandons the handler (its context is cancelled), frees the slot and
	// goes on; by default the job stays reserved as in PHP. Default false.
	TimeoutReleases bool
	// ReservationHeartbeat is how often the reservation of a running job is moved
	// forward to now + RetryAfter, so that no worker, PHP or Go, takes the job back and
	// runs it a second time while its handler runs longer than retry_after. It stops when
	// the handler returns or its context ends (timeout, shutdown) and with the process;
	// from then on retry_after applies as before. PHP workers never extend a
	// reservation. Default: Connection.RetryAfter / 3; negative: off.
	ReservationHeartbeat time.Duration

	// MaxJobs stops the worker after this many jobs were taken (--max-jobs); Run returns
	// ErrMaxJobs once they finished. Default 0: no limit.
	MaxJobs int
	// MaxTime stops the worker after it ran this long (--max-time); Run returns
	// ErrMaxTime. Default 0: no limit.
	MaxTime time.Duration
	// StopWhenEmpty stops the worker when a loop finds every queue empty
	// (--stop-when-empty); Run returns ErrQueueEmpty. When it cannot tell — a queue is
	// skipped, or no pop succeeded for 10 s (Redis down or out of memory) — Run returns
	// an error wrapping ErrQueuesUnavailable instead of waiting. Default false.
	StopWhenEmpty bool
	// Rest is a pause after each job before its slot takes another (--rest). Default 0.
	Rest time.Duration
	// MemoryLimit stops the worker when the Go runtime holds more memory than this, in
	// bytes (--memory, which PHP reads in megabytes); Run returns ErrMemoryLimit.
	// Default 0: no limit.
	MemoryLimit int64

	// ReadOnlyGrace is how long the worker keeps retrying when the master it popped from
	// answers READONLY (a failover in progress: Sentinel demoted it) before Run stops
	// with the *RedisConfigError (ErrRedisReadOnly). READONLY before any pop succeeded, on
	// a client that is not Sentinel's (a worker pointed at a replica), stops it at once.
	// Default DefaultReadOnlyGrace; negative: stop at once.
	ReadOnlyGrace time.Duration
	// SkippedQueueRetry is how often a queue skipped because one of its keys holds the
	// wrong type is tried again; it resumes by itself once the key is repaired. Default
	// DefaultSkippedQueueRetry.
	SkippedQueueRetry time.Duration

	// SignalInterval is how often the restart signal and the pause keys are read (PHP
	// reads them after every job). Default DefaultSignalInterval.
	SignalInterval time.Duration
	// ShutdownGrace is how long jobs in flight may still run after ctx is cancelled.
	// Then their contexts are cancelled; a job whose handler returns an error then is
	// released at once (attempt counted), a handler that does not return within a
	// second is abandoned and its job stays reserved until retry_after brings it back.
	// Default DefaultShutdownGrace; negative: cancel handlers at once.
	ShutdownGrace time.Duration

	// AckReplicas makes every acknowledgement (a finished or failed job's deletion, a
	// release) wait until this many replicas of the Redis master hold it (Redis WAIT)
	// before the job counts as done. Redis replicates asynchronously: without it, a
	// failover can undo acknowledgements the old master took and their jobs run again
	// (see docs/reliability.md). An acknowledgement whose connection fails (the master
	// went away or was demoted) is sent again on the master of the moment. Replicas
	// that confirm nothing for AckReplicasTimeout (none left after a master died, one
	// cut off) are logged, and acknowledgements count as done without them until they
	// answer again, so that the worker does not stop. It costs a replica's round trip
	// per acknowledgement batch, and the acknowledgements share one connection. It
	// needs one Redis server or Sentinel, not a Cluster. Default 0: acknowledgements
	// are not confirmed, as PHP's.
	AckReplicas int
	// AckReplicasTimeout is how long an acknowledgement waits for the replicas, at most
	// a quarter of the connection's retry_after (the acknowledgements behind it wait
	// too). Default DefaultAckReplicasTimeout.
	AckReplicasTimeout time.Duration

	// Logger receives the worker's log. Default slog.Default().
	Logger *slog.Logger
	// Now is the clock for every timestamp (reservations, delays, retryUntil, events).
	// Default time.Now.
	Now func() time.Time
	// HorizonSupervisor lists the worker in Horizon's dashboard as a master supervisor
	// while it runs, reachable by horizon:terminate, pause and continue (see
	// HorizonSupervisor). It needs Connection.Horizon. Default nil: not listed.
	HorizonSupervisor *HorizonSupervisor

	// OnEvent is called for every Event, synchronously from the goroutine that caused
	// it (possibly several at once): keep it fast and safe for concurrent use. Package
	// metrics turns events into Prometheus metrics. Default nil.
	OnEvent func(Event)

	// Middleware runs around the handler of every job this worker runs, in order, as
	// a Laravel job's middleware() does around handle(), outermost. Default none.
	Middleware []Middleware
	// CreatePayloadUsing edits the payload of the next job of a chain the worker
	// dispatches, with the job that ran as parent (see laraq.CreatePayloadUsing, the
	// Dispatcher's). Default none.
	CreatePayloadUsing func(ctx context.Context, parent *JobInfo, payload []byte) []byte

	// Classes are the job classes' facts: a manifest 'laraq classes' wrote, read with
	// phpclass.Load (laraq work --classes). With them NewWorker compares every Go type
	// jobs declares (Handle, HandleClass, Declare) with its class and returns an error
	// naming each class, property and fix on a property no field takes, a tag no
	// property has (case included), a visibility or default that differs, or a
	// ShouldBeUnique or ShouldBeEncrypted class whose type does not say so (fields in
	// another order than PHP's are logged as a warning). And the worker releases the
	// unique lock of a job whose class implements ShouldBeUnique when PHP's worker would,
	// also where no Go type says so (HandleFunc, Fallback: laraq work --forward) and the
	// payload does not name the lock (8.x to 11.38): the key from the class, the id from
	// its uniqueId property, or, for a uniqueId() method, from the handler
	// (JobInfo.SetUniqueID). Default nil: no check; a job is unique when its Go type or
	// its payload says so.
	Classes *phpclass.Manifest
	// ClassMiddleware runs middleware around the jobs of PHP classes by name, where the
	// class's middleware() is run: for a class without Go type (Jobs.HandleFunc,
	// Fallback, `laraq work --forward`), before its Go type's Middleware() for one with.
	// middleware.Specs reads them from text (`laraq work --middleware`).
	ClassMiddleware map[string][]Middleware
	// Limiters are the rate limiters the application defines with RateLimiter::for, by
	// name, for RateLimited and RateLimitedWithRedis (package middleware). Default none:
	// an attempt through a RateLimited naming an undefined limiter ends with an error.
	Limiters *middleware.Limiters
	// ThroughDecoders turn the middleware objects ->through() put in payloads into their
	// Go forms; a class none of them knows fails the job. Default
	// middleware.LaravelDecoders(); add an application's own middleware classes to it.
	ThroughDecoders middleware.Decoders
}

// settings are a Connection and a WorkerConfig with the defaults applied and the times in
// the units the wire uses: the worker engine's Config.
func settings(conn *Connection, c WorkerConfig) (*worker.Config, error) {
	s := &worker.Config{Queues: c.Queues, Concurrency: c.Concurrency, Sleep: c.Sleep, MigrateInterval: c.MigrateInterval,
		Timeout: c.Timeout, TimeoutReleases: c.TimeoutReleases, ReservationHeartbeat: c.ReservationHeartbeat,
		MaxJobs: c.MaxJobs, MaxTime: c.MaxTime, StopWhenEmpty: c.StopWhenEmpty, Rest: c.Rest, MemoryLimit: c.MemoryLimit,
		ReadOnlyGrace: c.ReadOnlyGrace, SkippedQueueRetry: c.SkippedQueueRetry,
		SignalInterval: c.SignalInterval, ShutdownGrace: c.ShutdownGrace, Logger: c.Logger, Now: c.Now, OnEvent: c.OnEvent,
		Backoff: c.Backoff, Middleware: c.Middleware, Classes: c.Classes, ClassMiddleware: c.ClassMiddleware,
		ThroughDecoders: c.ThroughDecoders, AckReplicas: c.AckReplicas, AckReplicasTimeout: c.AckReplicasTimeout}
	if s.AckReplicas > 0 && s.AckReplicasTimeout == 0 {
		s.AckReplicasTimeout = rdb.DefaultReplicaAckTimeout
	}
	if len(s.Queues) == 0 {
		s.Queues = []string{conn.queue()}
	}
	seen := map[string]bool{}
	for _, q := range s.Queues {
		if q == "" || strings.Contains(q, ",") {
			return nil, fmt.Errorf("laraq: bad queue name %q", q)
		}
		if seen[q] {
			return nil, fmt.Errorf("laraq: queue %q listed twice", q)
		}
		seen[q] = true
	}
	s.Queues = append([]string(nil), s.Queues...)
	s.Connection = conn.name()
	s.DefaultQueue = conn.queue()
	s.Release, s.JobRelease = job.OrLatest(conn.Release), conn.Release
	if conn.RetryAfter < 0 {
		return nil, fmt.Errorf("laraq: RetryAfter %s < 0", conn.RetryAfter)
	}
	s.RetryAfter = rdb.Seconds(conn.retryAfter())
	if conn.BlockFor != nil && *conn.BlockFor < 0 {
		return nil, fmt.Errorf("laraq: BlockFor %s < 0", *conn.BlockFor)
	}
	s.BlockFor = conn.BlockFor
	s.MigrationLimit = conn.migrationLimit()
	s.CacheDisabled = conn.Cache.Disabled
	unhandled := c.Unhandled.Action
	s.Failed, s.NullStore = conn.Failed, conn.Failed == nil
	if s.NullStore {
		s.Failed = failed.NewNull()
		if unhandled == FailUnhandled {
			// Failing into a store that keeps nothing would delete the job.
			unhandled = ReleaseUnhandled
		}
	}
	switch {
	case s.Concurrency == 0:
		s.Concurrency = DefaultConcurrency
	case s.Concurrency < 0:
		return nil, fmt.Errorf("laraq: Concurrency %d < 0", s.Concurrency)
	}
	if s.Sleep == 0 {
		s.Sleep = DefaultSleep
	}
	if s.MigrateInterval == 0 {
		s.MigrateInterval = DefaultMigrateInterval
	}
	switch {
	case c.Tries == 0:
		s.Tries = DefaultTries
	case c.Tries == UnlimitedTries:
		s.Tries = 0
	case c.Tries < 0:
		return nil, fmt.Errorf("laraq: Tries %d: want 1 or more, or UnlimitedTries", c.Tries)
	default:
		s.Tries = c.Tries
	}
	if len(s.Backoff) == 0 {
		s.BackoffSpec = fmt.Sprint(DefaultBackoff)
	} else {
		parts := make([]string, len(s.Backoff))
		for i, b := range s.Backoff {
			if b < 0 {
				return nil, fmt.Errorf("laraq: Backoff[%d] = %d < 0", i, b)
			}
			parts[i] = fmt.Sprint(b)
		}
		s.BackoffSpec = strings.Join(parts, ",")
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.MaxJobs < 0 || s.MaxTime < 0 || s.Rest < 0 || s.MemoryLimit < 0 {
		return nil, errors.New("laraq: MaxJobs, MaxTime, Rest and MemoryLimit must not be negative")
	}
	if unhandled < FailUnhandled || unhandled > HandBackUnhandled {
		return nil, fmt.Errorf("laraq: unknown Unhandled.Action %d", unhandled)
	}
	s.Unhandled = worker.Unhandled(unhandled)
	s.UnhandledDelay = c.Unhandled.Delay
	if s.UnhandledDelay <= 0 {
		s.UnhandledDelay = DefaultUnhandledDelay
	}
	switch {
	case s.ReadOnlyGrace == 0:
		s.ReadOnlyGrace = DefaultReadOnlyGrace
	case s.ReadOnlyGrace < 0:
		s.ReadOnlyGrace = 0
	}
	if s.SkippedQueueRetry <= 0 {
		s.SkippedQueueRetry = DefaultSkippedQueueRetry
	}
	if s.SignalInterval <= 0 {
		s.SignalInterval = DefaultSignalInterval
	}
	if s.ShutdownGrace == 0 {
		s.ShutdownGrace = DefaultShutdownGrace
	}
	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if h := c.HorizonSupervisor; h != nil {
		s.HorizonSupervisor = &horizon.SupervisorOptions{Master: h.Master, Name: h.Name, Environment: h.Environment,
			PID: h.PID, Interval: h.Interval, Trim: h.Trim}
	}
	return s, nil
}
