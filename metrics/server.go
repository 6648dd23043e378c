package metrics

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// ShutdownTimeout bounds how long Serve waits for scrapes in flight when its context ends.
const ShutdownTimeout = 5 * time.Second

// Handler serves /metrics (Prometheus text format; queue depths are read from Redis
// first, under the request's context) and /healthz (200 with {"healthy": true, …} when
// the worker loop is alive and Redis answers, else 503 with the reason; see Health).
func (m *Metrics) Handler() http.Handler {
	mux := http.NewServeMux()
	prom := promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{Registry: m.registry})
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, r *http.Request) {
		// A failed read is reported as laraq_queue_depth_up 0, not as a failed scrape:
		// the job counters are still worth having.
		_ = m.RefreshQueueDepths(r.Context())
		prom.ServeHTTP(w, r)
	})
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, r *http.Request) {
		h := m.Check(r.Context())
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		if !h.Healthy {
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		_ = json.NewEncoder(w).Encode(h)
	})
	return mux
}

// Serve listens on addr (e.g. ":9090") and serves Handler until ctx ends, then shuts the
// server down gracefully. It returns nil after a shutdown caused by ctx.
func (m *Metrics) Serve(ctx context.Context, addr string) error {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	return m.ServeListener(ctx, l)
}

// ServeListener is Serve on a listener the caller opened (and that Serve closes).
func (m *Metrics) ServeListener(ctx context.Context, l net.Listener) error {
	srv := &http.Server{
		Handler:           m.Handler(),
		ReadHeaderTimeout: 5 * time.Second,
		// Scrapes in flight finish during the graceful shutdown.
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(l) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if serveErr := <-done; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	return err
}
