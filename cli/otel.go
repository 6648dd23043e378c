package cli

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"

	laraqotel "github.com/laraq/laraq/otel"
)

// tracingWanted reports whether `work` exports spans: --otel, or the standard variables
// that ask for OTLP traces (OTEL_TRACES_EXPORTER=otlp, an OTLP endpoint), unless
// OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none says otherwise (--otel wins).
func tracingWanted(flag bool, getenv func(string) string) bool {
	if flag {
		return true
	}
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return false
	}
	switch strings.ToLower(getenv("OTEL_TRACES_EXPORTER")) {
	case "none":
		return false
	case "otlp":
		return true
	}
	return getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != ""
}

// otlpEndpoint is the traces URL the standard variables name: the traces one as it is,
// the general one with /v1/traces; "" for the exporter's default (localhost:4318).
func otlpEndpoint(getenv func(string) string) string {
	if u := getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"); u != "" {
		return u
	}
	if u := getenv("OTEL_EXPORTER_OTLP_ENDPOINT"); u != "" {
		return strings.TrimSuffix(u, "/") + "/v1/traces"
	}
	return ""
}

// startTracing installs the OpenTelemetry SDK with the OTLP/HTTP exporter (its other
// settings, headers and timeouts, from the standard OTEL_EXPORTER_OTLP_* variables) and
// returns the job tracer and a shutdown that flushes the spans.
func startTracing(ctx context.Context, getenv func(string) string, log *slog.Logger) (*laraqotel.Tracer, func(), error) {
	if p := strings.ToLower(getenv("OTEL_EXPORTER_OTLP_PROTOCOL")); p != "" && p != "http/protobuf" {
		return nil, nil, fmt.Errorf("--otel: OTEL_EXPORTER_OTLP_PROTOCOL %q: laraq exports with http/protobuf only", p)
	}
	var opts []otlptracehttp.Option
	endpoint := otlpEndpoint(getenv)
	if endpoint != "" {
		opts = append(opts, otlptracehttp.WithEndpointURL(endpoint))
	}
	exp, err := otlptracehttp.New(ctx, opts...)
	if err != nil {
		return nil, nil, fmt.Errorf("--otel: %v", err)
	}
	service := getenv("OTEL_SERVICE_NAME")
	if service == "" {
		service = "laraq"
	}
	// OTEL_RESOURCE_ATTRIBUTES (process environment) comes last and wins, as the
	// specification has it.
	res, err := resource.New(ctx, resource.WithTelemetrySDK(), resource.WithAttributes(semconv.ServiceName(service)), resource.WithFromEnv())
	if err != nil {
		log.Warn("--otel: reading the resource attributes", "err", err)
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res))
	if endpoint == "" {
		endpoint = "http://localhost:4318/v1/traces"
	}
	log.Info("exporting traces", "otlp", endpoint, "service", service)
	return laraqotel.New(laraqotel.Config{TracerProvider: tp}), func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		if err := tp.Shutdown(sctx); err != nil {
			log.Warn("flushing the last spans failed", "err", err)
		}
	}, nil
}
