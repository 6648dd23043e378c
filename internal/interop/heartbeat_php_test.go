package interop

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// TestReservationHeartbeatAgainstPHPFleet: a job that runs three times retry_after (3 s)
// in a Go worker, beside two PHP workers of each release that migrate expired
// reservations before every pop, runs exactly once: the heartbeat keeps its reservation
// from expiring. Without the heartbeat the same fleet takes the job back and runs it a
// second time, which is what the first half would catch.
func TestReservationHeartbeatAgainstPHPFleet(t *testing.T) {
	t.Parallel()
	srv := testenv.RedisServer(t)
	run := func(t *testing.T, major int, heartbeat bool) (goRuns int64, phpRuns int, left int64) {
		ctx := context.Background()
		client := srv.Client(t, 0)
		prefix := testenv.Prefix(t)
		queue := "long" + testenv.RandomName(4)
		record := testkit.RecordFile(t)
		php := testenv.PHPEnv{Major: major, Redis: srv, Prefix: prefix, Record: record, RetryAfter: 3}
		php.Dispatch(t, nil, `{"class":"App\\Jobs\\Scripted","props":{"actions":["ok"],"tag":"long"},"queue":"`+queue+`"}`)

		var runs atomic.Int64
		jobs := laraq.NewJobs()
		testkit.Register(jobs, `App\Jobs\Scripted`, func(ctx context.Context, cmd *testkit.ScriptedJob, job *laraq.JobInfo) error {
			runs.Add(1)
			select {
			case <-time.After(9 * time.Second):
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		conn := &laraq.Connection{Client: client, Prefix: prefix, RetryAfter: 3 * time.Second, Release: testkit.PeerRelease(t, major)}
		// A beat more often than retry_after/3 leaves room for a loaded test machine.
		cfg := laraq.WorkerConfig{Queues: []string{queue}, Timeout: 30 * time.Second, ReservationHeartbeat: 500 * time.Millisecond}
		if !heartbeat {
			cfg.ReservationHeartbeat = -1
		}
		g := testkit.StartGoWorker(t, conn, jobs, cfg)
		testkit.WaitFor(t, 10*time.Second, "the Go worker to take the job", func() bool { return g.Count(laraq.EventProcessing) == 1 })
		fleet := startFleet(t, php, 2, "--queue="+queue, "--sleep=0.2", "--tries=1")
		testkit.WaitFor(t, 30*time.Second, "the Go handler to finish", func() bool { return g.Count(laraq.EventProcessed) == 1 })
		time.Sleep(time.Second) // the fleet keeps polling: a job wrongly back in the queue is taken now
		fleet.stop()
		g.Stop(t)
		for _, suffix := range []string{"", ":reserved", ":delayed"} {
			key := prefix + "queues:" + queue + suffix
			n, err := client.Exists(ctx, key).Result()
			if err != nil {
				t.Fatal(err)
			}
			left += n
		}
		t.Logf("PHP fleet output:\n%s", fleet.output())
		return runs.Load(), len(testenv.ReadRecords(t, record)), left
	}

	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		goRuns, phpRuns, left := run(t, major, true)
		if goRuns != 1 || phpRuns != 0 || left != 0 {
			t.Errorf("with the heartbeat: Go ran the job %d times, PHP %d times, %d queue keys left; want 1, 0, 0", goRuns, phpRuns, left)
		}
	})
	t.Run("without the heartbeat", func(t *testing.T) {
		t.Parallel()
		major := testenv.Majors[len(testenv.Majors)-1]
		testenv.NeedPeer(t, major)
		goRuns, phpRuns, _ := run(t, major, false)
		if goRuns != 1 || phpRuns != 1 {
			t.Errorf("without the heartbeat: Go ran the job %d times, PHP %d times; want 1 and 1 (the job run twice)", goRuns, phpRuns)
		}
	})
}
