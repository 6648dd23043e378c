package interop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/bus"
	busdb "github.com/laraq/laraq/bus/database"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// batchedJob is App\Jobs\Matrix\BatchedJob (use Batchable): n, and Batchable's batchId.
// It opts into SkipIfBatchCancelled.
type batchedJob struct {
	N       any     `php:"n"`
	BatchID *string `php:"batchId"`
	laraq.Queueable
}

func (batchedJob) PHPClass() string      { return `App\Jobs\Matrix\BatchedJob` }
func (batchedJob) SkipIfBatchCancelled() {}

// phpBatch is what batch_op.php reads back through the release's BatchRepository.
type phpBatch struct {
	Found          bool     `json:"found"`
	TotalJobs      int      `json:"totalJobs"`
	PendingJobs    int      `json:"pendingJobs"`
	FailedJobs     int      `json:"failedJobs"`
	FailedJobIDs   []string `json:"failedJobIds"`
	ProcessedJobs  int      `json:"processedJobs"`
	Cancelled      bool     `json:"cancelled"`
	Finished       bool     `json:"finished"`
	AllowsFailures bool     `json:"allowsFailures"`
}

func findBatch(t testing.TB, php testenv.PHPEnv, id string) phpBatch {
	t.Helper()
	var b phpBatch
	if err := json.Unmarshal(php.Run(t, nil, "batch_op.php", "find", id), &b); err != nil {
		t.Fatal(err)
	}
	return b
}

// batchOf is the batch id and uuid of a pushed batch job.
func batchOf(t testing.TB, raw string) (batchID, uuid string) {
	t.Helper()
	env, err := payload.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	cmd, err := phpser.DecodeString(env.Command)
	if err != nil {
		t.Fatal(err)
	}
	v, ok := cmd.Prop("batchId")
	if !ok || v.Kind() != phpser.KindString {
		t.Fatalf("no batchId in %s", env.Command)
	}
	if env.BatchID != nil && *env.BatchID != v.Str() {
		t.Fatalf("data.batchId %q, batchId property %q", *env.BatchID, v.Str())
	}
	return v.Str(), env.UUID
}

// TestBatchesAgainstPHP: PHP's Bus::batch() queues jobs, a Go worker runs them, and the
// release's own BatchRepository (Bus::findBatch) reads the job_batches row Go updated
// as PHP's worker leaves it: a batch whose jobs all succeed is finished, and finished the
// same way when PHP's worker runs it; a failure is recorded (uuid in failed_job_ids) and
// keeps a batch that allows failures open; the first failure of one that does not
// cancels it, and a job of the cancelled batch that opts into SkipIfBatchCancelled is not
// run but counted done. On SQLite for every release, on MariaDB and PostgreSQL for one.
func TestBatchesAgainstPHP(t *testing.T) {
	t.Parallel()
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		testenv.Since(t, major, testenv.Batches)
		runBatches(t, srv, major, testenv.SQLite(t))
	})
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"mariadb", testenv.MariaDB}, {"postgres", testenv.Postgres}} {
		t.Run(db.name, func(t *testing.T) {
			major := testenv.Majors[len(testenv.Majors)-1]
			testenv.NeedPeer(t, major)
			runBatches(t, srv, major, db.dsn(t))
		})
	}
}

func runBatches(t *testing.T, srv *testenv.Redis, major int, dsn string) {
	ctx := context.Background()
	prefix := testenv.Prefix(t)
	record := testkit.RecordFile(t)
	php := testenv.PHPEnv{Major: major, Redis: srv, Prefix: prefix, Record: record, FailedDB: dsn}
	q := "b" + testenv.RandomName(4)
	batch := func(queue string, allowFailures bool, ns ...string) []string {
		var jobs []string
		for _, n := range ns {
			jobs = append(jobs, `{"class":"App\\Jobs\\Matrix\\BatchedJob","props":{"n":`+n+`}}`)
		}
		req := fmt.Sprintf(`{"batch":[%s],"name":"go %s","queue":%q,"allow_failures":%v}`, join(jobs), queue, queue, allowFailures)
		d := php.Dispatch(t, nil, req)[0]
		var out []string
		for _, p := range d.Pushed {
			out = append(out, p.Payload)
		}
		if len(out) != len(ns) {
			t.Fatalf("batch pushed %d jobs, want %d", len(out), len(ns))
		}
		return out
	}
	all := batch(q+"a", false, "1", "2", "3")
	allowed := batch(q+"b", true, "1", `"fail"`)
	strict := batch(q+"c", false, `"fail"`, "2")
	viaPHP := batch(q+"p", false, "1", "2", "3")

	repo, err := busdb.Open(ctx, dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	defer repo.Close()
	var mu sync.Mutex
	var ran []string
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[batchedJob]) error {
		mu.Lock()
		ran = append(ran, job.UUID)
		mu.Unlock()
		if job.BatchID == "" || job.Command.BatchID == nil || *job.Command.BatchID != job.BatchID {
			return laraq.Fail(fmt.Errorf("JobInfo.BatchID %q, command batchId %v", job.BatchID, job.Command.BatchID))
		}
		if b, err := job.Batch(ctx); err != nil || b == nil || b.ID != job.BatchID {
			return laraq.Fail(fmt.Errorf("job.Batch: %+v %v", b, err))
		}
		if job.Command.N == "fail" {
			return errors.New("batched job fails")
		}
		return nil
	})
	conn := peerConnection(t, major, srv, prefix)
	conn.Batches = repo
	conn.Failed = testkit.LogStore{FailedLogger: &testkit.MemStore{}}
	g := testkit.StartGoWorker(t, conn, jobs, laraq.WorkerConfig{Queues: []string{q + "a", q + "b", q + "c"}})
	testkit.WaitFor(t, 20*time.Second, "the Go worker to take 7 jobs", func() bool {
		return g.Count(laraq.EventProcessed)+g.Count(laraq.EventFailed) >= 7
	})
	g.Stop(t)
	php.Run(t, nil, "work.php", "--stop-when-empty", "--sleep=0", "--queue="+q+"p")

	id, _ := batchOf(t, all[0])
	got := findBatch(t, php, id)
	idPHP, _ := batchOf(t, viaPHP[0])
	want := findBatch(t, php, idPHP)
	if want.PendingJobs != 0 || !want.Finished || want.Cancelled || want.ProcessedJobs != 3 {
		t.Fatalf("PHP's own worker left the batch %+v, want finished", want)
	}
	if !got.Found || !equalBatch(got, want) {
		t.Errorf("all succeed: Go left %+v, PHP leaves %+v", got, want)
	}

	id, _ = batchOf(t, allowed[0])
	_, failedUUID := batchOf(t, allowed[1])
	got = findBatch(t, php, id)
	wantB := phpBatch{Found: true, TotalJobs: 2, PendingJobs: 1, FailedJobs: 1, FailedJobIDs: []string{failedUUID}, ProcessedJobs: 1, AllowsFailures: true}
	if !equalBatch(got, wantB) {
		t.Errorf("allowed failure: %+v, want %+v", got, wantB)
	}

	id, _ = batchOf(t, strict[0])
	_, firstUUID := batchOf(t, strict[0])
	_, skippedUUID := batchOf(t, strict[1])
	got = findBatch(t, php, id)
	wantC := phpBatch{Found: true, TotalJobs: 2, PendingJobs: 1, FailedJobs: 1, FailedJobIDs: []string{firstUUID}, ProcessedJobs: 1, Cancelled: true, Finished: true}
	if !equalBatch(got, wantC) {
		t.Errorf("first failure cancels: %+v, want %+v", got, wantC)
	}
	if slices.Contains(ran, skippedUUID) {
		t.Errorf("the job of the cancelled batch ran; SkipIfBatchCancelled should skip it")
	}
	if b, err := repo.Find(ctx, id); err != nil || !b.Cancelled() || b.Options.AllowFailures {
		t.Errorf("bus/database reads %+v %v", b, err)
	}
	if _, err := repo.Find(ctx, "no-such-batch"); !errors.Is(err, bus.ErrNoBatch) {
		t.Errorf("a missing batch: %v", err)
	}
}

func equalBatch(a, b phpBatch) bool {
	return a.Found == b.Found && a.TotalJobs == b.TotalJobs && a.PendingJobs == b.PendingJobs && a.FailedJobs == b.FailedJobs &&
		slices.Equal(a.FailedJobIDs, b.FailedJobIDs) && a.ProcessedJobs == b.ProcessedJobs && a.Cancelled == b.Cancelled &&
		a.Finished == b.Finished && a.AllowsFailures == b.AllowsFailures
}

func join(items []string) string {
	out := ""
	for i, s := range items {
		if i > 0 {
			out += ","
		}
		out += s
	}
	return out
}
