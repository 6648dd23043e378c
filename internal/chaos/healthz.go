package chaos

import (
	"context"
	"io"
	"net/http"
	"sync"
	"time"
)

// HealthProbe polls a worker's /healthz (`laraq work --metrics-addr`) every Interval and
// keeps every answer, so that a scenario can measure how long /healthz took to report a
// Redis outage and its end.
type HealthProbe struct {
	url    string
	cancel context.CancelFunc
	done   chan struct{}

	mu      sync.Mutex
	samples []healthSample
}

type healthSample struct {
	at      time.Time
	healthy bool
}

// ProbeInterval is how often HealthProbe asks.
const ProbeInterval = 100 * time.Millisecond

// StartHealthProbe polls url until Stop.
func StartHealthProbe(url string) *HealthProbe {
	ctx, cancel := context.WithCancel(context.Background())
	p := &HealthProbe{url: url, cancel: cancel, done: make(chan struct{})}
	client := &http.Client{Timeout: 500 * time.Millisecond}
	go func() {
		defer close(p.done)
		t := time.NewTicker(ProbeInterval)
		defer t.Stop()
		for {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			resp, err := client.Do(req)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				p.mu.Lock()
				p.samples = append(p.samples, healthSample{at: time.Now(), healthy: resp.StatusCode == http.StatusOK})
				p.mu.Unlock()
			}
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return p
}

// Stop ends the polling.
func (p *HealthProbe) Stop() {
	p.cancel()
	<-p.done
}

// Healthy reports the last answer (false when there was none).
func (p *HealthProbe) Healthy() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.samples) > 0 && p.samples[len(p.samples)-1].healthy
}

// Latency is how long after from /healthz first answered healthy == want, looking no
// further than until; ok is false (and the latency until-from) when it never did.
func (p *HealthProbe) Latency(from, until time.Time, want bool) (d time.Duration, ok bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, s := range p.samples {
		if s.at.Before(from) || s.at.After(until) {
			continue
		}
		if s.healthy == want {
			return s.at.Sub(from), true
		}
	}
	return until.Sub(from), false
}
