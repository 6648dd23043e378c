package peers

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestPeerRoundTrip: on every release, dispatch.php queues a job, work.php runs it like
// queue:work (the job records what it got) and leaves no key behind; a job that throws
// with tries 1 ends as a row of that release's failed_jobs table, read back through
// failed_op.php; queue_op.php and ops_cache.php write the restart and pause signals
// through the release's real cache store.
func TestPeerRoundTrip(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		ctx := context.Background()
		client := srv.Client(t, 0)
		prefix := testenv.Prefix(t)
		record := filepath.Join(t.TempDir(), "record.jsonl")
		failedDB := testenv.SQLite(t)
		php := testenv.PHPEnv{Major: major, Redis: srv, Prefix: prefix, Record: record, FailedDB: failedDB}

		// A job runs once, from the bytes dispatch.php reported, and is gone.
		d := php.Dispatch(t, nil, `{"class":"App\\Jobs\\PlainJob","props":{"name":"round trip","count":7}}`)[0]
		if d.Queue != "default" || d.ID == "" || !strings.Contains(d.Payload, `"commandName":"App\\Jobs\\PlainJob"`) {
			t.Fatalf("dispatched %+v", d)
		}
		if got := client.LRange(ctx, prefix+"queues:default", 0, -1).Val(); !slices.Equal(got, []string{d.Payload}) {
			t.Fatalf("queues:default holds %q, want the dispatched payload", got)
		}
		php.Run(t, nil, "work.php", "--stop-when-empty", "--sleep=0")
		recs := testenv.ReadRecords(t, record)
		if len(recs) != 1 || recs[0].Class != `App\Jobs\PlainJob` || recs[0].Raw != d.Payload ||
			recs[0].Attempts != 1 || recs[0].ID != d.ID || recs[0].Queue != "default" {
			t.Fatalf("records %+v, want one run of the dispatched payload (id %s)", recs, d.ID)
		}
		if keys, _ := testenv.Keys(ctx, client, prefix); len(keys) != 0 {
			t.Errorf("keys left after the run: %v", keys)
		}

		// A job that throws, with tries 1, fails into failed_jobs.
		php.Run(t, nil, "failed_op.php", "migrate")
		f := php.Dispatch(t, nil, `{"class":"App\\Jobs\\Scripted","props":{"actions":["throw:peer boom"],"tag":"fails"}}`)[0]
		php.Run(t, nil, "work.php", "--stop-when-empty", "--sleep=0", "--tries=1")
		var rows []struct {
			Keys       []string `json:"keys"`
			ID         any      `json:"id"` // all() hands the uuid out as the id (8.x+)
			Connection string   `json:"connection"`
			Queue      string   `json:"queue"`
			Payload    string   `json:"payload_b64"`
			Exception  string   `json:"exception_b64"`
		}
		if err := json.Unmarshal(php.Run(t, nil, "failed_op.php", "list"), &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Fatalf("failed_jobs has %d rows, want 1", len(rows))
		}
		payload, _ := base64.StdEncoding.DecodeString(rows[0].Payload)
		exception, _ := base64.StdEncoding.DecodeString(rows[0].Exception)
		var env struct{ UUID string }
		_ = json.Unmarshal([]byte(f.Payload), &env)
		var wantID any = env.UUID
		if !testenv.DatabaseUUIDs.Has(major) {
			wantID = float64(1) // 5.8-7.x's database provider: the table's own id, no uuid
		}
		if string(payload) != f.Payload || rows[0].ID != wantID || rows[0].Connection != "redis" || rows[0].Queue != "default" ||
			!strings.Contains(string(exception), "RuntimeException: peer boom") {
			t.Errorf("failed row %+v (payload %.80s, exception %.80s), want the dispatched payload, uuid %s, exception peer boom",
				rows[0], payload, exception, env.UUID)
		}
		// DatabaseUuidFailedJobProvider::all() replaces the id column by the uuid; the
		// legacy table has no uuid column to begin with.
		wantCols := []string{"id", "connection", "queue", "payload", "exception", "failed_at"}
		if !slices.Equal(rows[0].Keys, wantCols) {
			t.Errorf("failed_jobs columns %v, want %v", rows[0].Keys, wantCols)
		}
		recs = testenv.ReadRecords(t, record)
		if last := recs[len(recs)-1]; last.Event != "failed" || last.Fields["message"] != "peer boom" {
			t.Errorf("the job's failed() did not run: %+v", last.Fields)
		}
		if keys, _ := testenv.Keys(ctx, client, prefix); len(keys) != 0 {
			t.Errorf("keys left after the failure: %v", keys)
		}

		// queue:restart through the release's cache store: the key the worker reads.
		cache := srv.Client(t, 1)
		php.Run(t, nil, "queue_op.php", "--now=1767225600", "restart")
		var got struct {
			Value    any    `json:"value"`
			RedisKey string `json:"redis_key"`
		}
		if err := json.Unmarshal(php.Run(t, nil, "ops_cache.php", "get", "illuminate:queue:restart"), &got); err != nil {
			t.Fatal(err)
		}
		cachePrefix := testenv.Peer(t, major).CachePrefix
		if want := prefix + cachePrefix + "illuminate:queue:restart"; got.RedisKey != want || fmt.Sprint(got.Value) != "1767225600" {
			t.Errorf("restart key %q = %v, want %q = 1767225600", got.RedisKey, got.Value, want)
		}
		if n := cache.Exists(ctx, got.RedisKey).Val(); n != 1 {
			t.Errorf("%s not in the cache database", got.RedisKey)
		}
		php.Run(t, nil, "queue_op.php", "--queue=emails", "pause", "redis")
		if n := cache.Exists(ctx, prefix+cachePrefix+"illuminate:queue:paused:redis:emails").Val(); n != 1 {
			keys, _ := testenv.Keys(ctx, cache, prefix)
			t.Errorf("pause key missing; cache keys %v", keys)
		}
		php.Run(t, nil, "queue_op.php", "--queue=emails", "resume", "redis")
		if keys, _ := testenv.Keys(ctx, cache, prefix+cachePrefix+"illuminate:queue:paused"); len(keys) != 0 {
			t.Errorf("resume left %v", keys)
		}
		cache.Del(ctx, got.RedisKey)
	})
}

// TestEveryShapeRunsOnItsRelease: each release's PHP worker runs every payload shape
// capture/shapes.json captures from it (listeners, notifications, mail and broadcasts
// included) and empties every queue; the missing model is deleted without running
// (deleteWhenMissingModels) or fails into failed_jobs (without it).
func TestEveryShapeRunsOnItsRelease(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		ctx := context.Background()
		client := srv.Client(t, 0)
		prefix := testenv.Prefix(t)
		record := filepath.Join(t.TempDir(), "record.jsonl")
		php := testenv.PHPEnv{Major: major, Redis: srv, Prefix: prefix, Record: record, FailedDB: testenv.SQLite(t)}
		php.Run(t, nil, "failed_op.php", "migrate")
		want := map[string]int{} // records expected per shape
		var requests []string
		var shapes []string
		for _, s := range testenv.CaptureSpecs(t) {
			if !slices.Contains(s.Majors, major) {
				continue
			}
			n := 1
			switch s.Shape {
			case "bus-chain", "chain":
				n = 3
			case "batch":
				n = 2
			case "missing-models", "missing-kept":
				n = 0
			}
			want[s.Shape] = n
			requests = append(requests, string(compact(t, s.Request)))
			shapes = append(shapes, s.Shape)
		}
		php.Dispatch(t, nil, requests...)
		// A minute ahead, so the delayed shape (delay 10) is due.
		later := "--now=" + strconv.FormatInt(time.Now().Unix()+60, 10)
		php.Run(t, nil, "work.php", "--stop-when-empty", "--sleep=0", "--tries=1", "--queue=default,emails,listeners", later)
		recs := testenv.ReadRecords(t, record)
		handled := 0
		for _, r := range recs {
			if r.Event == "handle" {
				handled++
			}
		}
		total := 0
		for _, n := range want {
			total += n
		}
		if handled != total {
			t.Errorf("%d handle records for %d shapes %v, want %d", handled, len(shapes), shapes, total)
			for _, r := range recs {
				t.Logf("%s %s %s", r.Kind, r.Event, r.Class)
			}
		}
		var rows []struct {
			Payload string `json:"payload_b64"`
		}
		if err := json.Unmarshal(php.Run(t, nil, "failed_op.php", "list"), &rows); err != nil {
			t.Fatal(err)
		}
		if len(rows) != 1 {
			t.Errorf("failed_jobs has %d rows, want 1 (the kept missing model)", len(rows))
		} else if p, _ := base64.StdEncoding.DecodeString(rows[0].Payload); !strings.Contains(string(p), `KeptMissingModelJob`) {
			t.Errorf("failed row is %.120s, want the KeptMissingModelJob", p)
		}
		keys, _ := testenv.Keys(ctx, client, prefix)
		if len(keys) != 0 {
			t.Errorf("keys left: %v", keys)
		}
	})
}

func compact(t *testing.T, raw []byte) []byte {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
