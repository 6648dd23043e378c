package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"time"

	"github.com/laraq/laraq/consumer"
	"github.com/laraq/laraq/internal/artisanlog"
	"github.com/laraq/laraq/internal/metrics"
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
	lines   *jobLines        // nil with --quiet
	metrics *metrics.Metrics // nil without --metrics-addr
}

func (o *observer) event(e consumer.Event) {
	if o.lines != nil {
		o.lines.event(e)
	}
	if o.metrics != nil {
		o.metrics.Observe(metricsEvent(e))
	}
}

// metricsEvent converts a consumer event; the kinds share their names, and the
// consumer's *handlers.Job, one per attempt, identifies the attempt.
func metricsEvent(e consumer.Event) metrics.Event {
	m := metrics.Event{Kind: metrics.Kind(e.Kind.String()), Queue: e.Queue, Duration: e.Runtime,
		Count: e.Count, From: e.From, Err: e.Err, Time: e.Time}
	if e.Job != nil {
		m.Class = e.Job.Name
		m.Attempt = e.Job
	}
	return m
}

// jobLines prints queue:work's line per job step. Laravel 9+ prints a job released after
// an exception (or a timeout) as FAIL (JobReleasedAfterException) but a job its handler
// released as DONE: the consumer says which with EventReleased's AfterException, and
// the DONE comes with the EventProcessed that follows a handler's release.
type jobLines struct {
	log *slog.Logger
}

func newJobLines(l *slog.Logger) *jobLines { return &jobLines{log: l} }

func (l *jobLines) event(e consumer.Event) {
	j := e.Job
	if j == nil {
		return
	}
	ctx := context.Background()
	switch e.Kind {
	case consumer.EventProcessing:
		artisanlog.Job(ctx, l.log, artisanlog.Starting, j.ID, j.Name, e.Queue, 0)
	case consumer.EventProcessed:
		artisanlog.Job(ctx, l.log, artisanlog.Success, j.ID, j.Name, e.Queue, e.Runtime)
	case consumer.EventFailed:
		artisanlog.Job(ctx, l.log, artisanlog.Failed, j.ID, j.Name, e.Queue, e.Runtime)
	case consumer.EventReleased:
		if e.AfterException {
			artisanlog.Job(ctx, l.log, artisanlog.Released, j.ID, j.Name, e.Queue, e.Runtime)
		}
	}
}

// startMetrics serves /metrics and /healthz on addr until ctx ends. Queue depths are read
// from Redis at each scrape; /healthz follows the consumer's EventLoop heartbeats, which
// report Redis failures of the worker loop (and ping Redis while the loop waits).
func startMetrics(ctx context.Context, addr string, c *redisConn, queues []string, log *slog.Logger) (*metrics.Metrics, error) {
	m, err := metrics.New(metrics.Config{Sizer: c.rdb, Queues: queues})
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
