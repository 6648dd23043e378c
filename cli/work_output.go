package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/artisanlog"
	"github.com/laraq/laraq/metrics"
	laraqotel "github.com/laraq/laraq/otel"
)

// workOutputs are the two streams of `work`: job lines on stdout (what queue:work
// prints) and the log on stderr, in the same format.
type workOutputs struct {
	jobs *slog.Logger
	log  *slog.Logger
}

func (w *workFlags) outputs(app *App, loc *time.Location) (*workOutputs, error) {
	format, err := artisanlog.ParseFormat(w.logFormat)
	if err != nil {
		return nil, fmt.Errorf("--log-format: %v", err)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(w.logLevel)); err != nil {
		return nil, fmt.Errorf("--log-level %q: %v", w.logLevel, err)
	}
	if loc == nil {
		loc = time.UTC
	}
	opts := artisanlog.Options{Format: format, Level: level, Verbose: w.verbose, Location: loc}
	opts.Color = artisanlog.IsTerminal(app.Stdout)
	jobs, err := artisanlog.NewHandler(app.Stdout, opts)
	if err != nil {
		return nil, err
	}
	opts.Color = artisanlog.IsTerminal(app.Stderr)
	log, err := artisanlog.NewHandler(app.Stderr, opts)
	if err != nil {
		return nil, err
	}
	return &workOutputs{jobs: slog.New(jobs), log: slog.New(log)}, nil
}

// observer fans the worker's events out to the job lines and the metrics.
type observer struct {
	lines   *artisanlog.JobLines // nil with --quiet
	metrics *metrics.Metrics     // nil without --metrics-addr
	tracer  *laraqotel.Tracer    // nil without --otel
}

func (o *observer) event(e laraq.Event) {
	if o.tracer != nil {
		o.tracer.OnEvent(e)
	}
	if o.lines != nil {
		o.lines.OnEvent(e)
	}
	if o.metrics != nil {
		o.metrics.OnEvent(e)
	}
}

// startMetrics serves /metrics and /healthz on addr until ctx ends. Queue depths are read
// from Redis at each scrape; /healthz follows the worker's EventLoop heartbeats, which
// report Redis failures of the worker loop (and ping Redis while the loop waits).
func startMetrics(ctx context.Context, addr string, conn *laraq.Connection, queues []string, log *slog.Logger) (*metrics.Metrics, error) {
	admin, err := laraq.NewAdmin(conn)
	if err != nil {
		return nil, err
	}
	m, err := metrics.New(metrics.Config{Sizer: admin, Pinger: admin, Queues: queues})
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	log.Info("serving metrics", "addr", l.Addr().String(), "paths", "/metrics /healthz")
	go func() {
		if err := m.ServeListener(ctx, l); err != nil {
			log.Error("metrics server stopped", "err", err)
		}
	}()
	return m, nil
}
