package worker

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/laraq/laraq/internal/horizon"
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/middleware"
)

// errRunning is returned by a second concurrent Run.
var errRunning = errors.New("laraq: Run is already running")

// Worker is the engine behind laraq.Worker: one job's path through it is fetch
// (fetch.go) → process (process.go: parse, decide) → run (run.go: the handler) →
// settle (settle.go: delete, release or fail, and the features' hooks) → acknowledge
// (acks.go), each stage a small type that only calls the ones after it.
type Worker struct {
	base
	fetcher    *fetcher
	acks       *acks
	watch      *watch
	supervisor *horizon.Supervisor // nil: not listed in Horizon's dashboard
	running    atomic.Bool
	wake       chan struct{} // Resume nudges a sleeping loop
	abandoned  atomic.Int64  // handlers still running after their job was given up on
}

// New builds a worker running jobs' handlers on cfg, whose defaults are applied.
func New(cfg *Config, jobs *job.Jobs) (*Worker, error) {
	if cfg.ThroughDecoders == nil {
		cfg.ThroughDecoders = middleware.LaravelDecoders()
	}
	b := base{cfg: cfg, log: cfg.Logger}
	w := &Worker{base: b, wake: make(chan struct{}, 1)}
	w.acks = newAcks(cfg.RDB, cfg.Horizon, cfg)
	books := &bookkeeping{base: b, hz: cfg.Horizon, acks: w.acks}
	holder := &holder{base: b}
	uniques := newUniques(b, jobs)
	batches := &batches{base: b, jobs: jobs}
	settler := &settler{base: b, rules: rules{cfg}, acks: w.acks, books: books, holder: holder, uniques: uniques,
		chains: &chains{base: b, jobs: jobs}, batches: batches, models: &models{base: b, jobs: jobs}}
	runner := &runner{base: b, jobs: jobs, settler: settler, watch: newWatch(b, settler, &w.abandoned, holder.interval()),
		uniques: uniques, batches: batches, abandoned: &w.abandoned,
		props: &properties{base: b, jobs: jobs}}
	w.watch = runner.watch
	processor := &processor{base: b, jobs: jobs, rules: rules{cfg}, books: books, runner: runner, settler: settler,
		debouncer: &debouncer{base: b, jobs: jobs},
		env:       &job.Env{Encrypter: cfg.Encrypter, Batches: cfg.Batches, Release: cfg.JobRelease}}
	w.fetcher = &fetcher{base: b, books: books, acks: w.acks, processor: processor}
	for _, class := range unnamedLocks(cfg, jobs) {
		w.log.Warn("the unique lock of this class is named by its uniqueId() method, which laraq cannot run: on Laravel 8.x to 11.38, whose payloads do not name the lock, it is released only when the handler gives the id (JobInfo.SetUniqueID; a laraq work --forward service answers with an X-Laraq-Unique-Id header), else it is held until uniqueFor runs out",
			"class", class)
	}
	if o := cfg.HorizonSupervisor; o != nil {
		if cfg.Horizon == nil {
			return nil, errors.New("laraq: WorkerConfig.HorizonSupervisor needs Connection.Horizon")
		}
		var err error
		if w.supervisor, err = horizon.NewSupervisor(cfg.Horizon, *o, w.supervisorOptions(), w.log); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// Pause stops taking new jobs until Resume.
func (w *Worker) Pause() { w.fetcher.paused.Store(true) }

// Resume takes jobs again after Pause.
func (w *Worker) Resume() {
	w.fetcher.paused.Store(false)
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Paused reports whether Pause is in effect.
func (w *Worker) Paused() bool { return w.fetcher.paused.Load() }

// Run works the queues until ctx is cancelled (nil) or a stop condition is met
// (ErrRestart, ...); see laraq.Worker.Run.
func (w *Worker) Run(ctx context.Context) error {
	if !w.running.CompareAndSwap(false, true) {
		return errRunning
	}
	defer w.running.Store(false)

	// The handlers' parent context carries the middleware's environment, once per Run.
	hardCtx, hardCancel := context.WithCancel(middleware.WithEnv(context.WithoutCancel(ctx), w.cfg.MiddlewareEnv))
	defer hardCancel()
	ackCtx, ackCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer ackCancel()
	r := &run{
		ctx:          ctx,
		hardCtx:      hardCtx,
		ackCtx:       ackCtx,
		slots:        make(chan struct{}, w.cfg.Concurrency),
		wake:         w.wake,
		tasks:        make(chan task, w.cfg.Concurrency),
		quit:         make(chan struct{}),
		handBackTill: map[string]time.Time{},
	}
	r.work = func(t task) bool { return w.fetcher.processor.work(r, t) }
	defer close(r.quit)
	for range w.cfg.Concurrency {
		r.slots <- struct{}{}
		go r.serve()
	}
	newFetchRun := func() *fetchRun {
		return &fetchRun{run: r, ctx: ctx, owner: uuid.NewString(), popSeq: 1, start: w.cfg.Now(), paused: map[string]bool{},
			migratedAt: map[string]time.Time{}, refusals: refusals{skipped: map[string]*skippedQueue{}}}
	}
	l := newFetchRun()
	stopAcks := w.acks.start(r.ackCtx)
	defer stopAcks()
	defer w.watch.start(r)()
	defer w.startHorizon(l)()
	if !w.cfg.CacheDisabled {
		// The value at start is the reference; a read error leaves "unknown", and the
		// first successful read becomes the reference instead.
		ts, ok, err := w.cfg.Signals.RestartTimestamp(ctx)
		l.redisCall(ctx, err)
		if err == nil {
			l.restart, l.restartSeen = ts, ok
		} else {
			w.log.Warn("reading the queue restart signal", "err", err)
			l.restart = -1
		}
	}
	w.loadMiddlewareScripts(ctx)
	w.logStart()

	w.acks.startRiding()
	loops, reason := w.fetcher.loops(l, newFetchRun())
	w.acks.stopRiding(r.ackCtx)
	for _, l := range loops {
		if l.pending != nil {
			r.wg.Add(1)
			go w.fetcher.settleAtStop(l)
		}
	}

	// In-flight jobs finish first. After a stop condition they get all the time they
	// need; once ctx is cancelled (now or later) they get ShutdownGrace. The heartbeat
	// goes on meanwhile: a worker draining long jobs is alive.
	done := make(chan struct{})
	go func() { r.wg.Wait(); close(done) }()
	var grace <-chan time.Time
	if ctx.Err() != nil {
		grace = w.graceTimer()
	}
	beat := time.NewTicker(heartbeatInterval)
	defer beat.Stop()
	ctxDone := ctx.Done()
wait:
	for {
		select {
		case <-done:
			for _, l := range loops {
				w.fetcher.forgetTickets(ctx, l)
			}
			w.log.Info("worker stopped", "reason", stopReason(reason))
			return reason
		case <-ctxDone:
			ctxDone = nil
			if grace == nil {
				grace = w.graceTimer()
			}
		case <-beat.C:
			w.fetcher.heartbeat(r.ackCtx, l)
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
	if n := w.abandoned.Load(); n > 0 {
		w.log.Warn("worker stopped with jobs still running; they stay reserved until retry_after", "jobs", n)
	}
	w.log.Info("worker stopped", "reason", stopReason(reason))
	return reason
}

// loadMiddlewareScripts sends the job middleware's scripts (the cache store's add, the
// lock release, the DurationLimiter's) to their servers, so that no middleware's first
// call pays a NOSCRIPT round trip more than PHP's. A failure is only logged: each call
// loads its script by itself when missing.
func (w *Worker) loadMiddlewareScripts(ctx context.Context) {
	for _, c := range w.cfg.MiddlewareRedis {
		if err := rdb.LoadMiddlewareScripts(ctx, c); err != nil {
			w.log.Warn("loading the job middleware's scripts", "err", err)
			return
		}
	}
}

func stopReason(err error) string {
	if err == nil {
		return "context cancelled"
	}
	return err.Error()
}

func (w *Worker) graceTimer() <-chan time.Time {
	if w.cfg.ShutdownGrace < 0 {
		ch := make(chan time.Time, 1)
		ch <- time.Time{}
		return ch
	}
	return time.After(w.cfg.ShutdownGrace)
}

// startHorizon announces Horizon's records and lists the worker as a master supervisor
// until the returned stop is called. Without Horizon it does nothing.
func (w *Worker) startHorizon(l *fetchRun) (stop func()) {
	if w.cfg.Horizon == nil {
		return func() {}
	}
	w.log.Info("writing Laravel Horizon's records", "prefix", w.cfg.Horizon.Rec.Keys().Prefix)
	if w.supervisor == nil {
		return func() {}
	}
	return w.supervisor.Start(l.ackCtx, func() (int, bool, bool) {
		return w.cfg.Concurrency, w.Paused(), l.run.ctx.Err() != nil
	})
}

// supervisorOptions are the worker's settings as Horizon lists a supervisor's options.
func (w *Worker) supervisorOptions() rdb.HorizonSupervisorOptions {
	c := w.cfg
	backoff := 0
	if len(c.Backoff) > 0 {
		backoff = c.Backoff[0]
	}
	timeout := int(c.Timeout / time.Second)
	if c.Timeout < 0 {
		timeout = 0
	}
	return rdb.HorizonSupervisorOptions{
		Connection:   c.Connection,
		Queue:        strings.Join(c.Queues, ","),
		Balance:      "off",
		Backoff:      backoff,
		MaxProcesses: c.Concurrency,
		MinProcesses: c.Concurrency,
		MaxTries:     c.Tries,
		MaxTime:      int(c.MaxTime / time.Second),
		MaxJobs:      c.MaxJobs,
		Memory:       int(c.MemoryLimit >> 20),
		Sleep:        int(c.Sleep / time.Second),
		Timeout:      timeout,
		Rest:         int(c.Rest / time.Second),
	}
}

// logStart names what the worker works, without secrets: the Redis server, the
// connection, queues and prefix, the Laravel release, the failed-job store, and (at debug
// level) the restart and pause keys it watches.
func (w *Worker) logStart() {
	c := w.cfg
	w.log.Info("worker started", "redis", c.Server, "connection", c.Connection, "queues", c.Queues,
		"prefix", c.Prefix, "laravel", c.Release.String(), "failed_store", c.FailedStore,
		"concurrency", c.Concurrency, "memory_limit_mb", c.MemoryLimit>>20, "redis_pool", c.PoolSize)
	if c.AckReplicas > 0 {
		w.log.Info("acknowledgements wait for replicas (WAIT) before a job counts as done", "replicas", c.AckReplicas, "timeout", c.AckReplicasTimeout)
	}
	switch {
	case c.CacheDisabled:
		w.log.Debug("no cache: restart and pause signals are not read, maxExceptions is not counted")
	case c.CacheStore != "":
		w.log.Info("restart and pause signals, maxExceptions counters and unique locks are in the application's cache store", "cache_store", c.CacheStore)
	default:
		w.log.Debug("watching the restart and pause keys", "cache", c.CacheServer, "restart_keys", c.RestartKeys, "pause_keys", c.PauseKeys)
	}
}
