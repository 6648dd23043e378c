package laraqotel

import (
	"context"
	"net/http"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/laraq/laraq/payload"
)

// The payload members PHP's TraceContextPropagator writes and reads (W3C Trace Context).
const (
	KeyTraceparent = "traceparent"
	KeyTracestate  = "tracestate"
)

// insertBefore is the member the trace context goes before: RedisQueue adds "id" (and
// "attempts") after the parent's createPayloadArray, whose result PHP's hook injects into.
const insertBefore = "id"

// w3c is the W3C Trace Context propagator, PHP's TraceContextPropagator.
var w3c = propagation.TraceContext{}

// carrier reads and writes the two members of a payload.
type carrier map[string]string

func (c carrier) Get(key string) string { return c[key] }
func (c carrier) Set(key, value string) { c[key] = value }
func (c carrier) Keys() []string        { return []string{KeyTraceparent, KeyTracestate} }

// Extract returns ctx with the remote span context of the payload's top-level
// traceparent and tracestate. A payload without them, with an invalid traceparent, or
// that is not a JSON object gives ctx unchanged.
func Extract(ctx context.Context, raw []byte) context.Context {
	c := carrier{}
	for _, k := range []string{KeyTraceparent, KeyTracestate} {
		if v, ok, err := payload.TopLevelString(raw, k); err == nil && ok {
			c[k] = v
		}
	}
	if c[KeyTraceparent] == "" {
		return ctx
	}
	return w3c.Extract(ctx, c)
}

// Inject returns the payload with ctx's span context as its top-level traceparent (and
// tracestate when not empty), where PHP's propagator writes them: in place when the
// payload has them, else right before "id". Without a valid span context in ctx, or for
// a payload that is not a JSON object, raw comes back as it is.
func Inject(ctx context.Context, raw []byte) []byte {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return raw
	}
	c := carrier{}
	w3c.Inject(ctx, c)
	set := []payload.StringMember{{Key: KeyTraceparent, Value: c[KeyTraceparent]}}
	if ts := c[KeyTracestate]; ts != "" {
		set = append(set, payload.StringMember{Key: KeyTracestate, Value: ts})
	}
	out, err := payload.SetTopLevelStrings(raw, insertBefore, set...)
	if err != nil {
		return raw
	}
	return out
}

// Headers sets the traceparent and tracestate headers of a request that carries a job
// on (--forward): the span of ctx when it has one (the attempt's, under Tracer), else
// the payload's own context, so that the receiver continues the job's trace whether or
// not this process exports spans.
func Headers(ctx context.Context, raw []byte, h http.Header) {
	if !trace.SpanContextFromContext(ctx).IsValid() {
		ctx = Extract(ctx, raw)
	}
	if !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	w3c.Inject(ctx, propagation.HeaderCarrier(h))
}
