package interop

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
)

// phpFailedRow is one row of `failed_op.php list`: DatabaseUuidFailedJobProvider::all()
// reports the uuid as the row's id, 5.8–7.x's DatabaseFailedJobProvider the table's
// integer id.
type phpFailedRow struct {
	ID         any    `json:"id"`
	Connection string `json:"connection"`
	Queue      string `json:"queue"`
	Payload    string `json:"payload_b64"`
	Exception  string `json:"exception_b64"`
}

func phpFailedRows(t *testing.T, penv testenv.PHPEnv) []phpFailedRow {
	t.Helper()
	var rows []phpFailedRow
	if err := json.Unmarshal(penv.Run(t, nil, "failed_op.php", "list"), &rows); err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		for _, f := range []*string{&rows[i].Payload, &rows[i].Exception} {
			b, err := base64.StdEncoding.DecodeString(*f)
			if err != nil {
				t.Fatal(err)
			}
			*f = string(b)
		}
	}
	return rows
}

// sameUUID says whether a PHP record's uuid is the payload's: none (null) before 7.x.
func sameUUID(got *string, want string) bool {
	if want == "" {
		return got == nil
	}
	return got != nil && *got == want
}

// TestFailedByGoRetriedByLaravel: on every release, a job the Go worker fails is listed by
// that release's provider, its `php artisan queue:retry` pushes it again and its worker
// runs it. The table is the one the release's own queue:failed-table stub creates.
func TestFailedByGoRetriedByLaravel(t *testing.T) {
	testenv.ForEachMajor(t, testFailedByGoRetriedByLaravel)
}

func testFailedByGoRetriedByLaravel(t *testing.T, major int) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	s := testkit.NewSide(t, ctx, srv, "php", major) // table migrated by PHP, opened by Go
	records := testkit.RecordFile(t)
	penv := testenv.PHPEnv{Major: major, Redis: srv, Prefix: s.Prefix, FailedDB: s.DSN, Record: records}
	peer := testenv.Peer(t, major)
	d := testkit.PHPDispatch(t, penv, nil, `{"class":"App\\Jobs\\Scripted","props":{"actions":["ok"],"tag":"round trip"}}`)[0]

	reg := laraq.NewJobs()
	reg.HandleFunc(`App\Jobs\Scripted`, func(ctx context.Context, job *laraq.JobInfo) error {
		return laraq.Fail(failed.New("RuntimeException", "Go refuses", 0))
	})
	c, err := testkit.NewWorker(s.Queue, testkit.Setup{Prefix: s.Prefix, Registry: reg, Failed: s.Store, Release: testkit.PeerInfoRelease(t, peer),
		StopWhenEmpty: true, Sleep: -1, Cache: laraq.CacheStore{Disabled: true}, Logger: testkit.QuietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
		t.Fatal(err)
	}

	rows := phpFailedRows(t, penv)
	env, _ := payload.Parse([]byte(d.Payload))
	var wantID any = env.UUID
	if !testenv.DatabaseUUIDs.Has(major) {
		wantID = float64(1) // the first row of a table without uuid
	}
	if len(rows) != 1 || rows[0].ID != wantID || rows[0].Connection != "redis" || rows[0].Queue != "default" ||
		rows[0].Payload != d.Payload || !strings.HasPrefix(rows[0].Exception, "RuntimeException: Go refuses in ") {
		t.Fatalf("Laravel lists %+v\nwant the payload as dispatched: %s", rows, d.Payload)
	}
	out := penv.Run(t, nil, "failed_op.php", "artisan", "queue:retry", `{"id":["all"]}`)
	q, err := s.Queue.LRange(ctx, s.Prefix+"queues:default", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	want, err := payload.ResetForRetry([]byte(d.Payload))
	if err != nil {
		t.Fatal(err)
	}
	if len(q) != 1 || q[0] != string(want) {
		t.Fatalf("queue:retry pushed %q\npayload.ResetForRetry gives %s\n%s", q, want, out)
	}
	testkit.RunWorker(t, penv, 30*time.Second, "--max-jobs=1", "--stop-when-empty", "--sleep=0")
	recs := testkit.ReadRecords(t, records)
	if len(recs) != 1 || !sameUUID(recs[0].UUID, env.UUID) || recs[0].Attempts != 1 || recs[0].Action != "ok" {
		t.Fatalf("Laravel's worker ran %+v", recs)
	}
	if left, _ := testenv.Keys(ctx, s.Queue, s.Prefix); len(left) != 0 {
		t.Errorf("left in Redis: %v", left)
	}
	if rows := phpFailedRows(t, penv); len(rows) != 0 {
		t.Errorf("failed rows after the retry: %+v", rows)
	}
}

// TestFailedByLaravelRetriedByGo: on every release, a job that release's worker fails is
// found by Go's store, reset and pushed again as queue:retry would, and the Go worker
// runs it.
func TestFailedByLaravelRetriedByGo(t *testing.T) {
	testenv.ForEachMajor(t, testFailedByLaravelRetriedByGo)
}

func testFailedByLaravelRetriedByGo(t *testing.T, major int) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	s := testkit.NewSide(t, ctx, srv, "php", major)
	penv := testenv.PHPEnv{Major: major, Redis: srv, Prefix: s.Prefix, FailedDB: s.DSN, Record: testkit.RecordFile(t)}
	rel := testkit.PeerInfoRelease(t, testenv.Peer(t, major))
	d := testkit.PHPDispatch(t, penv, nil, `{"class":"App\\Jobs\\Scripted","props":{"actions":["fail:PHP refuses","ok"],"tries":3}}`)[0]
	out := testkit.RunWorker(t, penv, 30*time.Second, "--max-jobs=1", "--stop-when-empty", "--sleep=0")
	// $this->fail() inside handle() returns normally: JobFailed, then JobProcessed (the
	// Go worker emits EventFailed, then EventProcessed, likewise).
	if i, j := strings.Index(out, "Failed:"), strings.Index(out, "Processed:"); i < 0 || j < i {
		t.Errorf("Laravel's worker printed:\n%s", out)
	}

	recs, err := s.Store.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	env, _ := payload.Parse([]byte(d.Payload))
	wantUUID := env.UUID
	if !testenv.DatabaseUUIDs.Has(major) {
		wantUUID = "" // the table has no uuid column
	}
	if len(recs) != 1 || recs[0].UUID != wantUUID || recs[0].Queue != "default" || recs[0].Connection != "redis" ||
		!bytes.Equal(recs[0].Payload, []byte(d.Payload)) || !strings.HasPrefix(recs[0].Exception, "RuntimeException: PHP refuses in ") {
		t.Fatalf("Go reads %+v", recs)
	}
	retry, err := payload.ResetForRetry(recs[0].Payload)
	if err != nil {
		t.Fatal(err)
	}
	p, err := testkit.NewDispatcher(s.Queue, testkit.DispatchSetup{Prefix: s.Prefix, Release: rel})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.PushRaw(ctx, recs[0].Queue, retry); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Store.Forget(ctx, recs[0].ID); !ok || err != nil {
		t.Fatalf("forget: %v %v", ok, err)
	}

	var got []string
	reg := laraq.NewJobs()
	testkit.Register(reg, `App\Jobs\Scripted`, func(ctx context.Context, cmd *testkit.ScriptedJob, job *laraq.JobInfo) error {
		got = append(got, job.UUID, cmd.Actions[0])
		if job.Attempt != 1 {
			t.Errorf("attempt %d after the retry", job.Attempt)
		}
		return nil
	})
	c, err := testkit.NewWorker(s.Queue, testkit.Setup{Prefix: s.Prefix, Registry: reg, Failed: s.Store, Release: rel,
		StopWhenEmpty: true, Sleep: -1, Cache: laraq.CacheStore{Disabled: true}, Logger: testkit.QuietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != env.UUID || got[1] != "fail:PHP refuses" {
		t.Fatalf("Go ran %q", got)
	}
	r, _ := rdb.New(s.Queue, rdb.Options{Prefix: s.Prefix})
	if ready, delayed, reserved, err := r.Sizes(ctx, "default"); ready+delayed+reserved != 0 || err != nil {
		t.Errorf("left: %d %d %d %v", ready, delayed, reserved, err)
	}
	if rows := phpFailedRows(t, penv); len(rows) != 0 {
		t.Errorf("Laravel still lists %+v", rows)
	}
}
