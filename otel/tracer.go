package laraqotel

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/laraq/laraq"
)

// ScopeName is the instrumentation scope of laraq's spans.
const ScopeName = "github.com/laraq/laraq/otel"

// Outcome is how an attempt ended, as its span records it (laraq.job.outcome).
type Outcome string

const (
	Done      Outcome = "done"      // acknowledged: deleted from the queue (JobProcessed)
	Released  Outcome = "released"  // back on the queue for another attempt
	Failed    Outcome = "failed"    // written to the failed jobs
	Abandoned Outcome = "abandoned" // left reserved: timed out, or the worker stopped under it
)

// Attribute keys beyond the messaging conventions. job_name and attempts are the names
// opentelemetry-php-contrib's Laravel worker span uses, so dashboards built on PHP's
// spans read Go's alike; deleted and released too.
const (
	KeyJobName    = attribute.Key("messaging.message.job_name")
	KeyAttempts   = attribute.Key("messaging.message.attempts")
	KeyDeleted    = attribute.Key("messaging.message.deleted")
	KeyReleased   = attribute.Key("messaging.message.released")
	KeyClass      = attribute.Key("laraq.job.class")
	KeyConnection = attribute.Key("laraq.queue.connection")
	KeyOutcome    = attribute.Key("laraq.job.outcome")
)

// Config configures a Tracer.
type Config struct {
	// TracerProvider makes the spans. Default: otel.GetTracerProvider(), the global one
	// (a no-op until the program installs an SDK).
	TracerProvider trace.TracerProvider
	// SettleAfter is how long after an attempt's handler returned its span waits for the
	// event that says how the attempt ended, before it ends as it stands (a job left
	// reserved sends none). Default DefaultSettleAfter.
	SettleAfter time.Duration
}

// DefaultSettleAfter is Config.SettleAfter's default: a worker sends an attempt's last
// event right after the handler returns, unless the acknowledgement waits for Redis.
const DefaultSettleAfter = time.Minute

// Tracer makes a consumer span per job attempt. It is safe for concurrent use.
type Tracer struct {
	tracer trace.Tracer
	settle time.Duration

	mu       sync.Mutex
	attempts map[*laraq.JobInfo]*attempt
}

// attempt is one attempt's open span and what the events said so far.
type attempt struct {
	span     trace.Span
	returned time.Time // when the handler returned; zero while it runs
	last     time.Time // the last event's time
	outcome  Outcome   // what the events said so far ("" : nothing yet)
	excepted bool      // an exception was recorded
}

// New returns a Tracer.
func New(cfg Config) *Tracer {
	tp := cfg.TracerProvider
	if tp == nil {
		tp = otel.GetTracerProvider()
	}
	if cfg.SettleAfter <= 0 {
		cfg.SettleAfter = DefaultSettleAfter
	}
	return &Tracer{
		tracer:   tp.Tracer(ScopeName, trace.WithSchemaURL(semconv.SchemaURL)),
		settle:   cfg.SettleAfter,
		attempts: map[*laraq.JobInfo]*attempt{},
	}
}

// Middleware runs one attempt of job under a consumer span, the child of the trace
// context the payload carries: next gets a ctx carrying the span, and its error is
// recorded as the attempt's exception. The span stays open until the worker's event
// says how the attempt ended (OnEvent, End). Its shape is the worker's middleware:
// func(ctx, job, next) error.
func (t *Tracer) Middleware(ctx context.Context, job *laraq.JobInfo, next func(context.Context) error) error {
	ctx, a := t.start(ctx, job)
	err := next(ctx)
	now := time.Now()
	t.mu.Lock()
	a.returned, a.last = now, now
	// A release or delete the handler asked for is an instruction, not an exception.
	if o, _ := laraq.OutcomeOf(err); err != nil && (o == laraq.OutcomeRetry || o == laraq.OutcomeFail) {
		a.excepted = true
		a.span.RecordError(err)
		a.span.SetStatus(codes.Error, err.Error())
	}
	t.mu.Unlock()
	return err
}

// Handle is Middleware as a laraq.Middleware, to put in WorkerConfig.Middleware: every
// job the worker runs gets its span.
func (t *Tracer) Handle(ctx context.Context, job *laraq.JobInfo, next laraq.Next) error {
	return t.Middleware(ctx, job, next)
}

// CreatePayload writes the trace context into a payload being dispatched, for
// laraq.CreatePayloadUsing and WorkerConfig.CreatePayloadUsing: the span of parent's
// attempt when a running job dispatched it (a chain's next job, which PHP dispatches
// inside the job's span), else ctx's. Without a span the payload comes back as it was.
func (t *Tracer) CreatePayload(ctx context.Context, parent *laraq.JobInfo, raw []byte) []byte {
	if parent != nil {
		t.mu.Lock()
		a := t.attempts[parent]
		t.mu.Unlock()
		if a != nil {
			ctx = trace.ContextWithSpan(ctx, a.span)
		}
	}
	return Inject(ctx, raw)
}

// start opens the attempt's span.
func (t *Tracer) start(ctx context.Context, job *laraq.JobInfo) (context.Context, *attempt) {
	parent := Extract(ctx, job.Raw)
	destination := "queues:" + job.Queue
	id := job.UUID
	if id == "" {
		id = job.ID
	}
	attrs := []attribute.KeyValue{
		semconv.MessagingSystemKey.String("redis"),
		semconv.MessagingDestinationName(destination),
		semconv.MessagingOperationTypeProcess,
		semconv.MessagingOperationName("process"),
		semconv.MessagingMessageID(id),
		semconv.MessagingMessageEnvelopeSize(len(job.Raw)),
		KeyJobName.String(job.Name),
		KeyAttempts.Int(job.Attempt),
		KeyClass.String(job.Class),
		KeyConnection.String(job.Connection),
	}
	ctx, span := t.tracer.Start(parent, "process "+destination, trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...))
	a := &attempt{span: span, last: time.Now()}
	t.mu.Lock()
	if old := t.attempts[job]; old != nil {
		old.span.End() // the same *JobInfo run again: not a worker's way, but never leak
	}
	t.attempts[job] = a
	t.mu.Unlock()
	return ctx, a
}

// End ends the span of job's attempt with outcome; err, when not nil, is recorded as
// an exception first. It is the call a worker makes once it knows how the attempt
// ended; OnEvent makes it from today's events. An attempt without span is ignored.
func (t *Tracer) End(job *laraq.JobInfo, outcome Outcome, err error) {
	t.mu.Lock()
	a := t.attempts[job]
	delete(t.attempts, job)
	t.mu.Unlock()
	if a == nil {
		return
	}
	a.end(outcome, err, time.Now())
}

func (a *attempt) end(outcome Outcome, err error, at time.Time) {
	if err != nil && !a.excepted {
		a.span.RecordError(err)
		a.span.SetStatus(codes.Error, err.Error())
	}
	a.span.SetAttributes(KeyOutcome.String(string(outcome)),
		KeyDeleted.Bool(outcome == Done || outcome == Failed), KeyReleased.Bool(outcome == Released))
	if outcome == Failed {
		a.span.SetStatus(codes.Error, "job failed")
	}
	a.span.End(trace.WithTimestamp(at))
}

// OnEvent follows a worker's events (pass it to laraq.WorkerConfig.OnEvent, beside
// others) and ends each attempt's span once its outcome is known. A worker sends an
// attempt's events in one of these orders after its handler returns:
//
//	Processed                          done (Released before it: released; Failed before it: failed)
//	Failed, Exception                  failed on its last try
//	Exception, Released (after exception) released for a retry
//	TimedOut [, Failed] [, Released]   failed, released, or left reserved (abandoned)
//	Released (at a hard stop)          released
//	Failed (an unreadable command)     failed
//
// The last three send no closing event: their spans end when SettleAfter has passed
// since the handler returned, at the time of their last event, checked at every event
// (the worker sends EventLoop every few seconds).
func (t *Tracer) OnEvent(e laraq.Event) {
	now := time.Now()
	if e.Job != nil {
		t.observe(e, now)
	}
	t.sweep(now)
}

func (t *Tracer) observe(e laraq.Event, now time.Time) {
	t.mu.Lock()
	a := t.attempts[e.Job]
	if a == nil {
		t.mu.Unlock()
		return
	}
	a.last = now
	closing := Outcome("")
	switch e.Kind {
	case laraq.EventProcessed:
		closing = Done
		if a.outcome != "" {
			closing = a.outcome
		}
	case laraq.EventFailed:
		a.outcome = Failed
	case laraq.EventReleased:
		if a.outcome != Failed {
			a.outcome = Released
		}
		if e.AfterException {
			closing = a.outcome
		}
	case laraq.EventException:
		if a.outcome == Failed {
			closing = Failed
		}
	case laraq.EventTimedOut:
		if a.outcome == "" {
			a.outcome = Abandoned
		}
	}
	if closing != "" {
		delete(t.attempts, e.Job)
	}
	t.mu.Unlock()
	if e.Err != nil && (e.Kind == laraq.EventException || e.Kind == laraq.EventTimedOut || e.Kind == laraq.EventFailed) {
		t.mu.Lock()
		recorded := a.excepted
		a.excepted = true
		t.mu.Unlock()
		if !recorded {
			a.span.RecordError(e.Err)
			a.span.SetStatus(codes.Error, e.Err.Error())
		}
	}
	if closing != "" {
		a.end(closing, nil, now)
	}
}

// sweep ends the spans of attempts whose handler returned more than SettleAfter ago.
func (t *Tracer) sweep(now time.Time) {
	var done []*attempt
	t.mu.Lock()
	for j, a := range t.attempts {
		// A handler that ignores its timeout may never return: its attempt, once an
		// event said something of it, settles all the same.
		if !a.returned.IsZero() && now.Sub(a.returned) > t.settle || a.outcome != "" && now.Sub(a.last) > t.settle {
			done = append(done, a)
			delete(t.attempts, j)
		}
	}
	t.mu.Unlock()
	for _, a := range done {
		outcome := a.outcome
		if outcome == "" {
			outcome = Abandoned
		}
		a.end(outcome, nil, a.last)
	}
}

// Open reports how many attempts' spans are open (for tests and metrics).
func (t *Tracer) Open() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.attempts)
}
