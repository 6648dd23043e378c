package laraq

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/rdb"
)

// Reasons Run returns when the worker stopped by itself. Each lets in-flight jobs finish
// first. `laraq work` exits 0 for all but ErrMemoryLimit (12), as queue:work does.
var (
	// ErrRestart: the queue:restart signal changed (`php artisan queue:restart`).
	ErrRestart = errors.New("laraq: queue restart signal received")
	// ErrMaxJobs: MaxJobs jobs were taken.
	ErrMaxJobs = errors.New("laraq: maximum number of jobs reached")
	// ErrMaxTime: the worker ran for MaxTime.
	ErrMaxTime = errors.New("laraq: maximum run time reached")
	// ErrQueueEmpty: StopWhenEmpty and every queue was empty.
	ErrQueueEmpty = errors.New("laraq: queues are empty")
	// ErrMemoryLimit: the process used more than MemoryLimit.
	ErrMemoryLimit = errors.New("laraq: memory limit exceeded")
)

// errRunning is returned by a second concurrent Run.
var errRunning = errors.New("laraq: Run is already running")

const (
	// abandonWait is how long a job whose context was cancelled (timeout or hard stop)
	// may take to return before the worker stops waiting for it.
	abandonWait = time.Second
	// ackFinal is how long acknowledgements still retrying at the end of the shutdown
	// grace (and abandonWait) get to return once they are cancelled.
	ackFinal = time.Second
	// retryMin and retryMax bound the backoff between attempts of a failing Redis call.
	retryMin = 100 * time.Millisecond
	retryMax = 5 * time.Second
	// memoryCheckInterval throttles MemoryLimit checks.
	memoryCheckInterval = time.Second
	// heartbeatInterval is the longest the loop goes without an EventLoop: while it
	// waits for a slot, sleeps or drains, it wakes this often, pings Redis when it has
	// not called it for as long, and reports.
	heartbeatInterval = 2 * time.Second
)

// Worker is a Go queue worker that shares Laravel's Redis queues with PHP workers, as
// `php artisan queue:work` does. Its methods are safe for concurrent use.
type Worker struct {
	s     settings
	conn  *Connection
	jobs  *Jobs
	rdb   *rdb.RDB
	cache signalCache
	acks  *acks
	chain *Dispatcher // dispatches the next job of a chain
	log   *slog.Logger

	hz *horizonState // Horizon's bookkeeping; nil when Connection.Horizon is nil

	running atomic.Bool
	paused  atomic.Bool
	wake    chan struct{} // Resume and freed slots nudge a sleeping loop

	abandoned atomic.Int64 // handlers still running after their job was given up on

	batchWarned sync.Map // batch ids already warned about (no batch repository)
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
	r, err := conn.rdb()
	if err != nil {
		return nil, err
	}
	s, err := newSettings(conn, cfg)
	if err != nil {
		return nil, err
	}
	chain, err := newDispatcher(conn, dispatcherConfig{now: s.Now})
	if err != nil {
		return nil, err
	}
	c := &Worker{s: s, conn: conn, jobs: jobs, rdb: r, cache: conn.signals(r), acks: newAcks(r), chain: chain, log: s.Logger, wake: make(chan struct{}, 1)}
	if err := c.initHorizon(conn); err != nil {
		return nil, err
	}
	if size, ok := poolSize(conn.Client); ok && size < s.Concurrency+2 {
		c.log.Warn("redis pool smaller than the worker needs; jobs will wait for connections",
			"pool_size", size, "needed", s.Concurrency+2, "concurrency", s.Concurrency)
	}
	return c, nil
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
func (c *Worker) Pause() { c.paused.Store(true) }

// Resume takes jobs again after Pause (SIGCONT).
func (c *Worker) Resume() {
	c.paused.Store(false)
	c.nudge()
}

// Paused reports whether Pause is in effect.
func (c *Worker) Paused() bool { return c.paused.Load() }

func (c *Worker) nudge() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// run is the state of one Run call.
type run struct {
	ctx     context.Context // Run's ctx: cancelled = stop popping
	hardCtx context.Context // parent of handler contexts: cancelled after the grace
	ackCtx  context.Context // Redis/DB calls that must happen even while stopping: cancelled when the grace is over

	slots chan struct{} // one token per free concurrency slot
	wg    sync.WaitGroup

	start       time.Time
	taken       int
	restart     int64
	restartSeen bool
	nextSignals time.Time
	nextMemory  time.Time
	paused      map[string]bool // queue:pause flags, refreshed with the signals
	woken       bool            // the last idle wait ended with a notify token
	redisErr    error           // the loop's last Redis call's error, for EventLoop
	redisAt     time.Time       // when the loop last called Redis (wall clock)

	owner   string      // names this run's pop tickets
	popSeq  int64       // the sequence number of the next pop's ticket
	pending *pendingPop // a pop whose reply was lost, to settle before the next

	mu           sync.Mutex
	migratedAt   map[string]time.Time
	handBackTill map[string]time.Time
}

// Run works the queues until ctx is cancelled (then returns nil) or a stop condition
// is met (ErrRestart, ErrMaxJobs, ErrMaxTime, ErrQueueEmpty, ErrMemoryLimit). Either
// way no new job is taken and jobs in flight are given time to finish: all the time
// they need after a stop condition, ShutdownGrace after cancellation. A job still
// running after that stays reserved and comes back to a worker after RetryAfter; none
// is lost.
//
// Redis errors never end Run: they are logged and the call is retried with backoff.
func (c *Worker) Run(ctx context.Context) error {
	if !c.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer c.running.Store(false)

	hardCtx, hardCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer hardCancel()
	ackCtx, ackCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer ackCancel()
	r := &run{
		ctx:          ctx,
		hardCtx:      hardCtx,
		ackCtx:       ackCtx,
		slots:        make(chan struct{}, c.s.Concurrency),
		owner:        uuid.NewString(),
		popSeq:       1,
		start:        c.s.Now(),
		paused:       map[string]bool{},
		migratedAt:   map[string]time.Time{},
		handBackTill: map[string]time.Time{},
	}
	for range c.s.Concurrency {
		r.slots <- struct{}{}
	}
	stopAcks := c.acks.start(r.ackCtx)
	defer stopAcks()
	defer c.startHorizonSupervisor(r)()
	if !c.s.cacheDisabled {
		// The value at start is the reference; a read error leaves "unknown", and the
		// first successful read becomes the reference instead.
		ts, ok, err := c.cache.RestartTimestamp(ctx)
		r.redisCall(ctx, err)
		if err == nil {
			r.restart, r.restartSeen = ts, ok
		} else {
			c.log.Warn("reading the queue restart signal", "err", err)
			r.restart = -1
		}
	}
	c.logStart()

	reason := c.loop(r)
	if r.pending != nil {
		r.wg.Add(1)
		go c.settleAtStop(r)
	}

	// In-flight jobs finish first. After a stop condition they get all the time they
	// need; once ctx is cancelled (now or later) they get ShutdownGrace. The heartbeat
	// goes on meanwhile: a worker draining long jobs is alive.
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	var grace <-chan time.Time
	if ctx.Err() != nil {
		grace = c.graceTimer()
	}
	beat := time.NewTicker(heartbeatInterval)
	defer beat.Stop()
	ctxDone := ctx.Done()
wait:
	for {
		select {
		case <-done:
			c.forgetTickets(ctx, r)
			c.log.Info("worker stopped", "reason", stopReason(reason))
			return reason
		case <-ctxDone:
			ctxDone = nil
			if grace == nil {
				grace = c.graceTimer()
			}
		case <-beat.C:
			c.heartbeat(r.ackCtx, r)
		case <-grace:
			break wait
		}
	}
	// Handlers still running are told to stop; each job gets abandonWait to return
	// (its outcome is then recorded) before it is left reserved. Then acknowledgements
	// still retrying (Redis or the database unreachable) are cancelled: their jobs stay
	// in Redis, reserved, and come back after retry_after. The worker is gone within
	// ShutdownGrace + abandonWait + ackFinal of being told to stop.
	hardCancel()
	select {
	case <-done:
	case <-time.After(abandonWait):
		ackCancel()
		select {
		case <-done:
		case <-time.After(ackFinal):
		}
	}
	if n := c.abandoned.Load(); n > 0 {
		c.log.Warn("worker stopped with jobs still running; they stay reserved until retry_after", "jobs", n)
	}
	c.log.Info("worker stopped", "reason", stopReason(reason))
	return reason
}

// forgetTickets deletes the run's pop tickets once nothing can ask for them again.
func (c *Worker) forgetTickets(ctx context.Context, r *run) {
	if r.pending != nil {
		return
	}
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
	defer cancel()
	if err := c.rdb.ForgetTickets(fctx, r.owner, c.s.Queues); err != nil {
		c.log.Debug("deleting the pop tickets failed; they expire", "err", err)
	}
}

func stopReason(err error) string {
	if err == nil {
		return "context cancelled"
	}
	return err.Error()
}

func (c *Worker) graceTimer() <-chan time.Time {
	if c.s.ShutdownGrace < 0 {
		ch := make(chan time.Time, 1)
		ch <- time.Time{}
		return ch
	}
	return time.After(c.s.ShutdownGrace)
}

// logStart names what the worker works, without secrets: the Redis server, the
// connection, queues and prefix, the Laravel release, the failed-job store, and (at debug
// level) the restart and pause keys it watches.
func (c *Worker) logStart() {
	c.log.Info("worker started", "redis", ServerOf(c.conn.Client), "connection", c.s.connection, "queues", c.s.Queues,
		"prefix", c.conn.Prefix, "laravel", c.s.release.String(), "failed_store", storeName(c.conn.Failed),
		"concurrency", c.s.Concurrency)
	if c.s.cacheDisabled {
		c.log.Debug("no cache: restart and pause signals are not read, maxExceptions is not counted")
		return
	}
	if st := c.conn.Cache.Store; st != nil {
		c.log.Info("restart and pause signals, maxExceptions counters and unique locks are in the application's cache store", "cache_store", st.String())
		return
	}
	var restart, pause []string
	for _, k := range c.conn.WatchedSchemes() {
		restart = append(restart, k.RestartKey())
		pause = append(pause, k.PauseAllKey())
		for _, q := range c.s.Queues {
			pause = append(pause, k.PauseKey(c.s.connection, q))
		}
	}
	c.log.Debug("watching the restart and pause keys", "cache", ServerOf(c.cacheClient()), "restart_keys", restart, "pause_keys", pause)
}

func (c *Worker) cacheClient() redis.UniversalClient {
	if c.conn.Cache.Client != nil {
		return c.conn.Cache.Client
	}
	return c.conn.Client
}
