package matrix

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// TestMatrixGoStringJobsPHPRuns: on every major, a string job Go dispatches
// (DispatchString, at once and with a delay) is byte for byte what the release's
// Queue::push / Queue::later writes for the same data (uuid and id aside: none before
// 7.x; the 5.8–7.x delay key, \u escapes before 8.82, 12.11's createdAt and delay),
// and the release's Worker runs it with that data.
func TestMatrixGoStringJobsPHPRuns(t *testing.T) {
	srv := testenv.RedisServer(t)
	data := json.RawMessage(`{"n":[1,2],"u":"Grüße ☃","empty":[],"map":{"k":null}}`)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		ctx := context.Background()
		rel := testkit.PeerRelease(t, major)
		phpPrefix, goPrefix := testenv.Prefix(t), testenv.Prefix(t)
		q := "s" + testenv.RandomName(4)
		reqs := []string{
			fmt.Sprintf(`{"string_job":"App\\Jobs\\StringJobs@deletes","data":%s,"queue":%q}`, data, q),
			fmt.Sprintf(`{"string_job":"App\\Jobs\\StringJobs@deletes","data":%s,"queue":%q,"delay":5}`, data, q),
		}
		php := testenv.PHPEnv{Major: major, Redis: srv, Prefix: phpPrefix}.Dispatch(t, matrixArgs(major), reqs...)

		cfg := testkit.DispatchSetup{Prefix: goPrefix, Release: rel, Now: fixedClock(0)}
		d, err := testkit.NewDispatcher(srv.Client(t, 0), cfg)
		if err != nil {
			t.Fatal(err)
		}
		ids := map[string]bool{}
		for i, opts := range [][]laraq.DispatchOption{{laraq.OnQueue(q)}, {laraq.OnQueue(q), laraq.Delay(5 * time.Second)}} {
			id, err := d.DispatchString(ctx, `App\Jobs\StringJobs@deletes`, data, opts...)
			if err != nil {
				t.Fatal(err)
			}
			ids[id] = true
			got := goQueued(t, srv, goPrefix, q, id)
			testkit.SameExceptIDs(t, fmt.Sprintf("%s string job %d", rel, i), []byte(got), []byte(php[i].Payload))
			if hasUUID := strings.Contains(got, `"uuid":`); hasUUID != testenv.UUIDs.Has(major) {
				t.Errorf("%s: a uuid in the payload: %v, want %v", rel, hasUUID, testenv.UUIDs.Has(major))
			}
		}
		if t.Failed() {
			return
		}

		records := testkit.RecordFile(t)
		penv := testenv.PHPEnv{Major: major, Redis: srv, Prefix: goPrefix, Record: records}
		out := testkit.RunWorker(t, penv, 60*time.Second, "--queue="+q, "--stop-when-empty", "--sleep=0", fmt.Sprint("--now=", matrixNow.Add(time.Minute).Unix()))
		ran := 0
		for _, rec := range testkit.ReadRecords(t, records) {
			if rec.Kind != "string" || rec.ID == nil || !ids[*rec.ID] {
				continue
			}
			ran++
			b, _ := json.Marshal(rec.Data.ToAny())
			if want := `{"empty":[],"map":{"k":null},"n":[1,2],"u":"Grüße ☃"}`; string(b) != want || rec.Attempts != 1 {
				t.Errorf("%s ran %s with %s (attempt %d), want %s", rel, *rec.ID, b, rec.Attempts, want)
			}
		}
		if ran != 2 || strings.Contains(out, "Failed:") {
			t.Errorf("%s's worker ran %d of Go's 2 string jobs:\n%s", rel, ran, out)
		}
		if keys, _ := testenv.Keys(ctx, srv.Client(t, 0), goPrefix); len(keys) != 0 {
			t.Errorf("left in Redis: %v", keys)
		}
	})
}

// goQueued finds the payload with this id in queues:q or queues:q:delayed.
func goQueued(t *testing.T, srv *testenv.Redis, prefix, q, id string) string {
	t.Helper()
	c := srv.Client(t, 0)
	ctx := context.Background()
	all := c.LRange(ctx, prefix+"queues:"+q, 0, -1).Val()
	all = append(all, c.ZRange(ctx, prefix+"queues:"+q+":delayed", 0, -1).Val()...)
	for _, p := range all {
		if strings.Contains(p, `"id":"`+id+`"`) {
			return p
		}
	}
	t.Fatalf("job %s not in queues:%s", id, q)
	return ""
}
