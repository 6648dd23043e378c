package metrics

import (
	"context"
	"fmt"
	"time"
)

// probe is one Pinger call, shared by the /healthz requests that arrive while it runs.
type probe struct {
	done chan struct{}
	err  error
}

// probeTimeout bounds one Pinger call in the background; /healthz stops waiting for it
// after HealthProbeTimeout.
const probeTimeout = 10 * time.Second

// Check is Health plus, with a Pinger, a live check that Redis answers within
// HealthProbeTimeout. A stalled Redis does not make the request wait: the ping goes on
// in the background (at most one at a time) and the request answers unhealthy when the
// timeout passes first.
func (m *Metrics) Check(ctx context.Context) Health {
	h := m.Health()
	if m.cfg.Pinger == nil || h.Reason == "worker loop has not started" || h.Reason == "worker loop stalled" {
		return h
	}
	m.mu.Lock()
	p := m.probing
	if p == nil {
		p = &probe{done: make(chan struct{})}
		m.probing = p
		go m.ping(ctx, p)
	}
	m.mu.Unlock()
	t := time.NewTimer(m.cfg.HealthProbeTimeout)
	defer t.Stop()
	var err error
	select {
	case <-p.done:
		err = p.err
	case <-t.C:
		err = fmt.Errorf("no answer within %v", m.cfg.HealthProbeTimeout)
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		h.Healthy = false
		h.Reason = "redis unreachable: " + shortError(err)
		return h
	}
	if h.blocked {
		// Redis answers a PING but refuses every pop, or every queue is skipped: still
		// no job can be taken.
		return h
	}
	// Redis answers now: an error the loop saw earlier is over.
	h.RedisAge = 0
	if !h.Healthy && h.LoopAge >= 0 && time.Duration(h.LoopAge*float64(time.Second)) <= m.cfg.HealthMaxAge {
		h.Healthy, h.Reason = true, ""
	}
	return h
}

func (m *Metrics) ping(ctx context.Context, p *probe) {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), probeTimeout)
	defer cancel()
	p.err = m.cfg.Pinger.Ping(pctx)
	m.mu.Lock()
	m.probing = nil
	if p.err == nil {
		m.lastRedis = m.cfg.Now()
	}
	m.mu.Unlock()
	close(p.done)
}
