package consumer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/laraq/laraq/handlers"
	"github.com/laraq/laraq/producer"
	"github.com/redis/go-redis/v9"
)

// Defaults of Config. Each matches `php artisan queue:work` with a Laravel skeleton's
// config/queue.php unless said otherwise.
const (
	DefaultQueue              = "default"
	DefaultConnection         = "redis"
	DefaultConcurrency        = 1
	DefaultRetryAfter         = 90 * time.Second // config/queue.php retry_after in the skeleton
	DefaultSleep              = 3 * time.Second  // --sleep
	DefaultMigrateInterval    = time.Second      // laraq's throttle; PHP migrates before every pop
	DefaultMigrationBatchSize = -1               // migration_batch_size: no limit
	DefaultTries              = 1                // --tries
	DefaultBackoff            = 0                // --backoff, in seconds
	DefaultTimeout            = 60 * time.Second // --timeout
	DefaultShutdownGrace      = 10 * time.Second // supervisor's default stopwaitsecs
	DefaultSignalInterval     = time.Second      // how often restart and pause keys are read
	DefaultUnhandledDelay     = 5 * time.Second
)

// FailedStore records failed jobs. failed.Store (package failed) implements it, writing
// Laravel's failed_jobs table; any type with the same Log method will do.
type FailedStore interface {
	// Log writes a failed job: the queue connection name ("redis"), the bare queue name,
	// the payload exactly as popped for the failing attempt, and the exception text in
	// PHP's Throwable form. It returns the record's id.
	Log(ctx context.Context, connection, queue string, payload []byte, exception string) (id string, err error)
}

// UnhandledAction is what a worker does with a job whose class has no handler.
type UnhandledAction int

const (
	// FailUnhandled fails the job (default): it leaves the reserved set and is written to
	// the failed store with an error naming its class, so `php artisan queue:retry` can
	// push it again once a handler exists. Without a failed store (Config.Failed nil)
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

// CacheConfig says where the Laravel cache store keeps the keys workers share: the
// queue:restart signal, the queue:pause flags (Laravel 12.40+) and the maxExceptions
// counters (`job-exceptions:<uuid>`). PHP workers only see the same keys when the
// Laravel app uses the Redis cache store (8.x's default store is file).
type CacheConfig struct {
	// Disabled turns the cache off, like a PHP worker without a cache: maxExceptions is
	// not enforced and restart/pause signals are not read. Default false.
	Disabled bool
	// Client is the Redis connection of the cache store (the skeleton uses database 1,
	// REDIS_CACHE_DB). Default nil: the queue client.
	Client redis.UniversalClient
	// RedisPrefix is the cache connection's Redis prefix. Default nil: Config.Prefix
	// (Laravel applies redis.options.prefix to every connection).
	RedisPrefix *string
	// Prefix is the cache store prefix (config/cache.php: "laravel_cache" in 8.x,
	// "laravel_cache_" in 9.x–11.x, "laravel-cache-" in 12.x). Default "".
	Prefix string
	// Separator puts ":" after Prefix, as RedisStore does up to Laravel 10. Default false.
	Separator bool
	// AlsoWatch are further key schemes under which the restart signal and the pause
	// flags are read (never written), for an application whose Laravel version is only
	// guessed: the worker then stops on a `queue:restart` written under any of them (the
	// greatest timestamp counts) and a queue is paused when it is paused under any.
	// Default none.
	AlsoWatch []CacheScheme
}

// CacheScheme is one way of naming the cache keys: connection prefix, store prefix and
// whether ":" follows it (the versions' schemes are listed in package config).
type CacheScheme struct {
	// RedisPrefix is the cache connection's Redis prefix under this scheme. Default nil:
	// the same as CacheConfig's.
	RedisPrefix *string
	// Prefix is the cache store prefix. Default "".
	Prefix string
	// Separator puts ":" after Prefix (Laravel ≤10). Default false.
	Separator bool
}

// Config configures a Consumer. The zero value (plus a Registry) works like
// `php artisan queue:work redis --queue=default` on a Laravel skeleton.
type Config struct {
	// Queues are the bare queue names to work, in priority order: each loop takes jobs
	// from the first queue that has some (--queue=high,default). Default
	// [DefaultQueue].
	Queues []string
	// Connection is the queue connection NAME (config/queue.php), written to
	// failed_jobs.connection and used in the queue:pause keys. Default DefaultConnection
	// ("redis").
	Connection string
	// DefaultQueue is the connection's `queue` setting (config/queue.php): where the
	// next job of a chain goes when neither it nor the chain names a queue. Default
	// DefaultQueue ("default").
	DefaultQueue string
	// Laravel is the release of the Laravel application sharing the queues. It chooses
	// the exception texts of failed-job records (MaxAttemptsExceededException "<Name>
	// has been attempted too many times or run too long. The job may have previously
	// timed out." up to 10.9; from 10.10 "<Name> has been attempted too many times." and,
	// for timeouts, Illuminate\Queue\TimeoutExceededException "<Name> has timed out.")
	// and the payload shape of the chained jobs this worker dispatches
	// (Laravel.PayloadVersion). Default producer.Laravel8 (8.83).
	Laravel producer.Laravel
	// Prefix is the Redis connection prefix (redis.options.prefix, e.g.
	// "laravel_database_"). Default "".
	Prefix string
	// ClusterHashTags wraps queue names as `queues:{NAME}` like Laravel 13.5+ on a
	// Cluster. Default false.
	ClusterHashTags bool

	// Registry maps job classes to handlers. Required.
	Registry *handlers.Registry
	// Unhandled is what happens to jobs without handler. Default: fail them.
	Unhandled UnhandledPolicy

	// Concurrency is how many jobs run at once in this process. A job is popped only
	// when a slot is free, so at most Concurrency jobs are reserved by this process
	// (plus those abandoned after a timeout, see Timeout). Default DefaultConcurrency.
	// The Redis client's pool needs Concurrency + 2 connections (see New).
	Concurrency int
	// RetryAfter is the queue connection's retry_after: a reserved job whose worker has
	// not finished it after this long is given to another worker. Keep it longer than
	// the longest job. Rounded up to whole seconds. Default DefaultRetryAfter (90 s, the
	// skeleton's value; Laravel's connector falls back to 60 s when the key is absent).
	RetryAfter time.Duration
	// BlockFor is the connection's block_for. nil (default, Laravel's null): never block;
	// when no queue has a job the worker sleeps Sleep. Otherwise the worker waits on the
	// first queue's notify list (BLPOP) for a job instead of sleeping; 0 waits until one
	// comes, like block_for 0. A job pushed while the worker waits is started within
	// milliseconds. Unlike PHP, the wait is cut into slices of at most one second so that
	// due delayed jobs, restart and pause signals and cancellation are noticed, and no
	// --sleep follows an empty wait. With several queues only the first one is waited on
	// (as Laravel 11.27+); jobs of the others are seen within a slice.
	BlockFor *time.Duration
	// Sleep is how long to wait when no queue had a job and BlockFor is nil (--sleep).
	// Default DefaultSleep; negative: do not wait.
	Sleep time.Duration
	// MigrateInterval throttles the migration of due delayed jobs, then expired
	// reservations, to the ready list: at most once per interval per queue, before a
	// pop. PHP runs both scripts before every pop. Default DefaultMigrateInterval;
	// negative: before every pop, like PHP.
	MigrateInterval time.Duration
	// MigrationBatchSize limits how many jobs one migration moves (Laravel 9.23+
	// migration_batch_size). Default DefaultMigrationBatchSize (-1, no limit).
	MigrationBatchSize int

	// Tries is the worker's --tries, used for jobs whose payload has no maxTries. 0 means
	// unlimited, as in PHP. Default nil: DefaultTries (1). Write new(3) for 3 tries.
	Tries *int
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
	// counted, until RetryAfter passes and it is migrated back (unless the timeout failed
	// it: last try, maxExceptions reached, failOnTimeout). A Go worker cannot kill a
	// goroutine: it abandons the handler (its context is cancelled), frees the slot and
	// goes on; by default the job stays reserved as in PHP. Default false.
	TimeoutReleases bool

	// MaxJobs stops the worker after this many jobs were taken (--max-jobs); Run returns
	// ErrMaxJobs once they finished. Default 0: no limit.
	MaxJobs int
	// MaxTime stops the worker after it ran this long (--max-time); Run returns
	// ErrMaxTime. Default 0: no limit.
	MaxTime time.Duration
	// StopWhenEmpty stops the worker when a loop finds every queue empty
	// (--stop-when-empty); Run returns ErrQueueEmpty. Default false.
	StopWhenEmpty bool
	// Rest is a pause after each job before its slot takes another (--rest). Default 0.
	Rest time.Duration
	// MemoryLimit stops the worker when the Go runtime holds more memory than this, in
	// bytes (--memory, which PHP reads in megabytes); Run returns ErrMemoryLimit.
	// Default 0: no limit.
	MemoryLimit int64

	// Failed receives failed jobs. Default: a store that keeps nothing, like Laravel's
	// "null" failed driver (use failed.Open for the failed_jobs table). Without a store
	// a failed job is gone, as in PHP; laraq then logs the payload of jobs it could not
	// decode, and releases jobs without handler instead of failing them (see
	// FailUnhandled).
	Failed FailedStore
	// Cache locates the keys shared with PHP workers through Laravel's cache.
	// Default: on the queue client, redis prefix = Prefix, no store prefix.
	Cache CacheConfig
	// SignalInterval is how often the restart signal and the pause keys are read (PHP
	// reads them after every job). Default DefaultSignalInterval.
	SignalInterval time.Duration

	// ShutdownGrace is how long jobs in flight may still run after ctx is cancelled.
	// Then their contexts are cancelled; a job whose handler returns an error then is
	// released at once (attempt counted), a handler that does not return within a
	// second is abandoned and its job stays reserved until RetryAfter brings it back.
	// Default DefaultShutdownGrace; negative: cancel handlers at once.
	ShutdownGrace time.Duration

	// Logger receives the worker's log. Default slog.Default().
	Logger *slog.Logger
	// Now is the clock for every timestamp (reservations, delays, retryUntil, events).
	// Default time.Now.
	Now func() time.Time
	// OnEvent is called for every Event, synchronously from the goroutine that caused
	// it (possibly several at once): keep it fast and safe for concurrent use.
	// Default nil.
	OnEvent func(Event)
}

// settings is a Config with defaults applied and times in the units the wire uses.
type settings struct {
	Config
	retryAfter     int64 // seconds
	tries          int
	backoffSpec    string // "0" or "1,5,10", as PHP's --backoff
	migrationLimit int
	unhandledDelay time.Duration
}

func (c Config) withDefaults() (settings, error) {
	s := settings{Config: c}
	if s.Registry == nil {
		return s, errors.New("consumer: Config.Registry is nil")
	}
	if len(s.Queues) == 0 {
		s.Queues = []string{DefaultQueue}
	}
	seen := map[string]bool{}
	for _, q := range s.Queues {
		if q == "" || strings.Contains(q, ",") {
			return s, fmt.Errorf("consumer: bad queue name %q", q)
		}
		if seen[q] {
			return s, fmt.Errorf("consumer: queue %q listed twice", q)
		}
		seen[q] = true
	}
	s.Queues = append([]string(nil), s.Queues...)
	if s.Connection == "" {
		s.Connection = DefaultConnection
	}
	if s.DefaultQueue == "" {
		s.DefaultQueue = DefaultQueue
	}
	switch {
	case s.Laravel == producer.Laravel{}:
		s.Laravel = producer.Laravel8
	case s.Laravel.Major < 8:
		return s, fmt.Errorf("consumer: Laravel %s: laraq works with Laravel 8 and later", s.Laravel)
	}
	switch {
	case s.Concurrency == 0:
		s.Concurrency = DefaultConcurrency
	case s.Concurrency < 0:
		return s, fmt.Errorf("consumer: Concurrency %d < 0", s.Concurrency)
	}
	switch {
	case s.RetryAfter == 0:
		s.RetryAfter = DefaultRetryAfter
	case s.RetryAfter < 0:
		return s, fmt.Errorf("consumer: RetryAfter %s < 0", s.RetryAfter)
	}
	s.retryAfter = ceilSeconds(s.RetryAfter)
	if s.BlockFor != nil && *s.BlockFor < 0 {
		return s, fmt.Errorf("consumer: BlockFor %s < 0", *s.BlockFor)
	}
	if s.Sleep == 0 {
		s.Sleep = DefaultSleep
	}
	if s.MigrateInterval == 0 {
		s.MigrateInterval = DefaultMigrateInterval
	}
	s.migrationLimit = s.MigrationBatchSize
	if s.migrationLimit == 0 {
		s.migrationLimit = DefaultMigrationBatchSize
	}
	s.tries = DefaultTries
	if s.Tries != nil {
		s.tries = *s.Tries
		if s.tries < 0 {
			return s, fmt.Errorf("consumer: Tries %d < 0 (0 means unlimited)", s.tries)
		}
	}
	if len(s.Backoff) == 0 {
		s.backoffSpec = fmt.Sprint(DefaultBackoff)
	} else {
		parts := make([]string, len(s.Backoff))
		for i, b := range s.Backoff {
			if b < 0 {
				return s, fmt.Errorf("consumer: Backoff[%d] = %d < 0", i, b)
			}
			parts[i] = fmt.Sprint(b)
		}
		s.backoffSpec = strings.Join(parts, ",")
	}
	if s.Timeout == 0 {
		s.Timeout = DefaultTimeout
	}
	if s.MaxJobs < 0 || s.MaxTime < 0 || s.Rest < 0 || s.MemoryLimit < 0 {
		return s, errors.New("consumer: MaxJobs, MaxTime, Rest and MemoryLimit must not be negative")
	}
	if s.Unhandled.Action < FailUnhandled || s.Unhandled.Action > HandBackUnhandled {
		return s, fmt.Errorf("consumer: unknown Unhandled.Action %d", s.Unhandled.Action)
	}
	s.unhandledDelay = s.Unhandled.Delay
	if s.unhandledDelay <= 0 {
		s.unhandledDelay = DefaultUnhandledDelay
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
	return s, nil
}

// ceilSeconds rounds a duration up to whole seconds, as Redis scores are Unix seconds.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}
