package metrics

import (
	"context"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// depthCollector exports the queue depths read by the last Refresh. Prometheus'
// Collect has no context, so the Redis reads happen before gathering, in Refresh, under
// the scrape request's context and Config.ScrapeTimeout.
type depthCollector struct {
	cfg     Config
	jobs    *prometheus.Desc
	up      *prometheus.Desc
	mu      sync.Mutex // one refresh at a time; guards snap
	snap    []queueDepth
	ok      bool
	scraped bool
}

type queueDepth struct {
	queue                    string
	ready, delayed, reserved int64
}

func newDepthCollector(ns string, cfg Config) *depthCollector {
	return &depthCollector{
		cfg: cfg,
		jobs: prometheus.NewDesc(prometheus.BuildFQName(ns, "queue", "jobs"),
			"Jobs in a queue by state: ready (queues:NAME), delayed (:delayed) and reserved (:reserved), read from Redis at scrape time.",
			[]string{"queue", "state"}, nil),
		up: prometheus.NewDesc(prometheus.BuildFQName(ns, "queue", "depth_up"),
			"1 when the last scrape read every queue depth from Redis, else 0.", nil, nil),
	}
}

// refresh reads every queue's sizes. On error the previous values are dropped, so a
// dashboard shows a gap rather than stale depths, and depth_up is 0.
func (d *depthCollector) refresh(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, d.cfg.ScrapeTimeout)
	defer cancel()
	queues := d.cfg.Queues
	var err error
	if len(queues) == 0 {
		queues, err = d.cfg.Sizer.Queues(ctx)
	}
	var snap []queueDepth
	for _, q := range queues {
		if err != nil {
			break
		}
		var qd queueDepth
		qd.queue = q
		qd.ready, qd.delayed, qd.reserved, err = d.cfg.Sizer.Sizes(ctx, q)
		snap = append(snap, qd)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.scraped = true
	d.ok = err == nil
	if err != nil {
		snap = nil
	}
	d.snap = snap
	return err
}

func (d *depthCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- d.jobs
	ch <- d.up
}

func (d *depthCollector) Collect(ch chan<- prometheus.Metric) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.scraped {
		return
	}
	up := 0.0
	if d.ok {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(d.up, prometheus.GaugeValue, up)
	for _, q := range d.snap {
		ch <- prometheus.MustNewConstMetric(d.jobs, prometheus.GaugeValue, float64(q.ready), q.queue, "ready")
		ch <- prometheus.MustNewConstMetric(d.jobs, prometheus.GaugeValue, float64(q.delayed), q.queue, "delayed")
		ch <- prometheus.MustNewConstMetric(d.jobs, prometheus.GaugeValue, float64(q.reserved), q.queue, "reserved")
	}
}

// RefreshQueueDepths reads the queue depths the next gathering reports. The /metrics
// handler calls it before every scrape; call it yourself before Registry().Gather().
// Without a Sizer it does nothing.
func (m *Metrics) RefreshQueueDepths(ctx context.Context) error {
	if m.depth == nil {
		return nil
	}
	return m.depth.refresh(ctx)
}
