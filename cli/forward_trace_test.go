package cli

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/laraq/laraq/internal/testenv"
)

// TestForwardCarriesTraceContext: a job Laravel dispatched under a traced request (the
// keys OpenTelemetry's instrumentation adds) is forwarded with that trace's traceparent
// and tracestate; with --otel the service gets the attempt's consumer span instead, the
// child of the request's span, which the OTLP receiver gets too.
func TestForwardCarriesTraceContext(t *testing.T) {
	testenv.NeedPHP(t)
	const (
		traceID    = "4bf92f3577b34da6a3ce929d0e0e4736"
		phpSpan    = "00f067aa0ba902b7"
		tracestate = "rojo=00f067aa0ba902b7"
	)
	r := testenv.RedisServer(t)
	prefix, queue := testenv.Prefix(t), "trc"+testenv.RandomName(3)
	env := testenv.PHPEnv{Redis: r, Prefix: prefix, Extra: map[string]string{"LARAQ_TRACEPARENT": "00-" + traceID + "-" + phpSpan + "-01", "LARAQ_TRACESTATE": tracestate}}
	dispatch := func() {
		phpDispatchLines(t, env, []any{map[string]any{"class": `App\Jobs\PlainJob`, "queue": queue, "props": map[string]any{"name": "traced"}}})
	}
	srv, got := forwardService(t, func(int, http.ResponseWriter) {})

	var mu sync.Mutex
	var exported []*coltrace.ExportTraceServiceRequest
	otlp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		var m coltrace.ExportTraceServiceRequest
		if req.URL.Path != "/v1/traces" || proto.Unmarshal(b, &m) != nil {
			t.Errorf("OTLP request %s %d bytes", req.URL.Path, len(b))
		}
		mu.Lock()
		exported = append(exported, &m)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	defer otlp.Close()

	work := func(extra []string, environ map[string]string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		var out, errOut syncBuf
		rc := Main(ctx, append([]string{"work", "--forward", srv.URL, "--redis", "redis://" + r.Addr + "/0", "--prefix", prefix, "--queue", queue,
			"--stop-when-empty", "--no-cache", "--sleep", "0", "--database", "null"}, extra...),
			WithIO(strings.NewReader(""), &out, &errOut), WithGetenv(func(k string) string { return environ[k] }))
		if rc != 0 {
			t.Fatalf("rc %d\n%s\n%s", rc, out.String(), errOut.String())
		}
	}

	dispatch()
	work(nil, nil)
	if h := got()[0].header; h.Get("Traceparent") != "00-"+traceID+"-"+phpSpan+"-01" || h.Get("Tracestate") != tracestate {
		t.Errorf("without --otel: traceparent %q tracestate %q", h.Get("Traceparent"), h.Get("Tracestate"))
	}

	dispatch()
	work(nil, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": otlp.URL, "OTEL_SERVICE_NAME": "shop-worker"})
	tp := strings.Split(got()[1].header.Get("Traceparent"), "-")
	if len(tp) != 4 || tp[1] != traceID || tp[2] == phpSpan || got()[1].header.Get("Tracestate") != tracestate {
		t.Fatalf("with tracing: traceparent %q", got()[1].header.Get("Traceparent"))
	}
	mu.Lock()
	defer mu.Unlock()
	var found bool
	for _, req := range exported {
		for _, rs := range req.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				for _, s := range ss.Spans {
					if hex.EncodeToString(s.SpanId) == tp[2] {
						found = true
						if hex.EncodeToString(s.TraceId) != traceID || hex.EncodeToString(s.ParentSpanId) != phpSpan || s.Name != "process queues:"+queue {
							t.Errorf("exported span %s trace %x parent %x", s.Name, s.TraceId, s.ParentSpanId)
						}
						if !strings.Contains(rs.Resource.String(), "shop-worker") {
							t.Errorf("resource %s", rs.Resource)
						}
					}
				}
			}
		}
	}
	if !found {
		t.Errorf("the OTLP receiver did not get the span %s (%d requests)", tp[2], len(exported))
	}
}
