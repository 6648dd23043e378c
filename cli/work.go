package cli

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/artisanlog"
	"github.com/laraq/laraq/laravel"
	laraqotel "github.com/laraq/laraq/otel"
	"github.com/redis/go-redis/v9"
)

func init() {
	register(&Command{Name: "work", Summary: "run a Go worker on Laravel queues, like php artisan queue:work", Run: runWork})
}

const workUsage = `work [flags] [CONNECTION]

Works Laravel's Redis queues like 'php artisan queue:work CONNECTION': jobs are taken,
retried, released and failed by Laravel's rules, side by side with PHP workers. The jobs
run the Go handlers this binary registered; with --forward every job is sent to an HTTP
service instead.

CONNECTION is the queue connection name recorded with failed jobs and used in
queue:pause keys (default: LARAQ_CONNECTION, else "redis").

Configuration: point laraq at the Laravel application with --laravel-root DIR (its .env,
config files and framework version) or --env-file PATH, and it uses the application's
Redis connection, prefix, queue, retry_after, cache store keys (queue:restart,
queue:pause, maxExceptions counters), failed-job table and timezone. A flag wins over
the LARAQ_* variable of the same setting (LARAQ_REDIS_URL, LARAQ_REDIS_PREFIX,
LARAQ_DATABASE, ...), which wins over the application's own variable (also when set in
the process environment), which wins over the application's config files and the
skeleton's defaults.

Failed jobs go to --database (default: the application's failed-job table, so that
'php artisan queue:failed' and 'queue:retry' see them; without an application, the local
file $XDG_DATA_HOME/laraq/failed.sqlite, ~/.local/share/laraq/failed.sqlite, which
'laraq failed' reads too). failed_at is written in the application's timezone.

Output: a line per job on stdout as queue:work prints it (--log-format artisan:
"  2026-11-21 10:00:00 App\Jobs\SendWelcome ........ 12.34ms DONE"; artisan8:
"[2026-11-21 10:00:00][id] Processed:  App\Jobs\SendWelcome"), and the log on stderr,
in the same format. json and text write slog records instead; job records carry
job_status, job_id, job, queue and runtime.

--metrics-addr :9090 serves Prometheus metrics on /metrics (jobs processed, failed,
released, exceptions and timeouts by queue and class, what job middleware decided,
handler durations, queue depths, expired reservations moved back) and /healthz (503 within a second of Redis not
answering, 200 as soon as it answers again).

` + horizonUsage + `
With --horizon-supervisor[=NAME] the worker also shows as a master supervisor with its
queues and concurrency, which horizon:terminate, horizon:pause and horizon:continue reach.

Stopping: SIGTERM or SIGINT stop taking jobs; jobs in flight get --shutdown-grace to
finish (a second signal exits at once). SIGUSR2 pauses, SIGCONT resumes.
'php artisan queue:restart' (or 'laraq restart') makes the worker finish its jobs and
exit 0, as do --max-jobs, --max-time, --stop-when-empty and --once; over --memory it
exits 12, as queue:work does. A Redis setup no retry fixes ends it at first sight with
one line naming the server and the fix, exit status 3: refused credentials, a replica
(READONLY; after a pop succeeded or through Sentinel, once --readonly-grace passed), a
Cluster queue name without hash tag (CROSSSLOT), a command the ACL user may not run
(NOPERM) or the server lacks. A queue one of whose keys holds the wrong type
(WRONGTYPE) is skipped with an ERROR line naming the key, the others go on, and it is
tried again every --skipped-queue-retry; --stop-when-empty and --once then exit 3
instead of 0, and exit 1 when no pop succeeded for 10 s (Redis down or out of memory).
'php artisan queue:pause' (Laravel 12.40+, or 'laraq pause') pauses one queue. When
the Laravel version is not named (--laravel-version, LARAQ_LARAVEL_VERSION or the
framework under --laravel-root) but guessed from the .env keys or defaulted, these
signals are read under every version's cache key scheme, so that a wrong guess does not
hide them (--log-level debug lists the keys).

--classes FILE (or LARAQ_CLASSES), a manifest 'laraq classes' wrote, makes the worker
compare each Go type this binary registered with its PHP class before it takes a job,
and refuse to start, naming every class, property and fix, on a property no field takes,
a field no property has (case included), a visibility or default that differs, or a
ShouldBeUnique or ShouldBeEncrypted class whose type does not say so. With it the worker
also releases the unique lock of a job of a ShouldBeUnique class that no Go type stands
for (--forward) when PHP's worker would, on every release (8.x to 11.38 payloads do not
name the lock): the id is the class's uniqueId property, or, for a uniqueId() method,
what the forwarded service answers in X-Laraq-Unique-Id; a class whose id cannot be had
is named at start. Without --classes, a command that carries a property no field of its
Go type takes is logged once per class and property and counted in the metrics.

--forward URL: each job is POSTed as JSON with the headers Content-Type:
application/json, X-Laraq-Job-Id, X-Laraq-Job-Uuid, X-Laraq-Attempt, X-Laraq-Queue and
X-Laraq-Connection, and the job's trace as W3C traceparent and tracestate (the attempt's
span under --otel, else the context OpenTelemetry's PHP instrumentation put in the
payload), so that the service continues the trace; the body is

  {"id": "...", "uuid": "...", "attempt": 1, "queue": "default", "connection": "redis",
   "name": "App\\Jobs\\X", "class": "App\\Jobs\\X",
   "payload": {...the payload as 'laraq decode' prints it: data.command readable...}}

With --classes, a job of a class the manifest has also carries "class_facts": the class's
properties with their visibility, declared type and default, which ones the payload
holds and which PHP left out at their default, as 'laraq decode --classes' shows them.

A 2xx answer means done. Any other answer fails the attempt (its status and the first
line of its body become the error, retried by Laravel's rules), unless it carries a
Retry-After header in seconds: then the job is released for that long. No answer within
the job's timeout is a timeout. For a ShouldBeUnique class whose uniqueId() is a method,
the answer's X-Laraq-Unique-Id header says what it returns for the job, so that the
worker releases the lock (with --classes): after a 2xx or on the job's failure, or, for
ShouldBeUniqueUntilProcessing, at once.` + middlewareUsage

// workFlags are the flags of `work` beyond the application flags.
type workFlags struct {
	tries          int
	backoff        string
	timeout        int
	sleep          float64
	blockFor       string
	maxJobs        int
	maxTime        int
	stopWhenEmpty  bool
	once           bool
	rest           float64
	memory         int
	concurrency    int
	retryAfter     int
	forward        string
	forwardInsec   bool
	noCache        bool
	shutdownGrace  float64
	timeoutRelease bool
	noHeartbeat    bool
	ackReplicas    int
	ackTimeout     float64
	quiet          bool
	verbose        bool
	unhandled      string
	unhandledDelay float64
	logLevel       string
	logFormat      string
	metricsAddr    string
	otel           bool
	readOnlyGrace  float64
	skippedRetry   float64
}

// workSections order `work --help`: the flags an artisan user reaches for every day
// first, as php artisan queue:work names them, then the rest by what they are about.
var workSections = []helpSection{
	{title: "Everyday flags (php artisan queue:work's)", names: []string{"CONNECTION", "queue", "concurrency", "tries", "timeout", "memory", "sleep", "stop-when-empty"},
		args: map[string]string{"CONNECTION": "the queue connection's name, which failed jobs and queue:pause keys carry (default: LARAQ_CONNECTION, else redis)"}},
	{title: "More of queue:work's flags", names: []string{"once", "backoff", "max-jobs", "max-time", "rest", "block-for", "retry-after", "quiet", "verbose"}},
	{title: "The Laravel application", names: []string{"laravel-root", "env-file", "laravel-version", "cache-prefix", "no-cache", "classes"}},
	{title: "Redis", names: []string{"redis", "redis-sentinel", "redis-sentinel-master", "prefix", "readonly-grace", "skipped-queue-retry", "ack-replicas", "ack-replicas-timeout"}},
	{title: "Failed jobs", names: []string{"database", "table", "create-failed-table"}},
	{title: "Go handlers", names: []string{"unhandled", "unhandled-delay", "timeout-releases", "no-reservation-heartbeat", "shutdown-grace"}},
	{title: "Job middleware", names: []string{"middleware", "limiter", "middleware-file"}},
	{title: "Forwarding to an HTTP service", names: []string{"forward", "forward-insecure"}},
	{title: "Horizon", names: []string{"horizon", "horizon-supervisor", "horizon-trim"}},
	{title: "Metrics, logs and tracing", names: []string{"metrics-addr", "log-level", "log-format", "otel"}},
}

func runWork(ctx context.Context, app *App, args []string) int {
	fs := app.NewFlagSet("work", workUsage)
	fs.sections = workSections
	af := addAppFlags(fs.FlagSet, true, true)
	hf := addHorizonFlags(fs.FlagSet, true)
	cf := addClassesFlag(fs)
	mf := addMiddlewareFlags(fs.FlagSet)
	var w workFlags
	fs.IntVar(&w.tries, "tries", laraq.DefaultTries, "number of times to attempt a job before failing it (0: unlimited)")
	fs.StringVar(&w.backoff, "backoff", "0", "seconds to wait before retrying a job that failed, per attempt: `LIST` such as 1,5,10")
	fs.IntVar(&w.timeout, "timeout", int(laraq.DefaultTimeout/time.Second), "`seconds` a job may run (0: no limit)")
	fs.Float64Var(&w.sleep, "sleep", laraq.DefaultSleep.Seconds(), "`seconds` to sleep when no job is available")
	fs.StringVar(&w.blockFor, "block-for", "", "wait up to `SECONDS` on the queue for a job instead of sleeping (0: until one comes; empty: never, like block_for null)")
	fs.IntVar(&w.maxJobs, "max-jobs", 0, "stop after this many jobs (0: no limit)")
	fs.IntVar(&w.maxTime, "max-time", 0, "stop after this many `seconds` (0: no limit)")
	fs.BoolVar(&w.stopWhenEmpty, "stop-when-empty", false, "stop when the queues are empty")
	fs.BoolVar(&w.once, "once", false, "process the next job only")
	fs.Float64Var(&w.rest, "rest", 0, "`seconds` to rest between jobs")
	fs.IntVar(&w.memory, "memory", laraq.DefaultMemoryLimit>>20, "stop (exit status 12) when the process uses more than this many `megabytes` (0: no limit)")
	fs.IntVar(&w.concurrency, "concurrency", laraq.DefaultConcurrency, "jobs run at once (the Redis pools are sized for them)")
	fs.IntVar(&w.retryAfter, "retry-after", 0, "the connection's retry_after in `seconds` (default: LARAQ_REDIS_QUEUE_RETRY_AFTER, else the\napplication's REDIS_QUEUE_RETRY_AFTER, else 90)")
	fs.StringVar(&w.forward, "forward", "", "POST every job to this `URL` instead of running Go handlers")
	fs.BoolVar(&w.forwardInsec, "forward-insecure", false, "forward ShouldBeEncrypted jobs, decrypted, over plain http:// to a host that is not loopback\n(refused by default: the command would cross the network in clear text; the job is failed instead)")
	fs.BoolVar(&w.noCache, "no-cache", false, "use no cache: no restart/pause signals, no maxExceptions")
	fs.Float64Var(&w.shutdownGrace, "shutdown-grace", laraq.DefaultShutdownGrace.Seconds(), "`seconds` jobs in flight may still run after SIGTERM")
	fs.BoolVar(&w.timeoutRelease, "timeout-releases", false, "release timed-out jobs (with their backoff) instead of leaving them reserved until retry_after, as PHP does")
	fs.BoolVar(&w.noHeartbeat, "no-reservation-heartbeat", false, "do not keep a running job's reservation alive (by default it is extended every retry_after/3, so no\nworker runs a job twice that takes longer than retry_after); PHP workers never extend it")
	fs.IntVar(&w.ackReplicas, "ack-replicas", 0, "a job counts as done when this many replicas of the master hold its deletion or release\n"+
		"(Redis WAIT; sent again on the new master after a failover): a failover then runs again only the jobs in flight (0: off, as PHP)")
	fs.Float64Var(&w.ackTimeout, "ack-replicas-timeout", laraq.DefaultAckReplicasTimeout.Seconds(), "`seconds` one confirmation waits for the replicas before the acknowledgement is sent again")
	fs.BoolVar(&w.quiet, "quiet", false, "do not print a line per job")
	fs.BoolVar(&w.verbose, "verbose", false, "show job ids in artisan lines, like queue:work -v")
	for _, v := range []string{"v", "vv", "vvv"} { // artisan's verbosity flags
		fs.BoolVar(&w.verbose, v, false, "same as --verbose")
	}
	fs.StringVar(&w.unhandled, "unhandled", "fail", "what to do with jobs no handler takes: `fail`, release or hand-back (to PHP workers); with --database null, fail means release")
	fs.Float64Var(&w.unhandledDelay, "unhandled-delay", laraq.DefaultUnhandledDelay.Seconds(),
		"`seconds` a job no handler takes is released for (--unhandled release), or this worker leaves\nits queue to the PHP workers after handing one back (--unhandled hand-back)")
	fs.StringVar(&w.logLevel, "log-level", "info", "`level` of the stderr log: debug, info, warn, error")
	fs.StringVar(&w.logFormat, "log-format", string(artisanlog.Artisan), "`format` of job lines and log: artisan (Laravel 9+), artisan8, json or text; colours on a terminal")
	fs.Float64Var(&w.readOnlyGrace, "readonly-grace", laraq.DefaultReadOnlyGrace.Seconds(),
		"`seconds` to keep retrying when the master answers READONLY after a pop succeeded, as in a failover,\nbefore exiting 3 (0: exit at once; READONLY before any pop, not through Sentinel, exits at once)")
	fs.Float64Var(&w.skippedRetry, "skipped-queue-retry", laraq.DefaultSkippedQueueRetry.Seconds(),
		"`seconds` between tries of a queue skipped because one of its keys holds the wrong type")
	fs.StringVar(&w.metricsAddr, "metrics-addr", "", "serve Prometheus /metrics and /healthz on this `address`, e.g. :9090")
	fs.BoolVar(&w.otel, "otel", false, "export a span per job attempt with OpenTelemetry's OTLP/HTTP exporter, the child of the trace the\n"+
		"payload carries (default: on when OTEL_TRACES_EXPORTER=otlp or an OTEL_EXPORTER_OTLP_[TRACES_]ENDPOINT is set,\n"+
		"off with OTEL_SDK_DISABLED=true; OTEL_SERVICE_NAME, default laraq, and the other OTEL_* variables apply)")
	positional, rc := parseInterleaved(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(positional) > 1 {
		return fs.Fail("takes one CONNECTION, got %q", positional)
	}

	appCfg, err := af.load(app)
	if err != nil {
		return app.errorf("%v", err)
	}
	out, err := w.outputs(app, appCfg.Location)
	if err != nil {
		return app.errorf("%v", err)
	}
	logger := out.log
	// go-redis' own lines (dial failures, pool notices) join the log, in its format.
	redis.SetLogger(newRedisLog(logger))
	cfg, err := w.config()
	if err != nil {
		return app.errorf("%v", err)
	}
	cfg.Logger = logger
	if err := mf.apply(&cfg); err != nil {
		return app.errorf("%v", err)
	}
	if af.conn.queueSet {
		if cfg.Queues, err = af.queues(); err != nil {
			return app.errorf("%v", err)
		}
	}
	// NewWorker compares the Go types with their classes before a job is taken.
	if cfg.Classes, err = cf.load(app); err != nil {
		return app.errorf("%v", err)
	}
	if appCfg.Release.Guessed {
		warnGuessedRelease(logger, appCfg)
	}

	// The pools fit the worker (WorkerConfig.PoolSizes).
	conn, err := af.connect(ctx, appCfg, laravel.ConnectOptions{Worker: &cfg, Logger: logger})
	if err != nil {
		return workFailed(app, err)
	}
	defer conn.Close()
	if len(positional) == 1 {
		conn.Name = positional[0]
	}
	if w.retryAfter != 0 {
		conn.RetryAfter = time.Duration(w.retryAfter) * time.Second
	}
	if w.blockFor != "" {
		f, _ := strconv.ParseFloat(w.blockFor, 64)
		conn.BlockFor = new(seconds(f))
	}
	conn.Cache.Disabled = w.noCache
	if err := hf.apply(&cfg, conn); err != nil {
		return app.errorf("%v", err)
	}
	if conn.Failed == nil {
		logger.Warn("failed-job store is null: failed jobs are dropped like Laravel's null failed driver, and jobs without handler are released instead")
	} else if dsn, local, _ := appCfg.FailedStore(); local && af.database == "" {
		logger.Info("failed jobs are recorded in a local file, not in the application's failed_jobs table (pass --database or --laravel-root to share them with PHP)",
			"database", dsn)
	}

	var tracer *laraqotel.Tracer
	if tracingWanted(w.otel, app.Getenv) {
		tr, shutdown, err := startTracing(ctx, app.Getenv, logger)
		if err != nil {
			return app.errorf("%v", err)
		}
		defer shutdown()
		tracer = tr
		cfg.Middleware = append(cfg.Middleware, tr)
		cfg.CreatePayloadUsing = tr.CreatePayload
	}

	jobs := app.Jobs
	if w.forward != "" {
		fw, err := newForwarder(w.forward, cfg.Concurrency, w.forwardInsec)
		if err != nil {
			return app.errorf("--forward: %v", err)
		}
		logger.Info("forwarding every job", "url", fw.display)
		if fw.plainOffHost && conn.Encrypter != nil {
			if w.forwardInsec {
				logger.Warn("--forward-insecure: ShouldBeEncrypted jobs are sent decrypted over plain http:// to a host that is not loopback", "url", fw.display)
			} else {
				logger.Warn("--forward is plain http:// to a host that is not loopback: ShouldBeEncrypted jobs are failed instead of sent decrypted (use https://, or --forward-insecure)", "url", fw.display)
			}
		}
		fw.classes = cfg.Classes
		jobs = laraq.NewJobs()
		jobs.Fallback(fw.Handle)
	} else if jobs.Len() == 0 {
		logger.Warn("no Go handlers are registered in this binary: every job follows --unhandled (use --forward, or build a binary with cli.Run(jobs))")
	}

	obs := &observer{tracer: tracer}
	if !w.quiet {
		obs.lines = artisanlog.NewJobLines(out.jobs)
	}
	// The metrics server outlives the worker's ctx so that the last scrape sees the drain.
	mctx, stopMetrics := context.WithCancel(context.WithoutCancel(ctx))
	defer stopMetrics()
	if w.metricsAddr != "" {
		m, err := startMetrics(mctx, w.metricsAddr, conn, cfg.Queues, logger)
		if err != nil {
			return app.errorf("--metrics-addr: %v", err)
		}
		obs.metrics = m
	}
	cfg.OnEvent = obs.event

	worker, err := laraq.NewWorker(conn, jobs, cfg)
	if err != nil {
		return app.errorf("%v", err)
	}
	stopSignals := pauseOnSignals(worker, logger)
	defer stopSignals()

	err = worker.Run(ctx)
	if rc := laraq.ExitStatus(err); rc == 0 || rc == laraq.ExitMemoryLimit {
		return rc
	}
	return workFailed(app, err)
}

// workFailed prints err, the one line `work` ends with when it could not work, and
// returns its exit status: laraq.ExitRedisSetup (3) for a Redis setup no retry fixes
// (refused credentials, a replica, a Cluster slot clash, a command the ACL user may not
// run, ...), so that a supervisor can tell it from a crash, else 1.
func workFailed(app *App, err error) int {
	app.errorf("%s", strings.TrimPrefix(err.Error(), "laraq: ")) // the line starts with the command's name already
	return max(laraq.ExitStatus(err), 1)
}

// warnGuessedRelease says that the release is a guess. With the application's directory
// known, it says what could not be read there (asking for --laravel-root then would
// not help); without, how to name the release.
func warnGuessedRelease(logger *slog.Logger, cfg *laravel.Config) {
	attrs := []any{"release", cfg.Release.String(), "from", cfg.Origin("Release").String(), "prefix", cfg.Prefix}
	if cfg.Root == "" {
		logger.Warn("the Laravel release is guessed, not known: name it with --laravel-version (or --laravel-root to read the framework) if the prefix or the failure texts are wrong", attrs...)
		return
	}
	logger.Warn("the Laravel release could not be read under "+cfg.Root+": there is no vendor/laravel/framework, and neither "+
		"vendor/composer/installed.json nor composer.lock names laravel/framework (run composer install there); laraq guessed the release, "+
		"which decides the prefix and the failure texts", attrs...)
}

// config turns the flags into the worker's options, starting from queue:work's
// (laraq.QueueWork); the connection's settings (--retry-after, --block-for, --no-cache)
// are applied to the Connection.
func (w *workFlags) config() (laraq.WorkerConfig, error) {
	cfg := laraq.QueueWork()
	cfg.Concurrency = w.concurrency
	cfg.Tries = w.tries
	cfg.MaxJobs = w.maxJobs
	cfg.MaxTime = time.Duration(w.maxTime) * time.Second
	cfg.StopWhenEmpty = w.stopWhenEmpty
	cfg.Rest = seconds(w.rest)
	cfg.MemoryLimit = int64(w.memory) << 20
	cfg.TimeoutReleases = w.timeoutRelease
	cfg.ShutdownGrace = seconds(w.shutdownGrace)
	cfg.AckReplicas, cfg.AckReplicasTimeout = w.ackReplicas, seconds(w.ackTimeout)
	cfg.ReadOnlyGrace = seconds(w.readOnlyGrace)
	if w.readOnlyGrace == 0 {
		cfg.ReadOnlyGrace = -1
	}
	cfg.SkippedQueueRetry = seconds(w.skippedRetry)
	if w.tries == 0 {
		cfg.Tries = laraq.UnlimitedTries // queue:work --tries=0
	}
	if w.noHeartbeat {
		cfg.ReservationHeartbeat = -1
	}
	switch {
	case w.tries < 0:
		return cfg, fmt.Errorf("--tries %d: want 0 (unlimited) or more", w.tries)
	case w.concurrency < 1:
		return cfg, fmt.Errorf("--concurrency %d: want 1 or more", w.concurrency)
	case w.retryAfter < 0:
		return cfg, fmt.Errorf("--retry-after %d: want 1 or more seconds", w.retryAfter)
	case w.ackReplicas < 0 || w.ackTimeout <= 0:
		return cfg, fmt.Errorf("--ack-replicas %d, --ack-replicas-timeout %v: want 0 or more replicas, more than 0 seconds", w.ackReplicas, w.ackTimeout)
	case w.timeout < 0, w.sleep < 0, w.rest < 0, w.memory < 0, w.maxJobs < 0, w.maxTime < 0, w.shutdownGrace < 0, w.readOnlyGrace < 0:
		return cfg, errors.New("--timeout, --sleep, --rest, --memory, --max-jobs, --max-time, --shutdown-grace and --readonly-grace must not be negative")
	case w.skippedRetry <= 0:
		return cfg, fmt.Errorf("--skipped-queue-retry %v: want more than 0 seconds", w.skippedRetry)
	}
	for _, part := range strings.Split(w.backoff, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(part))
		if err != nil || n < 0 {
			return cfg, fmt.Errorf("--backoff %q: want seconds such as 5 or 1,5,10", w.backoff)
		}
		cfg.Backoff = append(cfg.Backoff, n)
	}
	cfg.Timeout = time.Duration(w.timeout) * time.Second
	if w.timeout == 0 {
		cfg.Timeout = -1 // --timeout=0: no limit
	}
	cfg.Sleep = seconds(w.sleep)
	if w.sleep == 0 {
		cfg.Sleep = -1
	}
	if w.blockFor != "" {
		if f, err := strconv.ParseFloat(w.blockFor, 64); err != nil || f < 0 {
			return cfg, fmt.Errorf("--block-for %q: want seconds, 0 or more", w.blockFor)
		}
	}
	if w.once {
		// queue:work --once: the next job, if any, then stop.
		cfg.MaxJobs, cfg.StopWhenEmpty, cfg.Concurrency = 1, true, 1
	}
	switch w.unhandled {
	case "fail":
		cfg.Unhandled.Action = laraq.FailUnhandled
	case "release":
		cfg.Unhandled.Action = laraq.ReleaseUnhandled
	case "hand-back":
		cfg.Unhandled.Action = laraq.HandBackUnhandled
	default:
		return cfg, fmt.Errorf("--unhandled %q: want fail, release or hand-back", w.unhandled)
	}
	if w.unhandledDelay <= 0 {
		// A zero delay would make a hand-back spin on a job only PHP can run.
		return cfg, fmt.Errorf("--unhandled-delay %v: want more than 0 seconds", w.unhandledDelay)
	}
	cfg.Unhandled.Delay = seconds(w.unhandledDelay)
	if w.shutdownGrace == 0 {
		cfg.ShutdownGrace = -1
	}
	return cfg, nil
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// pauseOnSignals pauses the worker on SIGUSR2 and resumes it on SIGCONT, as queue:work.
func pauseOnSignals(w *laraq.Worker, log *slog.Logger) (stop func()) {
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, syscall.SIGUSR2, syscall.SIGCONT)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case s := <-ch:
				if s == syscall.SIGUSR2 {
					w.Pause()
					log.Info("paused (SIGUSR2); SIGCONT resumes")
				} else if w.Paused() {
					w.Resume()
					log.Info("resumed (SIGCONT)")
				}
			}
		}
	}()
	return func() {
		signal.Stop(ch)
		close(done)
	}
}
