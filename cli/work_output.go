package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/laraq/laraq/consumer"
	"github.com/laraq/laraq/handlers"
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

// metricsEvent converts a consumer event; the kinds share their names.
func metricsEvent(e consumer.Event) metrics.Event {
	m := metrics.Event{Kind: metrics.Kind(e.Kind.String()), Queue: e.Queue, Duration: e.Runtime,
		Count: e.Count, From: e.From, Time: e.Time}
	if e.Job != nil {
		m.Class = e.Job.Name
	}
	return m
}

// jobLines prints queue:work's line per job step. Laravel 9+ prints a job released after
// an exception as FAIL (JobReleasedAfterException) but a job its handler released as
// DONE; the consumer reports both as EventReleased, after EventException for the first
// and before EventProcessed for the second, so jobLines remembers which attempts threw.
type jobLines struct {
	log *slog.Logger

	mu    sync.Mutex
	threw map[*handlers.Job]attemptEnd
}

// attemptEnd is what is known of a job's attempt between its events.
type attemptEnd struct {
	failed  bool // EventFailed came first (the last try threw, or maxExceptions)
	runtime time.Duration
	at      time.Time
}

// staleAfter bounds how long an attempt is remembered: longer than the consumer retries
// an acknowledgement, so only attempts that never produce another event are dropped.
const staleAfter = 10 * time.Minute

func newJobLines(l *slog.Logger) *jobLines {
	return &jobLines{log: l, threw: map[*handlers.Job]attemptEnd{}}
}

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
		l.take(j)
		artisanlog.Job(ctx, l.log, artisanlog.Success, j.ID, j.Name, e.Queue, e.Runtime)
	case consumer.EventFailed:
		l.remember(j, attemptEnd{failed: true, runtime: e.Runtime, at: e.Time})
		artisanlog.Job(ctx, l.log, artisanlog.Failed, j.ID, j.Name, e.Queue, e.Runtime)
	case consumer.EventException, consumer.EventTimedOut:
		if prev, ok := l.take(j); ok && prev.failed {
			return // the exception of a job already printed as failed
		}
		l.remember(j, attemptEnd{runtime: e.Runtime, at: e.Time})
	case consumer.EventReleased:
		if prev, ok := l.take(j); ok && !prev.failed {
			artisanlog.Job(ctx, l.log, artisanlog.Released, j.ID, j.Name, e.Queue, prev.runtime)
		}
	}
}

func (l *jobLines) remember(j *handlers.Job, a attemptEnd) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.threw) > 256 {
		for k, v := range l.threw {
			if a.at.Sub(v.at) > staleAfter {
				delete(l.threw, k)
			}
		}
	}
	l.threw[j] = a
}

func (l *jobLines) take(j *handlers.Job) (attemptEnd, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a, ok := l.threw[j]
	delete(l.threw, j)
	return a, ok
}

// startMetrics serves /metrics and /healthz on addr until ctx ends. Queue depths are read
// from Redis at each scrape. The consumer reports no idle-loop heartbeat, so a PING every
// healthPingInterval keeps /healthz current while no job comes; events count as
// heartbeats too.
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
	go func() {
		t := time.NewTicker(healthPingInterval)
		defer t.Stop()
		for {
			pctx, cancel := context.WithTimeout(ctx, healthPingInterval/2)
			err := c.clients.Queue.Ping(pctx).Err()
			cancel()
			if ctx.Err() != nil {
				return
			}
			m.Observe(metrics.Event{Kind: metrics.Loop, Err: err})
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return m, nil
}
