package laraqotel_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
	laraqotel "github.com/laraq/laraq/otel"
)

// The context a PHP request traced by OpenTelemetry hands its jobs (W3C's example ids).
const (
	traceID     = "4bf92f3577b34da6a3ce929d0e0e4736"
	parentSpan  = "00f067aa0ba902b7"
	traceparent = "00-" + traceID + "-" + parentSpan + "-01"
	tracestate  = "rojo=00f067aa0ba902b7,congo/x=t61rcWkgMzE"
)

// phpDispatch dispatches PlainJobs named names through the release's Bus dispatcher
// (dispatch.php), with OpenTelemetry's payload keys when traced, and returns the payloads.
func phpDispatch(t *testing.T, env testenv.PHPEnv, queue string, traced bool, names ...string) [][]byte {
	t.Helper()
	if traced {
		env.Extra = map[string]string{"LARAQ_TRACEPARENT": traceparent, "LARAQ_TRACESTATE": tracestate}
	}
	var in bytes.Buffer
	for _, n := range names {
		b, _ := json.Marshal(map[string]any{"class": `App\Jobs\PlainJob`, "queue": queue, "props": map[string]any{"name": n, "count": 1}})
		in.Write(append(b, '\n'))
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(env.Run(t, in.Bytes(), "dispatch.php")))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct{ Payload, Error string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Error != "" {
			t.Fatalf("dispatch.php: %s %v", sc.Text(), err)
		}
		out = append(out, []byte(l.Payload))
	}
	if len(out) != len(names) {
		t.Fatalf("dispatch.php queued %d of %d", len(out), len(names))
	}
	return out
}

var volatile = regexp.MustCompile(`"(uuid|id)":"[^"]*"|"createdAt":\d+`)

// TestInjectWherePHPPutsIt: the traceparent and tracestate Inject writes into a payload
// Laravel made are byte for byte where OpenTelemetry's instrumentation puts them in the
// same release's payload (ids and times aside); a payload without an active span stays
// as it was; and the release's own worker reads them from $job->payload().
func TestInjectWherePHPPutsIt(t *testing.T) {
	testenv.NeedPHP(t)
	r := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		prefix, queue := testenv.Prefix(t), "otel"+testenv.RandomName(3)
		env := testenv.PHPEnv{Major: major, Redis: r, Prefix: prefix}
		plain := phpDispatch(t, env, queue, false, "a")[0]
		traced := phpDispatch(t, env, queue, true, "a")[0]

		if got := laraqotel.Inject(context.Background(), plain); !bytes.Equal(got, plain) {
			t.Fatalf("without a span the payload changed:\n%s\n%s", plain, got)
		}
		sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: mustTraceID(t), SpanID: mustSpanID(t), TraceFlags: trace.FlagsSampled,
			TraceState: mustTraceState(t), Remote: true})
		injected := laraqotel.Inject(trace.ContextWithRemoteSpanContext(context.Background(), sc), plain)
		if a, b := volatile.ReplaceAll(injected, []byte("$1")), volatile.ReplaceAll(traced, []byte("$1")); !bytes.Equal(a, b) {
			t.Fatalf("Go's injection differs from PHP's:\n go  %s\n php %s", a, b)
		}
		if !bytes.Contains(injected, []byte(`"traceparent":"`+traceparent+`","tracestate":"rojo=00f067aa0ba902b7,congo\/x=t61rcWkgMzE","id":"`)) {
			t.Errorf("not right before id:\n%s", injected)
		}

		// The release's worker finds them in $job->payload().
		c := r.Client(t, 0)
		key := prefix + "queues:" + queue
		if err := c.Del(context.Background(), key).Err(); err != nil {
			t.Fatal(err)
		}
		if err := c.RPush(context.Background(), key, injected).Err(); err != nil {
			t.Fatal(err)
		}
		rec := filepath.Join(t.TempDir(), "records")
		env.Record = rec
		env.Command("work.php", "--queue="+queue, "--stop-when-empty", "--sleep=0.1").Run()
		b, _ := os.ReadFile(rec)
		var got struct{ Traceparent, Tracestate string }
		if err := json.Unmarshal(bytes.TrimSpace(b), &got); err != nil || got.Traceparent != traceparent || got.Tracestate != tracestate {
			t.Errorf("the PHP worker read %+v (%v) from %s", got, err, b)
		}
	})
}

func mustTraceID(t *testing.T) trace.TraceID {
	id, err := trace.TraceIDFromHex(traceID)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func mustSpanID(t *testing.T) trace.SpanID {
	id, err := trace.SpanIDFromHex(parentSpan)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func mustTraceState(t *testing.T) trace.TraceState {
	ts, err := trace.ParseTraceState(tracestate)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// TestSpanIsChildOfPHPContext: jobs Laravel dispatched under a traced request run in Go
// under a consumer span per attempt, the child of the request's span (one trace id); the
// handler's ctx carries it; the outcome (done, released, failed) and the exception are
// on it. An in-memory exporter collects the spans.
func TestSpanIsChildOfPHPContext(t *testing.T) {
	testenv.NeedPHP(t)
	r := testenv.RedisServer(t)
	prefix, queue := testenv.Prefix(t), "otel"+testenv.RandomName(3)
	phpDispatch(t, testenv.PHPEnv{Redis: r, Prefix: prefix}, queue, true, "ok", "again", "boom")

	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	defer tp.Shutdown(context.Background())
	tr := laraqotel.New(laraqotel.Config{TracerProvider: tp})

	var mu sync.Mutex
	handled := map[string]trace.SpanContext{}
	jobs := laraq.NewJobs()
	jobs.HandleFunc(`App\Jobs\PlainJob`, func(ctx context.Context, job *laraq.JobInfo) error {
		var cmd struct {
			Name string `php:"name"`
		}
		if err := job.Bind(&cmd); err != nil {
			return err
		}
		mu.Lock()
		handled[fmt.Sprintf("%s#%d", cmd.Name, job.Attempt)] = trace.SpanContextFromContext(ctx)
		mu.Unlock()
		switch {
		case cmd.Name == "again" && job.Attempt == 1:
			return laraq.ReleaseAfter(0)
		case cmd.Name == "boom":
			return errors.New("boom")
		}
		return nil
	})
	conn := &laraq.Connection{Client: r.Client(t, 0), Prefix: prefix, Release: laraq.Release{Major: 8, Minor: 83}, Cache: laraq.CacheStore{Disabled: true}}
	// The tracer as the worker's middleware: every job gets its span, with no wrapping
	// in the handler.
	w, err := laraq.NewWorker(conn, jobs, laraq.WorkerConfig{Queues: []string{queue}, Tries: 2, Sleep: 10 * time.Millisecond, MigrateInterval: time.Millisecond,
		Middleware: []laraq.Middleware{tr}, OnEvent: tr.OnEvent, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.Run(ctx) }()
	// Five attempts, the last ones after their releases come due; then one more second
	// for the acknowledgement of the last.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		mu.Lock()
		n := len(handled)
		mu.Unlock()
		if n == 5 && tr.Open() == 0 || time.Now().After(deadline) {
			break
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	spans := exp.GetSpans()
	if tr.Open() != 0 {
		t.Errorf("%d spans still open", tr.Open())
	}
	want := map[string]string{"ok#1": "done", "again#1": "released", "again#2": "done", "boom#1": "released", "boom#2": "failed"}
	if len(spans) != len(want) {
		t.Fatalf("%d spans, want %d: %v (handled %v)", len(spans), len(want), spanNames(spans), handled)
	}
	for _, s := range spans {
		attrs := map[string]string{}
		for _, kv := range s.Attributes {
			attrs[string(kv.Key)] = kv.Value.String()
		}
		key := ""
		for k, sc := range handled {
			if sc.SpanID() == s.SpanContext.SpanID() {
				key = k
			}
		}
		if key == "" {
			t.Errorf("span %s was not the handler's ctx span", s.SpanContext.SpanID())
			continue
		}
		if s.SpanContext.TraceID().String() != traceID || s.Parent.SpanID().String() != parentSpan || !s.Parent.IsRemote() {
			t.Errorf("%s: trace %s parent %s, want the PHP request's %s/%s", key, s.SpanContext.TraceID(), s.Parent.SpanID(), traceID, parentSpan)
		}
		if s.SpanKind != trace.SpanKindConsumer || s.Name != "process queues:"+queue || s.SpanContext.TraceState().String() != "rojo=00f067aa0ba902b7,congo/x=t61rcWkgMzE" {
			t.Errorf("%s: %s %q tracestate %q", key, s.SpanKind, s.Name, s.SpanContext.TraceState())
		}
		for k, v := range map[string]string{"messaging.system": "redis", "messaging.destination.name": "queues:" + queue,
			"messaging.operation.type": "process", "messaging.message.job_name": `App\Jobs\PlainJob`, "laraq.job.class": `App\Jobs\PlainJob`,
			"laraq.queue.connection": "redis", "laraq.job.outcome": want[key], "messaging.message.attempts": strings.TrimPrefix(key[strings.Index(key, "#"):], "#")} {
			if attrs[k] != v {
				t.Errorf("%s: %s = %q, want %q", key, k, attrs[k], v)
			}
		}
		if attrs["messaging.message.id"] == "" {
			t.Errorf("%s: no message id", key)
		}
		boom := strings.HasPrefix(key, "boom")
		if hasException := len(s.Events) > 0 && s.Events[0].Name == "exception"; hasException != boom {
			t.Errorf("%s: exception recorded %v", key, hasException)
		}
	}
}

func spanNames(spans tracetest.SpanStubs) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}
