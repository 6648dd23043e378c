package metrics

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/rdb"
)

// Defaults of Config.
const (
	DefaultNamespace     = "laraq"
	DefaultScrapeTimeout = 2 * time.Second
	DefaultHealthMaxAge  = time.Minute
	// DefaultHealthProbeTimeout is Config.HealthProbeTimeout's default: well inside the
	// timeouts probes give up after (Kubernetes' default is 1 s), so that a stall is
	// answered with a 503 rather than with no answer.
	DefaultHealthProbeTimeout = 400 * time.Millisecond
)

// DefaultBuckets are the handler duration buckets in seconds: 5ms to 10 minutes.
var DefaultBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600}

// Kind says what an Event is about. The values are the worker's event names, so a
// laraq.Event's kind converts with Kind(e.Kind.String()).
type Kind string

const (
	Processing Kind = "processing"  // a handler is about to run
	Processed  Kind = "processed"   // the handler returned without error
	Failed     Kind = "failed"      // the job was failed (written to the failed store)
	Released   Kind = "released"    // the job went back to the delayed set for a retry
	Exception  Kind = "exception"   // the handler returned an error or panicked
	TimedOut   Kind = "timed_out"   // the handler ran past its timeout
	Migrated   Kind = "migrated"    // Count jobs moved From "delayed" or "reserved" to ready
	HandedBack Kind = "handed_back" // a job without handler was given back to its queue
	Invalid    Kind = "invalid"     // a payload was moved aside to queues:NAME:invalid
	// UnknownProperties: a decoded command carried Count properties no field of its Go
	// type takes.
	UnknownProperties Kind = "unknown_properties"
	// Loop is the worker loop's heartbeat: one per iteration and at least every few
	// seconds while it waits, with Err set while Redis does not answer, refuses the
	// pops, or every queue is skipped. It feeds /healthz.
	Loop Kind = "loop"
	// QueueSkipped: a key of Queue holds the wrong type, so the worker skips the queue
	// (Err says which key); QueueResumed: it takes the queue's jobs again. They set
	// laraq_queue_skipped and the skipped queues /healthz names.
	QueueSkipped Kind = "queue_skipped"
	QueueResumed Kind = "queue_resumed"
)

// Event is one thing the worker did.
type Event struct {
	Kind Kind
	// Queue is the bare queue name. Class is the job's name as Laravel reports it
	// (displayName, e.g. App\Jobs\SendWelcome); "" where there is no job.
	Queue string
	Class string
	// Attempt identifies the attempt a job event belongs to: every event of one attempt
	// carries the same comparable value, and no other attempt's (the worker's
	// *laraq.JobInfo is one per attempt). laraq_jobs_running counts the attempts whose
	// Processing came and whose end (the first of Processed, Failed, Released,
	// Exception, TimedOut) did not; events without Attempt leave it alone.
	Attempt any
	// Duration is how long the handler ran: observed for Processed, Exception and TimedOut
	// (each attempt ends with exactly one of them).
	Duration time.Duration
	// Middleware and Decision: the middleware that decided the attempt's outcome
	// instead of its handler, and what it decided (released, deleted, failed, skipped);
	// counted once per attempt, on the event that records the decision (Released,
	// Failed, or Processed for a delete or a skip).
	Middleware, Decision string
	// Count and From describe Migrated; Count, UnknownProperties.
	Count int
	From  string
	// Err is set on a Loop event while Redis does not answer, or refuses the pops (out
	// of memory, a read-only replica), or every queue is skipped; on QueueSkipped it says
	// why.
	Err error
	// Time is when it happened. Default: Config.Now().
	Time time.Time
}

// QueueSizer reads queue depths (*laraq.Admin is one).
type QueueSizer interface {
	Queues(ctx context.Context) ([]string, error)
	Sizes(ctx context.Context, queue string) (ready, delayed, reserved int64, err error)
}

// Pinger checks that Redis answers (*laraq.Admin is one).
type Pinger interface {
	Ping(ctx context.Context) error
}

// Config configures Metrics.
type Config struct {
	// Namespace prefixes every metric name. Default DefaultNamespace.
	Namespace string
	// Sizer reads queue depths for the queue gauges at each scrape. Default nil: no
	// depth gauges.
	Sizer QueueSizer
	// Queues are the queues whose depth is reported. Default nil: every queue Sizer.Queues
	// finds at scrape time.
	Queues []string
	// ScrapeTimeout bounds the Redis reads of one scrape. Default DefaultScrapeTimeout.
	ScrapeTimeout time.Duration
	// Buckets are the handler duration histogram's buckets, in seconds. Default
	// DefaultBuckets.
	Buckets []float64
	// HealthMaxAge is how recent the last loop heartbeat and the last Redis answer must
	// be for /healthz to report healthy. Default DefaultHealthMaxAge.
	HealthMaxAge time.Duration
	// Pinger, when set, is asked at every /healthz request whether Redis answers, so the
	// answer turns 503 within HealthProbeTimeout of Redis stalling and 200 as soon as
	// it answers again, whatever the worker loop is doing. Default nil: /healthz
	// relies on the loop's heartbeats alone.
	Pinger Pinger
	// HealthProbeTimeout is how long /healthz waits for Pinger. Default
	// DefaultHealthProbeTimeout.
	HealthProbeTimeout time.Duration
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Metrics keeps a worker's Prometheus metrics in a private registry.
type Metrics struct {
	cfg      Config
	registry *prometheus.Registry

	processed, failed, released *prometheus.CounterVec
	exceptions, timedOut        *prometheus.CounterVec
	handedBack, invalid         *prometheus.CounterVec
	unknownProperties           *prometheus.CounterVec
	migrated, middleware        *prometheus.CounterVec
	duration                    *prometheus.HistogramVec
	running                     *prometheus.GaugeVec
	skipped                     *prometheus.GaugeVec
	depth                       *depthCollector

	mu        sync.Mutex
	lastLoop  time.Time
	lastRedis time.Time
	lastErr   error
	attempts  map[any]string    // attempts running now -> their queue label
	skips     map[string]string // queues skipped now -> why
	probing   *probe            // the Pinger call in flight, if any
}

// New returns Metrics with every metric registered in a new registry.
func New(cfg Config) (*Metrics, error) {
	if cfg.Namespace == "" {
		cfg.Namespace = DefaultNamespace
	}
	if cfg.ScrapeTimeout <= 0 {
		cfg.ScrapeTimeout = DefaultScrapeTimeout
	}
	if len(cfg.Buckets) == 0 {
		cfg.Buckets = DefaultBuckets
	}
	if cfg.HealthMaxAge <= 0 {
		cfg.HealthMaxAge = DefaultHealthMaxAge
	}
	if cfg.HealthProbeTimeout <= 0 {
		cfg.HealthProbeTimeout = DefaultHealthProbeTimeout
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	for i := 1; i < len(cfg.Buckets); i++ {
		if cfg.Buckets[i] <= cfg.Buckets[i-1] {
			return nil, errors.New("metrics: Buckets must be strictly increasing")
		}
	}
	ns := cfg.Namespace
	job := []string{"queue", "class"}
	counter := func(name, help string, labels []string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: ns, Name: name, Help: help}, labels)
	}
	m := &Metrics{
		cfg:        cfg,
		registry:   prometheus.NewRegistry(),
		attempts:   map[any]string{},
		skips:      map[string]string{},
		processed:  counter("jobs_processed_total", "Jobs whose handler returned without error.", job),
		failed:     counter("jobs_failed_total", "Jobs failed and written to the failed-job store.", job),
		released:   counter("jobs_released_total", "Jobs released back to the queue for another attempt.", job),
		exceptions: counter("job_exceptions_total", "Handler errors and panics (each attempt that threw).", job),
		timedOut:   counter("jobs_timed_out_total", "Attempts that ran past the job's timeout.", job),
		handedBack: counter("jobs_handed_back_total", "Jobs without a Go handler given back to their queue.", job),
		invalid:    counter("jobs_invalid_total", "Payloads the pop script cannot reserve, moved to queues:NAME:invalid.", []string{"queue"}),
		unknownProperties: counter("command_unknown_properties_total",
			"Properties of decoded commands that no field of the handler's Go type takes (the handler does not see them).", job),
		migrated: counter("jobs_migrated_total",
			"Jobs moved to the ready list: from=\"delayed\" when due, from=\"reserved\" when their reservation expired (retry_after).",
			[]string{"queue", "from"}),
		middleware: counter("jobs_middleware_total",
			"Jobs whose middleware decided instead of the handler: decision=\"released\", \"deleted\", \"failed\" or \"skipped\" (done without running), by the middleware's Laravel class name.",
			[]string{"queue", "class", "middleware", "decision"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Name: "job_duration_seconds", Help: "Handler run time by outcome.", Buckets: cfg.Buckets,
		}, []string{"queue", "class", "outcome"}),
		running: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: ns, Name: "jobs_running", Help: "Handlers running now.",
		}, []string{"queue"}),
		skipped: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: ns, Name: "queue_skipped",
			Help: "1 while the worker skips the queue because one of its keys holds the wrong type (the log names it), 0 once it resumed.",
		}, []string{"queue"}),
	}
	cs := []prometheus.Collector{m.processed, m.failed, m.released, m.exceptions, m.timedOut, m.handedBack,
		m.invalid, m.unknownProperties, m.migrated, m.middleware, m.duration, m.running, m.skipped,
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: "worker_last_loop_timestamp_seconds",
			Help: "Unix time of the worker loop's last heartbeat."}, func() float64 { return m.unix(&m.lastLoop) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: ns, Name: "redis_last_ok_timestamp_seconds",
			Help: "Unix time Redis last answered the worker."}, func() float64 { return m.unix(&m.lastRedis) }),
	}
	if cfg.Sizer != nil {
		m.depth = newDepthCollector(ns, cfg)
		cs = append(cs, m.depth)
	}
	for _, c := range cs {
		if err := m.registry.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// Registry returns the private registry, to add collectors or to gather in tests.
func (m *Metrics) Registry() *prometheus.Registry { return m.registry }

func (m *Metrics) unix(t *time.Time) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixNano()) / 1e9
}

// OnEvent records a worker's event: pass it as laraq.WorkerConfig.OnEvent. The kinds
// share their names; each attempt's *laraq.JobInfo identifies the attempt.
func (m *Metrics) OnEvent(e laraq.Event) {
	ev := Event{Kind: Kind(e.Kind.String()), Queue: e.Queue, Duration: e.Runtime,
		Count: e.Count, From: e.From, Err: e.Err, Time: e.Time, Middleware: e.Middleware, Decision: string(e.Decision)}
	if e.Job != nil {
		ev.Class = e.Job.Name
		ev.Attempt = e.Job
	}
	m.Observe(ev)
}

// Observe records one event. It is safe for concurrent use and never blocks on I/O.
func (m *Metrics) Observe(e Event) {
	if e.Time.IsZero() {
		e.Time = m.cfg.Now()
	}
	m.track(e)
	job := prometheus.Labels{"queue": e.Queue, "class": e.Class}
	if e.Middleware != "" && decisionEvent(e) {
		m.middleware.WithLabelValues(e.Queue, e.Class, e.Middleware, e.Decision).Inc()
	}
	secs := e.Duration.Seconds()
	switch e.Kind {
	case Processed:
		m.processed.With(job).Inc()
		m.duration.WithLabelValues(e.Queue, e.Class, "processed").Observe(secs)
	case Failed:
		// The attempt's run time was observed with its Exception or TimedOut event.
		m.failed.With(job).Inc()
	case Released:
		m.released.With(job).Inc()
	case Exception, TimedOut:
		if e.Kind == TimedOut {
			m.timedOut.With(job).Inc()
		} else {
			m.exceptions.With(job).Inc()
		}
		m.duration.WithLabelValues(e.Queue, e.Class, string(e.Kind)).Observe(secs)
	case Migrated:
		m.migrated.WithLabelValues(e.Queue, e.From).Add(float64(e.Count))
	case HandedBack:
		m.handedBack.With(job).Inc()
	case Invalid:
		m.invalid.WithLabelValues(e.Queue).Inc()
	case UnknownProperties:
		m.unknownProperties.With(job).Add(float64(e.Count))
	case QueueSkipped, QueueResumed:
		m.mu.Lock()
		if e.Kind == QueueSkipped {
			why := "a key holds the wrong type"
			var ce *rdb.ConfigError
			switch {
			case errors.As(e.Err, &ce) && ce.Key != "":
				why = fmt.Sprintf("%s holds a %s, not a %s", ce.Key, ce.Type, ce.Want)
			case e.Err != nil:
				why = shortError(e.Err)
			}
			m.skips[e.Queue] = why
			m.skipped.WithLabelValues(e.Queue).Set(1)
		} else {
			delete(m.skips, e.Queue)
			m.skipped.WithLabelValues(e.Queue).Set(0)
		}
		m.mu.Unlock()
	case Loop:
		m.mu.Lock()
		if e.Time.After(m.lastLoop) {
			m.lastLoop = e.Time
		}
		if e.Err == nil && e.Time.After(m.lastRedis) {
			m.lastRedis = e.Time
		}
		m.lastErr = e.Err
		m.mu.Unlock()
	}
}

// decisionEvent says e is the event that records its middleware's decision: an
// attempt's events all name the middleware, one of them counts.
func decisionEvent(e Event) bool {
	switch e.Decision {
	case "released":
		return e.Kind == Released
	case "failed":
		return e.Kind == Failed
	case "deleted", "skipped":
		return e.Kind == Processed
	}
	return false
}

// track keeps laraq_jobs_running: +1 at an attempt's Processing, -1 at the first event
// that ends it, whichever it is. An attempt can end in several ways and send several of
// them (Released then Processed after a handler's release; Failed then Exception on a
// last try; Failed alone for a job without handler or an undecodable command; Released
// alone at a hard stop), so the attempts running are remembered rather than guessed from
// the kind of event.
func (m *Metrics) track(e Event) {
	if e.Attempt == nil {
		return
	}
	switch e.Kind {
	case Processing:
		m.mu.Lock()
		_, dup := m.attempts[e.Attempt]
		if !dup {
			m.attempts[e.Attempt] = e.Queue
		}
		m.mu.Unlock()
		if !dup {
			m.running.WithLabelValues(e.Queue).Inc()
		}
	case Processed, Failed, Released, Exception, TimedOut, HandedBack:
		m.mu.Lock()
		queue, ok := m.attempts[e.Attempt]
		delete(m.attempts, e.Attempt)
		m.mu.Unlock()
		if ok {
			m.running.WithLabelValues(queue).Dec()
		}
	}
}

// Health is what /healthz reports.
type Health struct {
	Healthy bool `json:"healthy"`
	// Refused says Redis answers but refuses the worker's pops (out of memory under
	// maxmemory with noeviction, or a read-only replica during a failover): the worker
	// cannot take jobs until that ends.
	Refused bool `json:"redis_refuses_pops,omitempty"`
	// Skipped names the queues the worker skips because a key of theirs holds the wrong
	// type, each with why. A worker that skips some of its queues is healthy: it works
	// the others, and restarting it would not repair the key (the metric
	// laraq_queue_skipped and the log's ERROR line are the alarm). One that skips every
	// queue is not: it cannot take a job (Reason says so).
	Skipped map[string]string `json:"skipped_queues,omitempty"`
	// blocked: Redis answers, yet the worker cannot take jobs (Refused, or every queue
	// skipped), which a successful PING does not change.
	blocked bool
	// LoopAge and RedisAge are the seconds since the last heartbeat and the last Redis
	// answer; -1 when there was none yet.
	LoopAge  float64 `json:"worker_loop_age_seconds"`
	RedisAge float64 `json:"redis_age_seconds"`
	Reason   string  `json:"reason,omitempty"`
}

// maxReasonError bounds the Redis error quoted in Health.Reason.
const maxReasonError = 160

// Health reports whether the worker loop is alive (a Loop heartbeat within
// Config.HealthMaxAge) and Redis answers: the last heartbeat carried no error, and one
// without error came within Config.HealthMaxAge.
func (m *Metrics) Health() Health {
	now := m.cfg.Now()
	m.mu.Lock()
	loop, redisAt, lastErr := m.lastLoop, m.lastRedis, m.lastErr
	var skipped map[string]string
	if len(m.skips) > 0 {
		skipped = make(map[string]string, len(m.skips))
		for q, why := range m.skips {
			skipped[q] = why
		}
	}
	m.mu.Unlock()
	age := func(t time.Time) float64 {
		if t.IsZero() {
			return -1
		}
		return now.Sub(t).Seconds()
	}
	h := Health{LoopAge: age(loop), RedisAge: age(redisAt), Skipped: skipped}
	max := m.cfg.HealthMaxAge
	switch {
	case loop.IsZero():
		h.Reason = "worker loop has not started"
	case now.Sub(loop) > max:
		h.Reason = "worker loop stalled"
	case rdb.IsOutOfMemory(lastErr):
		h.Refused, h.blocked = true, true
		h.Reason = "cannot take jobs: redis is out of memory (maxmemory with the noeviction policy) and refuses every pop until memory is freed: " + shortError(lastErr)
	case rdb.RefusesPops(lastErr):
		h.Refused, h.blocked = true, true
		h.Reason = "cannot take jobs: redis is a read-only replica (a failover in progress?) and refuses every pop: " + shortError(lastErr)
	case errors.Is(lastErr, laraq.ErrQueuesUnavailable):
		h.blocked = true
		h.Reason = "cannot take jobs: every queue is skipped because a key of it holds the wrong type (see skipped_queues)"
	case lastErr != nil:
		h.Reason = "redis unreachable: " + shortError(lastErr)
	case redisAt.IsZero() || now.Sub(redisAt) > max:
		h.Reason = "redis has not answered recently"
	default:
		h.Healthy = true
	}
	return h
}

// shortError is the first line of err's text, at most maxReasonError bytes.
func shortError(err error) string {
	s, _, _ := strings.Cut(err.Error(), "\n")
	if len(s) > maxReasonError {
		s = strings.ToValidUTF8(s[:maxReasonError], "") + "…"
	}
	return s
}
