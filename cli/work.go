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

	"github.com/laraq/laraq/config"
	"github.com/laraq/laraq/consumer"
	"github.com/laraq/laraq/handlers"
	"github.com/laraq/laraq/internal/artisanlog"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/producer"
)

func init() {
	register(&Command{Name: "work", Summary: "run a Go worker on Laravel queues, like php artisan queue:work", Run: runWork})
}

const workUsage = `work [flags] [CONNECTION]

Works Laravel's Redis queues like 'php artisan queue:work CONNECTION': jobs are taken,
retried, released and failed by Laravel's rules, side by side with PHP workers.
CONNECTION is the queue connection name recorded with failed jobs and used in
queue:pause keys (default: LARAQ_CONNECTION, else "redis"). The jobs run the Go handlers
this binary registered; with --forward every job is sent to an HTTP service instead.

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
released, exceptions and timeouts by queue and class, handler durations, queue depths,
expired reservations moved back) and /healthz (503 when Redis stopped answering).

Stopping: SIGTERM or SIGINT stop taking jobs; jobs in flight get --shutdown-grace to
finish (a second signal exits at once). SIGUSR2 pauses, SIGCONT resumes.
'php artisan queue:restart' (or 'laraq restart') makes the worker finish its jobs and
exit 0, as do --max-jobs, --max-time, --stop-when-empty and --once; over --memory it
exits 12, as queue:work does. 'php artisan queue:pause' (Laravel 12.40+, or 'laraq
pause') pauses one queue. When the Laravel version is not named (--laravel-version,
LARAQ_LARAVEL_VERSION or the framework under --laravel-root) but guessed from the .env
keys or defaulted, these signals are read under every version's cache key scheme, so
that a wrong guess does not hide them (--log-level debug lists the keys).

--forward URL: each job is POSTed as JSON with the headers Content-Type:
application/json, X-Laraq-Job-Id, X-Laraq-Job-Uuid, X-Laraq-Attempt, X-Laraq-Queue and
X-Laraq-Connection; the body is

  {"id": "...", "uuid": "...", "attempt": 1, "queue": "default", "connection": "redis",
   "name": "App\\Jobs\\X", "class": "App\\Jobs\\X",
   "payload": {...the payload as 'laraq decode' prints it: data.command readable...}}

A 2xx answer means done. Any other answer fails the attempt (its status and the first
line of its body become the error, retried by Laravel's rules), unless it carries a
Retry-After header in seconds: then the job is released for that long. No answer within
the job's timeout is a timeout.`

// exitMemoryLimit is queue:work's status when it stops for --memory.
const exitMemoryLimit = 12

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
	noCache        bool
	shutdownGrace  float64
	timeoutRelease bool
	quiet          bool
	verbose        bool
	unhandled      string
	unhandledDelay float64
	logLevel       string
	logFormat      string
	metricsAddr    string
}

func runWork(ctx context.Context, app *App, args []string) int {
	fs := app.newFlagSet("work", workUsage)
	af := addAppFlags(fs, true, true)
	var w workFlags
	fs.IntVar(&w.tries, "tries", consumer.DefaultTries, "number of times to attempt a job before failing it (0: unlimited)")
	fs.StringVar(&w.backoff, "backoff", "0", "seconds to wait before retrying a job that failed, per attempt: `LIST` such as 1,5,10")
	fs.IntVar(&w.timeout, "timeout", int(consumer.DefaultTimeout/time.Second), "`seconds` a job may run (0: no limit)")
	fs.Float64Var(&w.sleep, "sleep", consumer.DefaultSleep.Seconds(), "`seconds` to sleep when no job is available")
	fs.StringVar(&w.blockFor, "block-for", "", "wait up to `SECONDS` on the queue for a job instead of sleeping (0: until one comes; empty: never, like block_for null)")
	fs.IntVar(&w.maxJobs, "max-jobs", 0, "stop after this many jobs (0: no limit)")
	fs.IntVar(&w.maxTime, "max-time", 0, "stop after this many `seconds` (0: no limit)")
	fs.BoolVar(&w.stopWhenEmpty, "stop-when-empty", false, "stop when the queues are empty")
	fs.BoolVar(&w.once, "once", false, "process the next job only")
	fs.Float64Var(&w.rest, "rest", 0, "`seconds` to rest between jobs")
	fs.IntVar(&w.memory, "memory", 128, "stop (exit status 12) when the process uses more than this many `megabytes` (0: no limit)")
	fs.IntVar(&w.concurrency, "concurrency", consumer.DefaultConcurrency, "jobs run at once (the Redis pools are sized for them)")
	fs.IntVar(&w.retryAfter, "retry-after", 0, "the connection's retry_after in `seconds` (default: LARAQ_REDIS_QUEUE_RETRY_AFTER, else the\napplication's REDIS_QUEUE_RETRY_AFTER, else 90)")
	fs.StringVar(&w.forward, "forward", "", "POST every job to this `URL` instead of running Go handlers")
	fs.BoolVar(&w.noCache, "no-cache", false, "use no cache: no restart/pause signals, no maxExceptions")
	fs.Float64Var(&w.shutdownGrace, "shutdown-grace", consumer.DefaultShutdownGrace.Seconds(), "`seconds` jobs in flight may still run after SIGTERM")
	fs.BoolVar(&w.timeoutRelease, "timeout-releases", false, "release timed-out jobs (with their backoff) instead of leaving them reserved until retry_after, as PHP does")
	fs.BoolVar(&w.quiet, "quiet", false, "do not print a line per job")
	fs.BoolVar(&w.verbose, "verbose", false, "show job ids in artisan lines, like queue:work -v")
	fs.StringVar(&w.unhandled, "unhandled", "fail", "what to do with jobs no handler takes: `fail`, release or hand-back (to PHP workers); with --database null, fail means release")
	fs.Float64Var(&w.unhandledDelay, "unhandled-delay", consumer.DefaultUnhandledDelay.Seconds(),
		"`seconds` a job no handler takes is released for (--unhandled release), or this worker leaves\nits queue to the PHP workers after handing one back (--unhandled hand-back)")
	fs.StringVar(&w.logLevel, "log-level", "info", "`level` of the stderr log: debug, info, warn, error")
	fs.StringVar(&w.logFormat, "log-format", string(artisanlog.Artisan), "`format` of job lines and log: artisan (Laravel 9+), artisan8, json or text; colours on a terminal")
	fs.StringVar(&w.metricsAddr, "metrics-addr", "", "serve Prometheus /metrics and /healthz on this `address`, e.g. :9090")
	positional, rc := parseInterleaved(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(positional) > 1 {
		fs.Usage()
		return 2
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
	connection := appCfg.Connection
	if len(positional) == 1 {
		connection = positional[0]
	}
	cfg, err := w.config(connection, appCfg)
	if err != nil {
		return app.errorf("%v", err)
	}
	cfg.Logger = logger
	// The release decides the failure messages (10.10+ texts) and the shape of the
	// payloads a chain's next job is dispatched with; REDIS_QUEUE is where a chained job
	// without a queue of its own goes, as onQueue() falls back to the connection's queue.
	release := af.payloadVersion(app, appCfg)
	if strings.HasPrefix(appCfg.Origins["LaravelVersion"], config.VersionInferred) {
		// A major guessed from the .env keys still picks the right messages; the payload
		// shapes it implies are those of 8.x up to 12.10 anyway.
		release = strconv.Itoa(appCfg.LaravelVersion)
	}
	if cfg.Laravel, err = workerRelease(release); err != nil {
		return app.errorf("--laravel-version: %v", err)
	}
	logger.Debug("laravel version", "release", cfg.Laravel.String(), "from", appCfg.Origins["LaravelVersion"])
	cfg.DefaultQueue = appCfg.Queue
	if af.conn.queueSet {
		if cfg.Queues, err = af.queues(); err != nil {
			return app.errorf("%v", err)
		}
	} else {
		cfg.Queues = []string{appCfg.Queue}
	}

	// The pools fit the worker: a connection per running job plus popping/blocking and
	// signals on the queue client (+ metrics scrapes), a connection per running job
	// (maxExceptions) plus signal reads on the cache client.
	c, err := connectPool(appCfg, cfg.Concurrency+4, cfg.Concurrency+2)
	if err != nil {
		return app.errorf("%v", err)
	}
	defer c.Close()
	cfg.Prefix = appCfg.Prefix
	cfg.ClusterHashTags = clusterHashTags(appCfg)
	cfg.Cache = consumer.CacheConfig{
		Disabled:    w.noCache,
		Client:      c.clients.Cache,
		RedisPrefix: &appCfg.Prefix,
		Prefix:      appCfg.CachePrefix,
		Separator:   appCfg.CacheSeparator,
	}
	if !w.noCache {
		cfg.Cache.AlsoWatch = watchSchemes(appCfg, connection, cfg.Queues, logger)
	}

	store, dsn, local, err := af.openFailed(ctx, app, appCfg, logger)
	if err != nil {
		return app.errorf("%v", err)
	}
	defer store.Close()
	switch {
	case dsn == "null":
		logger.Warn("failed-job store is null: failed jobs are dropped like Laravel's null failed driver, and jobs without handler are released instead")
	case local:
		logger.Info("failed jobs are recorded in a local file, not in the application's failed_jobs table (pass --database or --laravel-root to share them with PHP)",
			"database", dsn)
		cfg.Failed = store
	default:
		cfg.Failed = store
	}

	reg := app.Registry
	if w.forward != "" {
		fw, err := newForwarder(w.forward, cfg.Concurrency)
		if err != nil {
			return app.errorf("--forward: %v", err)
		}
		reg = handlers.NewRegistry()
		reg.Fallback(fw)
	} else if reg.Len() == 0 {
		logger.Warn("no Go handlers are registered in this binary: every job follows --unhandled (use --forward, or build a binary with cli.Run(registry))")
	}
	cfg.Registry = reg

	obs := &observer{}
	if !w.quiet {
		obs.lines = newJobLines(out.jobs)
	}
	// The metrics server outlives the worker's ctx so that the last scrape sees the drain.
	mctx, stopMetrics := context.WithCancel(context.WithoutCancel(ctx))
	defer stopMetrics()
	if w.metricsAddr != "" {
		m, err := startMetrics(mctx, w.metricsAddr, c, cfg.Queues, logger)
		if err != nil {
			return app.errorf("--metrics-addr: %v", err)
		}
		obs.metrics = m
	}
	cfg.OnEvent = obs.event

	worker, err := consumer.New(c.clients.Queue, cfg)
	if err != nil {
		return app.errorf("%v", err)
	}
	stopSignals := pauseOnSignals(worker, logger)
	defer stopSignals()

	switch err := worker.Run(ctx); {
	case err == nil, errors.Is(err, consumer.ErrRestart), errors.Is(err, consumer.ErrMaxJobs),
		errors.Is(err, consumer.ErrMaxTime), errors.Is(err, consumer.ErrQueueEmpty):
		return 0
	case errors.Is(err, consumer.ErrMemoryLimit):
		return exitMemoryLimit
	default:
		return app.errorf("%v", err)
	}
}

// watchSchemes returns the other versions' cache key schemes when the Laravel version
// was only guessed or defaulted: the restart and pause signals are read under all of
// them, since `php artisan queue:restart` of the real version writes only its own key.
func watchSchemes(appCfg *config.Config, connection string, queues []string, logger *slog.Logger) []consumer.CacheScheme {
	alts := appCfg.AlternativeCacheKeys()
	var schemes []consumer.CacheScheme
	var restart, pause []string
	for i, k := range append([]rdb.CacheKeys{appCfg.CacheKeys()}, alts...) {
		if i > 0 {
			schemes = append(schemes, consumer.CacheScheme{RedisPrefix: new(k.RedisPrefix), Prefix: k.Prefix, Separator: k.Separator})
		}
		restart = append(restart, k.Restart())
		pause = append(pause, k.PausedAll())
		for _, q := range queues {
			pause = append(pause, k.Paused(connection, q))
		}
	}
	if len(alts) > 0 {
		logger.Debug("the Laravel version is not named: watching the restart and pause keys of every version's cache key scheme",
			"version", appCfg.LaravelVersion, "from", appCfg.Origins["LaravelVersion"], "restart_keys", restart, "pause_keys", pause)
	} else {
		logger.Debug("watching the restart and pause keys", "restart_keys", restart, "pause_keys", pause)
	}
	return schemes
}

// config turns the flags into a consumer.Config (without Redis, store and registry).
func (w *workFlags) config(connection string, app *config.Config) (consumer.Config, error) {
	cfg := consumer.Config{
		Connection:      connection,
		Concurrency:     w.concurrency,
		RetryAfter:      time.Duration(app.RetryAfter) * time.Second,
		Tries:           new(w.tries),
		MaxJobs:         w.maxJobs,
		MaxTime:         time.Duration(w.maxTime) * time.Second,
		StopWhenEmpty:   w.stopWhenEmpty,
		Rest:            seconds(w.rest),
		MemoryLimit:     int64(w.memory) << 20,
		TimeoutReleases: w.timeoutRelease,
		ShutdownGrace:   seconds(w.shutdownGrace),
	}
	if w.retryAfter != 0 {
		cfg.RetryAfter = time.Duration(w.retryAfter) * time.Second
	}
	switch {
	case w.tries < 0:
		return cfg, fmt.Errorf("--tries %d: want 0 (unlimited) or more", w.tries)
	case w.concurrency < 1:
		return cfg, fmt.Errorf("--concurrency %d: want 1 or more", w.concurrency)
	case w.retryAfter < 0 || cfg.RetryAfter < time.Second:
		return cfg, fmt.Errorf("--retry-after %d: want 1 or more seconds", w.retryAfter)
	case w.timeout < 0, w.sleep < 0, w.rest < 0, w.memory < 0, w.maxJobs < 0, w.maxTime < 0, w.shutdownGrace < 0:
		return cfg, errors.New("--timeout, --sleep, --rest, --memory, --max-jobs, --max-time and --shutdown-grace must not be negative")
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
		f, err := strconv.ParseFloat(w.blockFor, 64)
		if err != nil || f < 0 {
			return cfg, fmt.Errorf("--block-for %q: want seconds, 0 or more", w.blockFor)
		}
		cfg.BlockFor = new(seconds(f))
	}
	if w.once {
		// queue:work --once: the next job, if any, then stop.
		cfg.MaxJobs, cfg.StopWhenEmpty, cfg.Concurrency = 1, true, 1
	}
	switch w.unhandled {
	case "fail":
		cfg.Unhandled.Action = consumer.FailUnhandled
	case "release":
		cfg.Unhandled.Action = consumer.ReleaseUnhandled
	case "hand-back":
		cfg.Unhandled.Action = consumer.HandBackUnhandled
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
func pauseOnSignals(w *consumer.Consumer, log *slog.Logger) (stop func()) {
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

// workerRelease reads the release the worker imitates. Before 8.x the worker rules,
// messages and payloads laraq writes are those of 8.x (5.8–7.x workers read them), so an
// older application is worked as 8.x.
func workerRelease(v string) (producer.Laravel, error) {
	if major, err := strconv.Atoi(strings.SplitN(strings.TrimPrefix(strings.TrimSpace(v), "v"), ".", 2)[0]); err == nil && major >= 5 && major < 8 {
		return producer.Laravel8, nil
	}
	return producer.ParseLaravel(v)
}
