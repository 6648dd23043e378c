package laraqotel_test

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
	laraqotel "github.com/laraq/laraq/otel"
)

// tracedStep stands for App\Jobs\TracedStep, a job of a chain.
type tracedStep struct {
	Step int `php:"step"`
	laraq.Queueable
}

func (tracedStep) PHPClass() string { return `App\Jobs\TracedStep` }

// TestDispatchAndChainCarryTheTrace: a Go dispatch under a span writes its context into
// the payload (CreatePayloadUsing); the worker's span for that job is its child; the next
// job of the chain, dispatched by the worker while the first runs, carries the first
// attempt's span, so its own span is a child of it: one trace from the dispatch to the
// end of the chain, as PHP's instrumentation makes it.
func TestDispatchAndChainCarryTheTrace(t *testing.T) {
	r := testenv.RedisServer(t)
	prefix, queue := testenv.Prefix(t), "otel"+testenv.RandomName(3)
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	tr := laraqotel.New(laraqotel.Config{TracerProvider: tp})
	conn := &laraq.Connection{Client: r.Client(t, 0), Prefix: prefix, Queue: queue, Release: laraq.Release{Major: 11, Minor: 56},
		Cache: laraq.CacheStore{Disabled: true}}

	d, err := laraq.NewDispatcher(conn, laraq.CreatePayloadUsing(tr.CreatePayload))
	if err != nil {
		t.Fatal(err)
	}
	ctx, root := tp.Tracer("test").Start(context.Background(), "request")
	if _, err := d.Dispatch(ctx, tracedStep{Step: 1}, laraq.Chain(tracedStep{Step: 2})); err != nil {
		t.Fatal(err)
	}
	root.End()
	first, err := conn.Client.LIndex(context.Background(), prefix+"queues:"+queue, 0).Bytes()
	if err != nil {
		t.Fatal(err)
	}
	if got := laraqotel.Extract(context.Background(), first); trace.SpanContextFromContext(got).SpanID() != root.SpanContext().SpanID() {
		t.Fatalf("the dispatched payload does not carry the request's span: %s", first)
	}

	var mu sync.Mutex
	seen := map[int]trace.SpanContext{}
	nextPayload := make(chan []byte, 1)
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[tracedStep]) error {
		mu.Lock()
		seen[job.Command.Step] = trace.SpanContextFromContext(ctx)
		mu.Unlock()
		if job.Command.Step == 2 {
			nextPayload <- job.Raw
		}
		return nil
	})
	w, err := laraq.NewWorker(conn, jobs, laraq.WorkerConfig{Sleep: 10 * time.Millisecond, MigrateInterval: time.Millisecond,
		Middleware: []laraq.Middleware{tr}, OnEvent: tr.OnEvent, CreatePayloadUsing: tr.CreatePayload,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(wctx) }()
	var second []byte
	select {
	case second = <-nextPayload:
	case <-time.After(30 * time.Second):
		t.Fatal("the chain's second job did not run")
	}
	for deadline := time.Now().Add(10 * time.Second); tr.Open() > 0 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	mu.Lock()
	s1, s2 := seen[1], seen[2]
	mu.Unlock()
	if s1.TraceID() != root.SpanContext().TraceID() || s2.TraceID() != s1.TraceID() {
		t.Fatalf("traces: request %s, first %s, second %s", root.SpanContext().TraceID(), s1.TraceID(), s2.TraceID())
	}
	carried := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrierOf(t, second)))
	if carried.SpanID() != s1.SpanID() {
		t.Errorf("the next job carries span %s, want the first attempt's %s", carried.SpanID(), s1.SpanID())
	}
	parents := map[trace.SpanID]trace.SpanID{}
	for _, s := range exp.GetSpans() {
		parents[s.SpanContext.SpanID()] = s.Parent.SpanID()
	}
	if parents[s1.SpanID()] != root.SpanContext().SpanID() || parents[s2.SpanID()] != s1.SpanID() {
		t.Errorf("span parents: first's %s (want the request's %s), second's %s (want the first's %s)",
			parents[s1.SpanID()], root.SpanContext().SpanID(), parents[s2.SpanID()], s1.SpanID())
	}
}

// carrierOf reads a payload's top-level trace members as a propagation carrier.
func carrierOf(t *testing.T, raw []byte) propagation.MapCarrier {
	t.Helper()
	c := propagation.MapCarrier{}
	ctx := laraqotel.Extract(context.Background(), raw)
	propagation.TraceContext{}.Inject(ctx, c)
	return c
}
