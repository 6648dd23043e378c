package laraq_test

import (
	"context"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// TestReservationHeartbeatStopsAtTimeout: the heartbeat keeps a running job reserved,
// but stops with the handler's context: a timed-out handler that ignores its context
// (abandoned, as PHP's killed worker) leaves the job reserved only until retry_after.
func TestReservationHeartbeatStopsAtTimeout(t *testing.T) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	client := srv.Client(t, 0)
	prefix := testenv.Prefix(t)
	conn := &laraq.Connection{Client: client, Prefix: prefix, RetryAfter: 5 * time.Second}
	d, err := laraq.NewDispatcher(conn)
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	jobs := laraq.NewJobs()
	jobs.HandleFunc(`App\Jobs\Stuck`, func(ctx context.Context, job *laraq.JobInfo) error {
		<-release // ignores its context
		return nil
	})
	defer close(release)
	if _, err := d.DispatchString(ctx, `App\Jobs\Stuck`, nil); err != nil {
		t.Fatal(err)
	}
	g := testkit.StartGoWorker(t, conn, jobs, laraq.WorkerConfig{Tries: 3, Timeout: 1500 * time.Millisecond, ReservationHeartbeat: 300 * time.Millisecond})
	testkit.WaitFor(t, 5*time.Second, "the job to start", func() bool { return g.Count(laraq.EventProcessing) == 1 })

	reserved := prefix + "queues:default:reserved"
	first, err := client.ZRangeWithScores(ctx, reserved, 0, -1).Result()
	if err != nil || len(first) != 1 {
		t.Fatalf("reserved set when the job started: %v %v", first, err)
	}
	time.Sleep(1200 * time.Millisecond)
	mid, err := client.ZRangeWithScores(ctx, reserved, 0, -1).Result()
	if err != nil || len(mid) != 1 {
		t.Fatalf("reserved set while running: %v %v", mid, err)
	}
	if mid[0].Score <= first[0].Score {
		t.Errorf("while the handler runs the reservation still ends at %d, as the pop left it: not extended", int64(mid[0].Score))
	}
	testkit.WaitFor(t, 5*time.Second, "the timeout", func() bool { return g.Count(laraq.EventTimedOut) == 1 })
	at, err := client.ZScore(ctx, reserved, mid[0].Member.(string)).Result()
	if err != nil {
		t.Fatalf("the timed-out job is no longer reserved: %v", err)
	}
	time.Sleep(1500 * time.Millisecond) // five beats and a new second, were the heartbeat still running
	if later, err := client.ZScore(ctx, reserved, mid[0].Member.(string)).Result(); err == nil && later != at {
		t.Errorf("after the timeout the reservation moved from %d to %d: the heartbeat went on", int64(at), int64(later))
	}
}
