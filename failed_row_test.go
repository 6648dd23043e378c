package laraq_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/payload"
)

// TestFailedJobThatCameBackIsNotRunAgain: a worker writes a job's failed row before it
// deletes the job; killed in between, the job comes back after retry_after. The next
// worker finds the row of the redelivered job (attempt > 1) and deletes the job without
// running it (PHP, which deletes first, never runs it again). A job pushed again by
// queue:retry (its uuid, attempts 0) runs even while its old row is still there.
func TestFailedJobThatCameBackIsNotRunAgain(t *testing.T) {
	e := testkit.NewEnv(t)
	ctx := context.Background()
	store := sqliteFailedStore(t)

	failedJob := func(uuid string, attempts int) []byte {
		p := testkit.Job(t, testkit.SendInvoice{InvoiceID: 1}, func(j *payload.ObjectJob) { j.UUID = uuid })
		return bytes.Replace(p, []byte(`"attempts":0`), []byte(fmt.Sprintf(`"attempts":%d`, attempts)), 1)
	}
	// The first worker failed came-back on attempt 1 and wrote its row, then died.
	if _, err := store.Log(ctx, "redis", "default", failedJob("came-back", 0), "RuntimeException: boom in /app/Job.php:1"); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Log(ctx, "redis", "default", failedJob("retried", 0), "RuntimeException: boom in /app/Job.php:1"); err != nil {
		t.Fatal(err)
	}
	e.Push("default", failedJob("came-back", 1), failedJob("retried", 0))

	var ran atomic.Int32
	reg := laraq.NewJobs()
	laraq.Handle(reg, func(ctx context.Context, j *laraq.Job[testkit.SendInvoice]) error {
		if j.UUID != "retried" {
			t.Errorf("ran %s", j.UUID)
		}
		ran.Add(1)
		return nil
	})
	ev := &events{}
	cfg := e.Config(reg)
	cfg.Failed, cfg.StopWhenEmpty, cfg.OnEvent = store, true, ev.add
	if err := e.RunToEnd(e.Consumer(cfg)); !errors.Is(err, laraq.ErrQueueEmpty) {
		t.Fatal(err)
	}
	if ran.Load() != 1 {
		t.Errorf("handler ran %d times, want once (the retried job)", ran.Load())
	}
	if n := ev.count(laraq.EventFailed); n != 1 {
		t.Errorf("%d failed events, want 1 (the job that came back)", n)
	}
	rows, err := store.All(ctx)
	if err != nil || len(rows) != 2 {
		t.Fatalf("rows %d %v, want the two rows only", len(rows), err)
	}
	if n, _ := e.Client.ZCard(ctx, e.Prefix+"queues:default:reserved").Result(); n != 0 {
		t.Errorf("%d jobs left reserved", n)
	}
	if n, _ := e.Client.LLen(ctx, e.Prefix+"queues:default").Result(); n != 0 {
		t.Errorf("%d jobs left ready", n)
	}
}

// lostReplyStore is a failed store whose first Log writes the row and then reports the
// connection lost, as a database that goes away between the insert and its answer.
type lostReplyStore struct {
	failed.Store
	logs atomic.Int32
}

func (s *lostReplyStore) Log(ctx context.Context, connection, queue string, payload []byte, exception string) (string, error) {
	id, err := s.Store.Log(ctx, connection, queue, payload, exception)
	if s.logs.Add(1) == 1 && err == nil {
		return "", errors.New("invalid connection")
	}
	return id, err
}

// TestFailedRowWrittenOnceWhenItsAnswerIsLost: the write of a failed row that errs is
// tried again, but not when the row is there (the insert landed, its answer did not):
// one row per failure, as the chaos suite's faileddb-down requires.
func TestFailedRowWrittenOnceWhenItsAnswerIsLost(t *testing.T) {
	e := testkit.NewEnv(t)
	ctx := context.Background()
	real := sqliteFailedStore(t)
	store := &lostReplyStore{Store: real}
	e.Push("default", testkit.Job(t, testkit.SendInvoice{InvoiceID: 1}, nil))
	reg := laraq.NewJobs()
	laraq.Handle(reg, func(ctx context.Context, j *laraq.Job[testkit.SendInvoice]) error {
		return laraq.Fail(errors.New("boom"))
	})
	cfg := e.Config(reg)
	cfg.Failed, cfg.StopWhenEmpty = store, true
	if err := e.RunToEnd(e.Consumer(cfg)); !errors.Is(err, laraq.ErrQueueEmpty) {
		t.Fatal(err)
	}
	rows, err := real.All(ctx)
	if err != nil || len(rows) != 1 {
		t.Fatalf("%d failed rows (%v), want 1", len(rows), err)
	}
	if n := store.logs.Load(); n != 1 {
		t.Errorf("Log called %d times, want 1 (the retry found the row)", n)
	}
	if n, _ := e.Client.ZCard(ctx, e.Prefix+"queues:default:reserved").Result(); n != 0 {
		t.Errorf("%d jobs left reserved", n)
	}
}

// sqliteFailedStore is a failed-job store on a new SQLite file, closed at the end of t.
func sqliteFailedStore(t *testing.T) failed.Store {
	t.Helper()
	store, err := database.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "failed.sqlite"),
		database.Options{Logger: testkit.QuietLogger(t), CreateTable: database.CreateIfMissing})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	return store
}
