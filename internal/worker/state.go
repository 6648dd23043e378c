package worker

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/bus"
	"github.com/laraq/laraq/encryption"
	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/dispatch"
	"github.com/laraq/laraq/internal/horizon"
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/middleware"
	"github.com/laraq/laraq/phpclass"
)

// Config is what a Worker is made of: the parts of the queue connection, built by the
// front door (laraq.NewWorker) from a laraq.Connection, and queue:work's options
// (laraq.WorkerConfig) with their defaults applied and their times in the wire's units.
type Config struct {
	// The connection.
	Client         redis.UniversalClient
	RDB            *rdb.RDB
	Signals        rdb.Signals                     // the cache store's signals; unused when CacheDisabled
	Locks          func() (rdb.UniqueLocks, error) // the locks of ShouldBeUnique jobs
	Failed         failed.Store                    // never nil
	NullStore      bool                            // no failed store was configured: Failed keeps nothing
	Batches        bus.Repository                  // nil: job_batches is not updated
	Encrypter      *encryption.Encrypter
	Horizon        *horizon.Recorder // nil: no Horizon records
	Chain          *dispatch.Dispatcher
	Connection     string
	DefaultQueue   string         // a chain's next job without a queue goes there
	Release        job.Release    // never zero: the connection's, or LatestRelease guessed
	JobRelease     job.Release    // the connection's release as given, for JobInfo
	RetryAfter     int64          // seconds
	BlockFor       *time.Duration // nil: never block
	MigrationLimit int            // -1: no limit
	CacheDisabled  bool

	// What the start line names, without secrets: the Redis server, the prefix, the
	// failed-job store, and the cache store when it is not Redis (CacheStore), else the
	// Redis cache's server and the restart and pause keys the worker watches.
	Server, Prefix, FailedStore string
	CacheStore, CacheServer     string
	RestartKeys, PauseKeys      []string
	PoolSize                    int // the queue client's connection pool, 0 when unknown
	AckReplicas                 int // replicas each acknowledgement waits for (RDB does the waiting); for the log
	AckReplicasTimeout          time.Duration

	// queue:work's options.
	Queues               []string
	Unhandled            Unhandled
	UnhandledDelay       time.Duration
	Concurrency          int
	Sleep                time.Duration
	MigrateInterval      time.Duration
	Tries                int    // 0: unlimited
	BackoffSpec          string // "0" or "1,5,10", as PHP's --backoff
	Backoff              []int
	Timeout              time.Duration // negative: none
	TimeoutReleases      bool
	ReservationHeartbeat time.Duration // 0: the default, negative: off
	MaxJobs              int
	MaxTime              time.Duration
	StopWhenEmpty        bool
	ReadOnlyGrace        time.Duration // how long READONLY after a pop succeeded is retried; negative: not at all
	SkippedQueueRetry    time.Duration // how often a queue skipped for a key of the wrong type is tried again
	Rest                 time.Duration
	MemoryLimit          int64
	SignalInterval       time.Duration
	ShutdownGrace        time.Duration // negative: none
	Logger               *slog.Logger
	Now                  func() time.Time
	OnEvent              func(job.Event)
	HorizonSupervisor    *horizon.SupervisorOptions // nil: not listed in Horizon
	Middleware           []job.Middleware           // around every handler, before the job's own
	// Classes are the job classes' facts (WorkerConfig.Classes): what the unique feature
	// knows of a class no Go type stands for. nil: none.
	Classes *phpclass.Manifest

	// Laravel's job middleware: the environment the worker's handlers run under (the
	// stores, Redis, named limiters), the middleware given to classes by name (PHP's
	// middleware() of a class without Go type), the decoders of the middleware objects
	// ->through() put in payloads, and the clients whose middleware scripts Run loads.
	MiddlewareEnv   *middleware.Env
	ClassMiddleware map[string][]job.Middleware
	ThroughDecoders middleware.Decoders
	MiddlewareRedis []redis.UniversalClient
}

// Unhandled is what a worker does with a job whose class has no handler
// (laraq.UnhandledAction).
type Unhandled int

// The values of Unhandled, in laraq.UnhandledAction's order.
const (
	FailUnhandled Unhandled = iota
	ReleaseUnhandled
	HandBackUnhandled
)

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
)

// run is the state of one Run call that every stage shares.
type run struct {
	ctx     context.Context // Run's ctx: cancelled = stop popping
	hardCtx context.Context // parent of handler contexts: cancelled after the grace
	ackCtx  context.Context // Redis/DB calls that must happen even while stopping: cancelled when the grace is over

	slots chan struct{} // one token per free concurrency slot
	wg    sync.WaitGroup
	wake  chan struct{} // Resume nudges a sleeping loop

	// The jobs popped are worked by one goroutine per slot, which lives as long as
	// Run: a goroutine per job would cost its start and the growth of its stack every
	// time.
	tasks chan task                // popped jobs waiting for a goroutine (no more than the slots)
	work  func(t task) (gone bool) // works t; gone: its handler was taken over (watch)
	quit  chan struct{}            // closed when Run returns: idle goroutines end

	mu           sync.Mutex
	handBackTill map[string]time.Time // queues left to PHP workers after a hand-back
}

// sleep waits for d, ctx or a nudge; it reports whether d passed.
func (r *run) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
		return true
	case <-r.wake:
	}
	return false
}

// task is a popped job for a goroutine to work.
type task struct {
	queue   string
	popped  rdb.PoppedJob
	expires time.Time // when its reservation expires, on the wall clock
}

// serve works tasks until Run ends, or until the handler of one outlived its context
// and was taken over: the watch that took it over started another serve for the slot.
func (r *run) serve() {
	for {
		select {
		case t := <-r.tasks:
			if r.work(t) {
				return
			}
		case <-r.quit:
			return
		}
	}
}

// finish frees a's slot after rest (--rest), unless its deletion freed it already (see
// acks.riding), and marks the job done for Run.
func (r *run) finish(rest time.Duration, a *attempt) {
	if !a.ack.freed {
		if rest > 0 {
			r.sleep(r.ctx, rest)
		}
		r.slots <- struct{}{}
	}
	r.wg.Done()
}

// leaveAlone records that queue q is left to other workers until t.
func (r *run) leaveAlone(q string, t time.Time) {
	r.mu.Lock()
	r.handBackTill[q] = t
	r.mu.Unlock()
}

// leftAlone reports whether queue q is left to other workers at wall time now.
func (r *run) leftAlone(q string, now time.Time) bool {
	r.mu.Lock()
	till := r.handBackTill[q]
	r.mu.Unlock()
	return now.Before(till)
}

// attempt is one job being worked, with the flags PHP's Job object keeps so that a job
// is deleted, released or failed at most once.
type attempt struct {
	queue    string
	popped   rdb.PoppedJob
	job      *job.JobInfo // nil when the payload could not be parsed
	deleted  bool
	released bool
	failed   bool
	hz       *horizon.Job // what Horizon recorded of the job; nil without Horizon

	// The command decoded into its registered Go type (for UniqueJob and friends), once:
	// see command.
	cmd     any
	cmdErr  error // why the command did not decode into its Go type
	traits  *job.Traits
	decoded bool
	// uniqueReleased: the unique lock was released (or will not be by this attempt).
	uniqueReleased bool

	// expires is when the reservation ends at the earliest (wall clock, Unix nanoseconds;
	// see expiry): until then no worker may migrate the job back, and acknowledgements
	// are worth retrying. Atomic: a hold extends it while the job's goroutine reads it.
	expires atomic.Int64

	info job.JobInfo // what job points at once the payload is parsed: one allocation for both
	ack  deleteReq   // the deletion the acknowledgement batcher sends (acks.go)

	// While the handler runs (watch.go): its context, its timeout, and the watch's
	// bookkeeping, guarded by the watch's lock.
	hctx      handlerCtx
	state     atomic.Int32 // running, returned or abandoned (see watch)
	timeout   time.Duration
	started   time.Time
	abandonAt time.Time // the handler's context ended: its job is taken over then
	nextBeat  time.Time // the reservation's next extension; zero: none
	beating   bool      // an extension is under way
}

// expiry is when a's reservation ends at the earliest, as far as this worker knows.
func (a *attempt) expiry() time.Time { return time.Unix(0, a.expires.Load()) }

// extendTo records that a's reservation was moved to end at t.
func (a *attempt) extendTo(t time.Time) { a.expires.Store(t.UnixNano()) }

// id is the job's id for logs, "" when the payload could not be parsed.
func (a *attempt) id() string {
	if a.job != nil {
		return a.job.ID
	}
	return ""
}

// base is what every stage of the path shares: the configuration, the log, the events
// and the retrying of a step that Redis or the database refused.
type base struct {
	cfg *Config
	log *slog.Logger
}

// emit hands an event to Config.OnEvent.
func (b *base) emit(e job.Event) {
	if b.cfg.OnEvent == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = b.cfg.Now()
	}
	if e.Connection == "" {
		e.Connection = b.cfg.Connection
	}
	// Every event of an attempt whose outcome a middleware decided names it.
	e.Middleware, e.Decision = job.Decided(e.Job)
	b.cfg.OnEvent(e)
}

// reservation is how long a reservation lasts (retry_after).
func (b *base) reservation() time.Duration { return time.Duration(b.cfg.RetryAfter) * time.Second }

// expiresAt is when a reservation made at t expires, on the wall clock: the score is
// whole seconds, so it can end up to a second less than retry_after after t.
func (b *base) expiresAt(t time.Time) time.Time {
	return t.Truncate(time.Second).Add(b.reservation())
}

// retryDelay is the wait before retry n (1-based) of a failing Redis or database call.
func retryDelay(n int) time.Duration {
	d := retryMin
	for i := 1; i < n && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

// retry runs op, one step of handling attempt a, until it succeeds, ctx ends (the run's
// acknowledgement context ends at the end of the shutdown grace), or a's reservation has
// expired (then no step of it is worth doing: another worker may have the job), or Redis
// refuses the credentials (nothing changes that but an operator). It backs off between
// attempts and logs each failure. lost reports that an attempt failed: it may have run
// on the server without its reply arriving.
func (b *base) retry(ctx context.Context, a *attempt, what string, op func(context.Context) error) (lost bool, err error) {
	for n := 1; ; n++ {
		if err = op(ctx); err == nil {
			return lost, nil
		}
		lost = true
		// As the expiry nears the attempts come closer together, so that one lands
		// soon after Redis answers again, before another worker may take the job.
		d := min(retryDelay(n), max(time.Until(a.expiry())/4, retryMin))
		if ctx.Err() != nil || rdb.IsAuthError(err) || !time.Now().Add(d).Before(a.expiry().Add(retryMax)) {
			return lost, err
		}
		b.log.Warn(what+" failed; retrying", "err", err, "retry_in", d, "attempt", n)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return lost, err
		case <-t.C:
		}
	}
}

// command is the attempt's command decoded into its registered Go type (once), and the
// type's traits; nil, nil when the type has none or the command does not decode.
func (a *attempt) command(jobs *job.Jobs) (any, *job.Traits) {
	if !a.decoded {
		a.decoded = true
		if a.job == nil {
			return nil, nil
		}
		if a.traits = job.TraitsOf(jobs, a.job.Class); a.traits != nil {
			a.cmd, a.cmdErr = a.traits.Decode(a.job)
		}
	}
	if a.cmd == nil {
		return nil, nil
	}
	return a.cmd, a.traits
}

// logInvalid reports a payload the pop script moved to the invalid list.
func logInvalid(log *slog.Logger, q string, e *rdb.InvalidJobError) {
	log.Error("payload cannot be reserved; moved to the invalid list (a PHP worker would have lost it)",
		"queue", q, "key", e.Key, "reason", e.Reason)
}
