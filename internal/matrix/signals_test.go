package matrix

import (
	"context"
	"errors"
	"os/exec"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// TestSignalsMatrix: on every release, queue:restart, queue:pause/resume (12.40+) and
// pauseAll/resumeAll (13.25+) written through that release's real cache store (the
// skeleton's cache prefix, RedisStore's key scheme) reach a laraq worker told that
// release, and the keys laraq's Admin writes reach that release's own Worker. Releases
// before 12.40 (13.25) have no pause (pause-all): their PHP workers ignore the keys,
// while laraq workers honour them on every release, as documented.
func TestSignalsMatrix(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		ctx := context.Background()
		peer := testenv.Peer(t, major)
		rel := testkit.PeerInfoRelease(t, peer)
		prefix := testenv.Prefix(t)
		client, cache := srv.Client(t, 0), srv.Client(t, 1)
		records := testkit.RecordFile(t)
		penv := testenv.PHPEnv{Major: major, Redis: srv, Prefix: prefix, Record: records}
		conn := &laraq.Connection{Client: client, Prefix: prefix, Release: rel, Cache: testkit.PeerCache(cache, peer)}
		admin, err := laraq.NewAdmin(conn)
		if err != nil {
			t.Fatal(err)
		}
		ran := make(chan string, 16)
		jobs := laraq.NewJobs()
		testkit.Register(jobs, `App\Jobs\Scripted`, func(ctx context.Context, cmd *testkit.ScriptedJob, job *laraq.JobInfo) error {
			ran <- job.UUID
			return nil
		})
		worker := func(stopWhenEmpty bool) *laraq.Worker {
			w, err := laraq.NewWorker(conn, jobs, laraq.WorkerConfig{StopWhenEmpty: stopWhenEmpty, Sleep: 10 * time.Millisecond,
				SignalInterval: 10 * time.Millisecond, Logger: testkit.QuietLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			return w
		}
		dispatch := func(tag string) {
			t.Helper()
			penv.Dispatch(t, nil, `{"class":"App\\Jobs\\Scripted","props":{"actions":["ok"],"tag":`+testkit.JSONString(tag)+`}}`)
		}
		queued := func() int64 {
			t.Helper()
			size, err := admin.Size(ctx, "default")
			if err != nil {
				t.Fatal(err)
			}
			return size.Ready + size.Delayed + size.Reserved
		}
		// goDrains runs a laraq worker until the queue is empty and reports whether it ran a job.
		goDrains := func() bool {
			t.Helper()
			if err := worker(true).Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
				t.Fatalf("laraq worker: %v", err)
			}
			select {
			case <-ran:
				return true
			default:
				return false
			}
		}
		// phpDrains runs the release's Worker until the queue is empty and reports whether it
		// ran a job.
		phpDrains := func() bool {
			t.Helper()
			before := len(testenv.ReadRecords(t, records))
			testkit.RunWorker(t, penv, 30*time.Second, "--stop-when-empty", "--sleep=0")
			return len(testenv.ReadRecords(t, records)) > before
		}

		// php artisan queue:restart stops a running laraq worker. (Jobs are dispatched
		// before a worker starts: dispatch.php reads its payload back from the queue.)
		dispatch("before restart")
		w := worker(false)
		done := make(chan error, 1)
		go func() { done <- w.Run(ctx) }()
		select {
		case <-ran: // the worker is up and has read the restart key's starting value
		case <-time.After(10 * time.Second):
			t.Fatal("laraq worker did not run the job")
		}
		penv.Run(t, nil, "queue_op.php", "restart")
		select {
		case err := <-done:
			if !errors.Is(err, laraq.ErrRestart) {
				t.Fatalf("laraq worker after queue:restart: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Laravel %s's queue:restart did not stop the laraq worker (key %s)", peer.Tag, conn.CacheScheme().RestartKey())
		}

		// Admin.Restart stops the release's own daemon worker.
		cache.Del(ctx, conn.CacheScheme().RestartKey())
		dispatch("daemon up")
		daemon := startPHPDaemon(t, penv)
		testkit.Eventually(t, 20*time.Second, "the PHP daemon to run a job", func() bool { return len(testenv.ReadRecords(t, records)) >= 1 })
		if err := admin.Restart(ctx); err != nil {
			t.Fatal(err)
		}
		if err := daemon.wait(20 * time.Second); err != nil {
			t.Fatalf("Laravel %s's worker after laraq's Admin.Restart: %v\n%s", peer.Tag, err, daemon.out.String())
		}

		// php artisan queue:pause (12.40+; the same key written through the store before).
		penv.Run(t, nil, "queue_op.php", "pause", "redis")
		dispatch("paused by PHP")
		if goDrains() || queued() != 1 {
			t.Fatalf("Laravel %s: the laraq worker took a job from a queue paused by PHP", peer.Tag)
		}
		penv.Run(t, nil, "queue_op.php", "resume", "redis")
		if !goDrains() || queued() != 0 {
			t.Fatalf("Laravel %s: the laraq worker did not run the job after PHP's resume", peer.Tag)
		}

		// Admin.Pause: the release's Worker skips the queue from 12.40 on, ignores the key before.
		if err := admin.Pause(ctx, "", "default"); err != nil {
			t.Fatal(err)
		}
		dispatch("paused by laraq")
		if ran, want := phpDrains(), !rel.AtLeast(12, 40, 0); ran != want {
			t.Fatalf("Laravel %s ran a job on a queue laraq paused: %v, want %v", peer.Tag, ran, want)
		}
		if err := admin.Resume(ctx, "", "default"); err != nil {
			t.Fatal(err)
		}
		if queued() == 1 && !phpDrains() {
			t.Fatalf("Laravel %s did not run the job after laraq's Resume", peer.Tag)
		}

		// pauseAll (13.25+) written by PHP pauses the laraq worker; laraq's PauseAll pauses
		// the release's Worker from 13.25 on.
		penv.Run(t, nil, "queue_op.php", "pause-all")
		dispatch("all paused by PHP")
		if goDrains() || queued() != 1 {
			t.Fatalf("Laravel %s: the laraq worker took a job while PHP paused all queues", peer.Tag)
		}
		penv.Run(t, nil, "queue_op.php", "resume-all")
		if !goDrains() {
			t.Fatalf("Laravel %s: the laraq worker did not run the job after PHP's resumeAll", peer.Tag)
		}
		if err := admin.PauseAll(ctx); err != nil {
			t.Fatal(err)
		}
		dispatch("all paused by laraq")
		if ran, want := phpDrains(), !rel.AtLeast(13, 25, 0); ran != want {
			t.Fatalf("Laravel %s ran a job while laraq paused all queues: %v, want %v", peer.Tag, ran, want)
		}
		if err := admin.ResumeAll(ctx); err != nil {
			t.Fatal(err)
		}
		if queued() == 1 && !phpDrains() {
			t.Fatalf("Laravel %s did not run the job after laraq's ResumeAll", peer.Tag)
		}
		if n := queued(); n != 0 {
			t.Fatalf("%d jobs left", n)
		}
	})
}

// phpDaemon is work.php running as `php artisan queue:work` does, in the background.
type phpDaemon struct {
	cmd  *exec.Cmd
	out  *testkit.SyncBuffer
	done chan error
}

func startPHPDaemon(t *testing.T, penv testenv.PHPEnv) *phpDaemon {
	t.Helper()
	d := &phpDaemon{cmd: penv.Command("work.php", "--sleep=0.1"), out: &testkit.SyncBuffer{}, done: make(chan error, 1)}
	d.cmd.Stdout, d.cmd.Stderr = d.out, d.out
	if err := d.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { d.done <- d.cmd.Wait() }()
	t.Cleanup(func() {
		select {
		case <-d.done:
		default:
			_ = d.cmd.Process.Kill()
			<-d.done
		}
	})
	return d
}

// wait waits for the daemon to exit and returns its error (nil: exit status 0).
func (d *phpDaemon) wait(timeout time.Duration) error {
	select {
	case err := <-d.done:
		d.done <- err
		return err
	case <-time.After(timeout):
		return errors.New("still running after " + timeout.String())
	}
}
