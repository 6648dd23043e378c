package metrics

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/rdb"
)

// okPinger is a Redis that answers every PING.
type okPinger struct{}

func (okPinger) Ping(context.Context) error { return nil }

// A skipped queue sets laraq_queue_skipped and is named by /healthz, which stays 200
// while other queues are worked and turns 503 when the loop says every queue is
// skipped, also past a PING Redis answers; a resumed queue drops back to 0.
func TestSkippedQueues(t *testing.T) {
	m, err := New(Config{Pinger: okPinger{}})
	if err != nil {
		t.Fatal(err)
	}
	h := m.Handler()
	health := func(code int) Health {
		t.Helper()
		var got Health
		if err := json.Unmarshal([]byte(get(t, h, "/healthz", code)), &got); err != nil {
			t.Fatal(err)
		}
		return got
	}
	broken := &rdb.ConfigError{Reason: rdb.ErrWrongType, Server: "127.0.0.1:6379/0", Queue: "high",
		Key: "laravel_database_queues:high:notify", Type: "string", Want: "list", Err: fmt.Errorf("WRONGTYPE")}
	m.Observe(Event{Kind: Loop})
	m.OnEvent(laraq.Event{Kind: laraq.EventQueueSkipped, Queue: "high", Err: broken})
	const series = `laraq_queue_skipped{queue="high"}`
	if v, ok := gather(t, m.Registry())[series]; !ok || v != 1 {
		t.Errorf("laraq_queue_skipped{high} = %v, want 1", v)
	}
	got := health(200)
	if !got.Healthy || !strings.Contains(got.Skipped["high"], "laravel_database_queues:high:notify holds a string, not a list") {
		t.Errorf("some queues skipped: %+v", got)
	}

	all := fmt.Errorf("%w: every queue is skipped: %w", laraq.ErrQueuesUnavailable, broken)
	m.Observe(Event{Kind: Loop, Err: all})
	got = health(503)
	if got.Healthy || got.Refused || !strings.Contains(got.Reason, "every queue is skipped") || got.Skipped["high"] == "" {
		t.Errorf("every queue skipped: %+v", got)
	}

	m.OnEvent(laraq.Event{Kind: laraq.EventQueueResumed, Queue: "high"})
	m.Observe(Event{Kind: Loop})
	if v := gather(t, m.Registry())[series]; v != 0 {
		t.Errorf("laraq_queue_skipped{high} = %v after the resume, want 0", v)
	}
	if got := health(200); len(got.Skipped) != 0 {
		t.Errorf("after the resume: %+v", got)
	}
}

// A replica refusing the pops keeps /healthz at 503 though it answers the PING.
func TestReadOnlyReplicaIsUnhealthy(t *testing.T) {
	m, _ := New(Config{Pinger: okPinger{}, HealthProbeTimeout: time.Second})
	readOnly := &rdb.ConfigError{Reason: rdb.ErrReadOnly, Server: "127.0.0.1:6379/0", Err: fmt.Errorf("READONLY You can't write against a read only replica.")}
	m.Observe(Event{Kind: Loop, Err: readOnly})
	var got Health
	if err := json.Unmarshal([]byte(get(t, m.Handler(), "/healthz", 503)), &got); err != nil {
		t.Fatal(err)
	}
	if !got.Refused || !strings.Contains(got.Reason, "read-only replica") {
		t.Errorf("%+v", got)
	}
}
