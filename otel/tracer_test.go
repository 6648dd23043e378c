package laraqotel_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/laraq/laraq"
	laraqotel "github.com/laraq/laraq/otel"
	"github.com/laraq/laraq/payload"
)

// TestOutcomeFromEvents: each order of events a worker sends for an attempt ends its span
// with the right outcome, those without a closing event once SettleAfter has passed.
func TestOutcomeFromEvents(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name    string
		handler error
		events  []laraq.Event
		settle  bool
		want    laraqotel.Outcome
	}{
		{"done", nil, []laraq.Event{{Kind: laraq.EventProcessed}}, false, laraqotel.Done},
		{"release asked", laraq.ReleaseAfter(time.Second), []laraq.Event{{Kind: laraq.EventReleased}, {Kind: laraq.EventProcessed}}, false, laraqotel.Released},
		{"fail asked", laraq.Fail(boom), []laraq.Event{{Kind: laraq.EventFailed, Err: boom}, {Kind: laraq.EventProcessed}}, false, laraqotel.Failed},
		{"retry", boom, []laraq.Event{{Kind: laraq.EventException, Err: boom}, {Kind: laraq.EventReleased, AfterException: true}}, false, laraqotel.Released},
		{"last try", boom, []laraq.Event{{Kind: laraq.EventFailed, Err: boom}, {Kind: laraq.EventException, Err: boom}}, false, laraqotel.Failed},
		{"timed out, reserved", nil, []laraq.Event{{Kind: laraq.EventTimedOut, Err: boom}}, true, laraqotel.Abandoned},
		{"timed out, failed", nil, []laraq.Event{{Kind: laraq.EventTimedOut, Err: boom}, {Kind: laraq.EventFailed, Err: boom}}, true, laraqotel.Failed},
		{"timed out, released", nil, []laraq.Event{{Kind: laraq.EventTimedOut, Err: boom}, {Kind: laraq.EventReleased, AfterException: true}}, false, laraqotel.Released},
		{"hard stop", boom, []laraq.Event{{Kind: laraq.EventReleased}}, true, laraqotel.Released},
	} {
		t.Run(tc.name, func(t *testing.T) {
			exp := tracetest.NewInMemoryExporter()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
			tr := laraqotel.New(laraqotel.Config{TracerProvider: tp, SettleAfter: 50 * time.Millisecond})
			job := &laraq.JobInfo{ID: "i", UUID: "u", Queue: "default", Name: `App\Jobs\X`, Class: `App\Jobs\X`, Attempt: 1,
				Raw: []byte(`{"uuid":"u","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","id":"i","attempts":1}`)}
			_ = tr.Middleware(context.Background(), job, func(context.Context) error { return tc.handler })
			for _, e := range tc.events {
				e.Job = job
				tr.OnEvent(e)
			}
			if tc.settle {
				if n := len(exp.GetSpans()); n != 0 {
					t.Fatalf("%d spans ended before settling", n)
				}
				time.Sleep(60 * time.Millisecond)
				tr.OnEvent(laraq.Event{Kind: laraq.EventLoop})
			}
			spans := exp.GetSpans()
			if len(spans) != 1 || tr.Open() != 0 {
				t.Fatalf("%d spans, %d open", len(spans), tr.Open())
			}
			var got string
			for _, kv := range spans[0].Attributes {
				if kv.Key == laraqotel.KeyOutcome {
					got = kv.Value.AsString()
				}
			}
			if got != string(tc.want) {
				t.Errorf("outcome %q, want %q", got, tc.want)
			}
			exceptions := 0
			for _, ev := range spans[0].Events {
				if ev.Name == "exception" {
					exceptions++
				}
			}
			if want := map[bool]int{true: 1, false: 0}[tc.handler != nil && laraqotelIsException(tc.handler) || tc.events[0].Kind == laraq.EventTimedOut]; exceptions != want {
				t.Errorf("%d exceptions recorded, want %d", exceptions, want)
			}
			if spans[0].Parent.TraceID().String() != "4bf92f3577b34da6a3ce929d0e0e4736" {
				t.Errorf("parent %v", spans[0].Parent)
			}
		})
	}
}

func laraqotelIsException(err error) bool {
	o, _ := laraq.OutcomeOf(err)
	return o == laraq.OutcomeRetry || o == laraq.OutcomeFail
}

// TestExtractAndHeaders: a payload's context, a payload without one, and the headers a
// forwarded request gets with and without an attempt's span.
func TestExtractAndHeaders(t *testing.T) {
	raw := []byte(`{"uuid":"u","traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","tracestate":"rojo=1","id":"i"}`)
	h := map[string][]string{}
	laraqotel.Headers(context.Background(), raw, h)
	if h["Traceparent"][0] != "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" || h["Tracestate"][0] != "rojo=1" {
		t.Errorf("headers from the payload: %v", h)
	}
	h = map[string][]string{}
	laraqotel.Headers(context.Background(), []byte(`{"uuid":"u","id":"i"}`), h)
	if len(h) != 0 {
		t.Errorf("headers without a context: %v", h)
	}
	for _, bad := range []string{`{"traceparent":"junk"}`, `not json`, `{"traceparent":7}`, `{"data":{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}`} {
		h = map[string][]string{}
		laraqotel.Headers(context.Background(), []byte(bad), h)
		if len(h) != 0 {
			t.Errorf("%s gave headers %v", bad, h)
		}
	}
}

// TestHorizonCopyKeepsContext: Horizon's prepared payload (type, tags, pushedAt added as
// its JobPayload does, and "id" the uuid) keeps the trace context where Inject put it.
func TestHorizonCopyKeepsContext(t *testing.T) {
	raw := []byte(`{"uuid":"u","displayName":"App\\Jobs\\X","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\X","command":"O:10:\"App\\Jobs\\X\":0:{}"},"id":"i","attempts":0}`)
	sc := trace.NewSpanContext(trace.SpanContextConfig{TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled})
	injected := laraqotel.Inject(trace.ContextWithSpanContext(context.Background(), sc), raw)
	prepared, err := payload.PrepareForHorizon(injected, payload.HorizonPrepare{PushedAt: time.Unix(1700000000, 0)})
	if err != nil {
		t.Fatal(err)
	}
	want := `"data":{"commandName":"App\\Jobs\\X","command":"O:10:\"App\\Jobs\\X\":0:{}"},"traceparent":"00-01000000000000000000000000000000-0200000000000000-01","id":"u"`
	if !strings.Contains(string(prepared), want) {
		t.Errorf("Horizon's copy lost or moved the context:\n%s", prepared)
	}
}

func FuzzExtract(f *testing.F) {
	for _, s := range []string{`{"traceparent":"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01","id":"i"}`, `{"traceparent":"junk"}`, `{}`, `[]`, `{"traceparent":"\u0000"}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		ctx := laraqotel.Extract(context.Background(), raw)
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() {
			if !bytes.Contains(raw, []byte(sc.TraceID().String())) {
				t.Fatalf("a trace id %s from nowhere in %q", sc.TraceID(), raw)
			}
		}
		out := laraqotel.Inject(ctx, raw)
		if !trace.SpanContextFromContext(ctx).IsValid() && !bytes.Equal(out, raw) {
			t.Fatalf("no context, yet the payload changed")
		}
	})
}
