package database

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
)

// The app timezone of the interop tests: +05:45 with no DST, so a timezone mix-up of any
// size shows in the failed_at text.
const interopTZ = "Asia/Kathmandu"

func interopLocation(t *testing.T) *time.Location {
	loc, err := time.LoadLocation(interopTZ)
	if err != nil {
		t.Fatalf("tzdata: %v", err)
	}
	return loc
}

// goException is a Go failure rendered the way Log callers will render it.
func goException(i int) string {
	err := fmt.Errorf("charge %d: %w", i, errors.New("card declined — ünïcødé ✓ 😀"))
	return failed.Capture(err, 0).String()
}

func TestGoRowsReadByLaravel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		loc := interopLocation(t)
		php := newPHP(t, b, map[string]string{"LARAQ_APP_TIMEZONE": interopTZ})
		opts := Options{Location: loc}
		// The Laravel application's migration owns the table.
		php.run(t, nil, "migrate")
		clock := time.Date(2024, 3, 31, 1, 30, 0, 0, time.UTC)
		opts.Now = func() time.Time { return clock }
		s := mustOpen(t, b.dsn, opts)

		var ids, exceptions []string
		var failedAts []string
		for i, p := range samplePayloads {
			exc := goException(i)
			id, err := s.Log(ctx, "redis", fmt.Sprintf("q%d", i%2), []byte(p), exc)
			if err != nil {
				t.Fatalf("Log #%d: %v", i, err)
			}
			want, _ := payloadUUID([]byte(p))
			if id != want {
				t.Fatalf("Log #%d returned %q, want the payload uuid %q", i, id, want)
			}
			ids = append(ids, id)
			exceptions = append(exceptions, exc)
			failedAts = append(failedAts, clock.In(loc).Format(DateFormat))
			clock = clock.Add(61 * time.Minute)
		}

		rows := php.list(t)
		if len(rows) != len(samplePayloads) {
			t.Fatalf("PHP all() returned %d rows, want %d", len(rows), len(samplePayloads))
		}
		for j, row := range rows {
			i := len(samplePayloads) - 1 - j // newest first
			wantKeys := []string{"id", "connection", "queue", "payload", "exception", "failed_at"}
			if !slices.Equal(row.Keys, wantKeys) {
				t.Errorf("row %d keys %v, want %v", j, row.Keys, wantKeys)
			}
			if got := anyText(row.ID); got != ids[i] || row.IDType != "string" {
				t.Errorf("row %d id %q (%s), want %q", j, got, row.IDType, ids[i])
			}
			if row.Connection != "redis" || row.Queue != fmt.Sprintf("q%d", i%2) {
				t.Errorf("row %d connection/queue %q/%q", j, row.Connection, row.Queue)
			}
			if !bytes.Equal(row.Payload, []byte(samplePayloads[i])) {
				t.Errorf("row %d payload differs:\n got %q\nwant %q", j, row.Payload, samplePayloads[i])
			}
			if string(row.Exception) != exceptions[i] {
				t.Errorf("row %d exception differs:\n got %q\nwant %q", j, row.Exception, exceptions[i])
			}
			if row.FailedAt != failedAts[i] {
				t.Errorf("row %d failed_at %q, want %q (app timezone %s)", j, row.FailedAt, failedAts[i], interopTZ)
			}
		}

		// find() by uuid gives the same record; an unknown uuid gives null.
		for i, id := range ids {
			row := php.find(t, id)
			if row == nil || anyText(row.ID) != id || !bytes.Equal(row.Payload, []byte(samplePayloads[i])) || row.FailedAt != failedAts[i] {
				t.Errorf("PHP find(%s) = %+v", id, row)
			}
		}
		if row := php.find(t, "00000000-0000-4000-8000-000000000000"); row != nil {
			t.Errorf("PHP find(unknown) = %+v, want null", row)
		}

		// Forget in one language, gone in the other.
		var deleted struct{ Deleted bool }
		decodeJSON(t, php.run(t, nil, "forget", ids[0]), &deleted)
		if !deleted.Deleted {
			t.Fatalf("PHP forget(%s) reported nothing deleted", ids[0])
		}
		if r, err := s.Find(ctx, ids[0]); err != nil || r != nil {
			t.Fatalf("Go Find after PHP forget = %+v, %v", r, err)
		}
		if ok, err := s.Forget(ctx, ids[1]); err != nil || !ok {
			t.Fatalf("Go Forget = %v, %v", ok, err)
		}
		if row := php.find(t, ids[1]); row != nil {
			t.Fatalf("PHP find after Go Forget = %+v", row)
		}
		php.artisan(t, "queue:flush", nil)
		if all, err := s.All(ctx); err != nil || len(all) != 0 {
			t.Fatalf("Go All after queue:flush = %d records, %v", len(all), err)
		}
	})
}

func TestLaravelRowsReadByGo(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		loc := interopLocation(t)
		php := newPHP(t, b, map[string]string{"LARAQ_APP_TIMEZONE": interopTZ})
		php.run(t, nil, "migrate")
		s := mustOpen(t, b.dsn, Options{Location: loc, CreateTable: CreateNever})

		var phpExceptions []string
		for i, p := range samplePayloads {
			exc := ""
			if i%2 == 1 {
				exc = goException(i) // an exact text through PHP's (string) cast
			}
			id, stored := php.log(t, "redis", fmt.Sprintf("q%d", i%3), []byte(p), exc)
			want, _ := payloadUUID([]byte(p))
			if id != want {
				t.Fatalf("PHP log returned %q, want %q", id, want)
			}
			if exc != "" && stored != exc {
				t.Fatalf("PHP changed the exception text: %q", stored)
			}
			if exc == "" && !strings.HasPrefix(stored, "RuntimeException: failed in PHP in ") {
				t.Fatalf("unexpected PHP exception text %q", stored)
			}
			phpExceptions = append(phpExceptions, stored)
		}
		rows := php.list(t)
		all, err := s.All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(all) != len(rows) || len(all) != len(samplePayloads) {
			t.Fatalf("Go All: %d records, PHP all(): %d, logged %d", len(all), len(rows), len(samplePayloads))
		}
		now := time.Now()
		for j, r := range all {
			row := rows[j]
			i := len(samplePayloads) - 1 - j
			if r.ID != anyText(row.ID) || r.UUID != r.ID || r.Connection != row.Connection || r.Queue != row.Queue {
				t.Errorf("record %d: Go %q/%q/%q/%q, PHP %v/%q/%q", j, r.ID, r.UUID, r.Connection, r.Queue, row.ID, row.Connection, row.Queue)
			}
			if !bytes.Equal(r.Payload, row.Payload) || !bytes.Equal(r.Payload, []byte(samplePayloads[i])) {
				t.Errorf("record %d payload:\n  Go %q\n PHP %q\nsent %q", j, r.Payload, row.Payload, samplePayloads[i])
			}
			if r.Exception != string(row.Exception) || r.Exception != phpExceptions[i] {
				t.Errorf("record %d exception:\n  Go %q\n PHP %q", j, r.Exception, row.Exception)
			}
			if got := r.FailedAt.Format(DateFormat); got != row.FailedAt {
				t.Errorf("record %d failed_at: Go %q, PHP %q", j, got, row.FailedAt)
			}
			if r.FailedAt.Location() != loc {
				t.Errorf("record %d failed_at location %v, want %v", j, r.FailedAt.Location(), loc)
			}
			// PHP wrote Date::now() in the app timezone; read back in the same zone it is
			// the real instant, give or take the test's run time.
			if d := now.Sub(r.FailedAt); d < -2*time.Second || d > 5*time.Minute {
				t.Errorf("record %d failed_at %v is %v away from now: timezone mix-up", j, r.FailedAt, d)
			}
			f, err := s.Find(ctx, r.ID)
			if err != nil || f == nil || !reflect.DeepEqual(*f, r) {
				t.Errorf("Find(%s) = %+v, %v; want %+v", r.ID, f, err, r)
			}
		}
		// queue:retry's id selection, computed by Go.
		var phpIDs, phpQ1 []string
		for _, row := range rows {
			phpIDs = append(phpIDs, anyText(row.ID))
			if row.Queue == "q1" {
				phpQ1 = append(phpQ1, anyText(row.ID))
			}
		}
		if got, err := s.Ids(ctx, ""); err != nil || !slices.Equal(got, phpIDs) {
			t.Errorf("Ids(\"\") = %v, %v; want %v", got, err, phpIDs)
		}
		if got, err := s.Ids(ctx, "q1"); err != nil || !slices.Equal(got, phpQ1) || len(got) == 0 {
			t.Errorf("Ids(q1) = %v, %v; want %v", got, err, phpQ1)
		}
	})
}

// Laravel's provider cannot record a payload without uuid (json_decode(...)['uuid'] is
// null and the NOT NULL uuid column refuses it); Go records it under a generated uuid that
// PHP can then find, retry and forget.
func TestPayloadWithoutUUIDInterop(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		php := newPHP(t, b, nil)
		php.run(t, nil, "migrate")
		legacy := []byte(`{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\Old","command":"O:12:\"App\\Jobs\\Old\":0:{}"},"id":"Qx1","attempts":1}`)

		body, _ := json.Marshal(map[string]any{"connection": "redis", "queue": "default", "payload_b64": legacy})
		cmd := php.env.Command("failed_op.php", "log")
		cmd.Stdin = bytes.NewReader(body)
		if out, err := cmd.CombinedOutput(); err == nil {
			t.Fatalf("PHP logged a payload without uuid; the documented difference is gone: %s", out)
		}

		s := mustOpen(t, b.dsn, Options{CreateTable: CreateNever})
		id, err := s.Log(ctx, "redis", "default", legacy, "Exception: x in f.php:1\nStack trace:\n#0 {main}")
		if err != nil {
			t.Fatal(err)
		}
		row := php.find(t, id)
		if row == nil || !bytes.Equal(row.Payload, legacy) {
			t.Fatalf("PHP find(%s) = %+v", id, row)
		}
		out := php.artisan(t, "queue:failed", nil)
		if !strings.Contains(out, id) || !strings.Contains(out, `App\Jobs\Old`) {
			t.Fatalf("queue:failed does not list %s:\n%s", id, out)
		}
	})
}

// queue:failed's table for rows Go wrote: the Class column comes from data.command.
func TestQueueFailedTable(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		php := newPHP(t, b, nil)
		s := mustOpen(t, b.dsn, Options{CreateTable: CreateIfMissing})
		var ids []string
		for i, p := range samplePayloads {
			id, err := s.Log(ctx, "redis", "default", []byte(p), goException(i))
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		out := php.artisan(t, "queue:failed", nil)
		table := parseConsoleTable(t, out)
		if len(table) != len(samplePayloads)+1 {
			t.Fatalf("queue:failed printed %d lines:\n%s", len(table), out)
		}
		if want := []string{"ID", "Connection", "Queue", "Class", "Failed At"}; !slices.Equal(table[0], want) {
			t.Fatalf("header %v, want %v", table[0], want)
		}
		all, err := s.All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for j, cells := range table[1:] {
			i := len(samplePayloads) - 1 - j
			want := []string{ids[i], "redis", "default", classOfPayload[i], all[j].FailedAt.Format(DateFormat)}
			if !slices.Equal(cells, want) {
				t.Errorf("queue:failed row %d = %q, want %q", j, cells, want)
			}
		}
	})
}

// parseConsoleTable reads Symfony's box table into rows of trimmed cells.
func parseConsoleTable(t *testing.T, out string) [][]string {
	t.Helper()
	var rows [][]string
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "|") {
			continue
		}
		parts := strings.Split(strings.Trim(line, "|"), "|")
		cells := make([]string, len(parts))
		for i, p := range parts {
			cells[i] = strings.TrimSpace(p)
		}
		rows = append(rows, cells)
	}
	return rows
}

// queue:retry on rows Go wrote: Laravel finds each by uuid, pushes its payload (attempts
// reset) onto the row's queue on the row's connection and forgets the row. `retry all`
// and `--queue` select the same ids as Store.Ids, in the same order.
func TestQueueRetryOnGoRows(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		redisSrv := testenv.RedisServer(t)
		rc := redisSrv.Client(t, 0)
		prefix := testenv.Prefix(t)
		php := newPHP(t, b, nil)
		php.env.Redis, php.env.Prefix = redisSrv, prefix
		s := mustOpen(t, b.dsn, Options{CreateTable: CreateIfMissing})

		queues := []string{"emails", "Emails", "default", "emails", "default", "emails"}
		for i, p := range samplePayloads {
			if _, err := s.Log(ctx, "redis", queues[i], []byte(p), goException(i)); err != nil {
				t.Fatal(err)
			}
		}
		want, err := s.Ids(ctx, "emails")
		if err != nil {
			t.Fatal(err)
		}
		if len(want) != 3 {
			t.Fatalf("Ids(emails) = %v: the case-different queue must not match", want)
		}
		out := php.artisan(t, "queue:retry", map[string]any{"--queue": "emails"})
		pushed, err := rc.LRange(ctx, prefix+"queues:emails", 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, raw := range pushed {
			var p map[string]any
			if err := json.Unmarshal([]byte(raw), &p); err != nil {
				t.Fatalf("pushed job is not JSON: %v", err)
			}
			got = append(got, p["uuid"].(string))
			// Semantic check of resetAttempts: everything kept, attempts 0.
			var orig map[string]any
			idx := slices.IndexFunc(samplePayloads, func(s string) bool { return strings.Contains(s, p["uuid"].(string)) })
			_ = json.Unmarshal([]byte(samplePayloads[idx]), &orig)
			if _, has := orig["attempts"]; has {
				orig["attempts"] = float64(0)
			}
			// json_decode(…, true) + json_encode turns a reserved copy's `{}` back into `[]`.
			if !reflect.DeepEqual(p, emptyObjectsAsArrays(orig)) {
				t.Errorf("retried payload differs from the record:\n got %s\nfrom %s", raw, samplePayloads[idx])
			}
			// Go's retry path pushes the same bytes.
			goRetry, err := payload.ResetForRetry([]byte(samplePayloads[idx]))
			if err != nil || string(goRetry) != raw {
				t.Errorf("payload.ResetForRetry differs from queue:retry:\n  Go %s (%v)\n PHP %s", goRetry, err, raw)
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("queue:retry --queue=emails pushed %v, Store.Ids gave %v\n%s", got, want, out)
		}
		for _, id := range want {
			if r, err := s.Find(ctx, id); err != nil || r != nil {
				t.Errorf("record %s still there after queue:retry: %+v, %v", id, r, err)
			}
		}

		wantAll, err := s.Ids(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		php.artisan(t, "queue:retry", map[string]any{"id": []string{"all"}})
		var gotAll []string
		for _, q := range []string{"Emails", "default"} {
			vals, err := rc.LRange(ctx, prefix+"queues:"+q, 0, -1).Result()
			if err != nil {
				t.Fatal(err)
			}
			for _, raw := range vals {
				var p struct{ UUID string }
				_ = json.Unmarshal([]byte(raw), &p)
				gotAll = append(gotAll, p.UUID)
				idx := slices.IndexFunc(samplePayloads, func(s string) bool { return strings.Contains(s, p.UUID) })
				if goRetry, err := payload.ResetForRetry([]byte(samplePayloads[idx])); err != nil || string(goRetry) != raw {
					t.Errorf("payload.ResetForRetry differs from queue:retry all:\n  Go %s (%v)\n PHP %s", goRetry, err, raw)
				}
			}
		}
		slices.Sort(gotAll)
		slices.Sort(wantAll)
		if !slices.Equal(gotAll, wantAll) || len(wantAll) != 3 {
			t.Fatalf("queue:retry all pushed %v, Store.Ids gave %v", gotAll, wantAll)
		}
		if all, err := s.All(ctx); err != nil || len(all) != 0 {
			t.Fatalf("records left after retry all: %d, %v", len(all), err)
		}
	})
}

// The legacy "database" driver: integer ids in both directions.
func TestLegacyDriverInterop(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		php := newPHP(t, b, map[string]string{"LARAQ_FAILED_DRIVER": "database"})
		php.run(t, nil, "migrate")
		s := mustOpen(t, b.dsn, Options{Driver: Database, CreateTable: CreateNever})
		goID, err := s.Log(ctx, "redis", "default", []byte(samplePayloads[0]), "E: go in x.go:1\nStack trace:\n#0 {main}")
		if err != nil {
			t.Fatal(err)
		}
		phpID, _ := php.log(t, "redis", "low", []byte(samplePayloads[1]), "E: php in x.php:1\nStack trace:\n#0 {main}")
		if goID != "1" || phpID != "2" {
			t.Fatalf("ids: Go %q, PHP %q; want 1 and 2", goID, phpID)
		}
		rows := php.list(t)
		all, err := s.All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != 2 || len(all) != 2 {
			t.Fatalf("PHP %d rows, Go %d records", len(rows), len(all))
		}
		for j := range all {
			if all[j].ID != anyText(rows[j].ID) || all[j].UUID != "" || !bytes.Equal(all[j].Payload, rows[j].Payload) ||
				all[j].Queue != rows[j].Queue || all[j].FailedAt.Format(DateFormat) != rows[j].FailedAt {
				t.Errorf("record %d: Go %+v, PHP %+v", j, all[j], rows[j])
			}
		}
		if row := php.find(t, goID); row == nil || anyText(row.ID) != goID {
			t.Fatalf("PHP find(%s) = %+v", goID, row)
		}
		if r, err := s.Find(ctx, phpID); err != nil || r == nil || r.Queue != "low" {
			t.Fatalf("Go Find(%s) = %+v, %v", phpID, r, err)
		}
	})
}

func emptyObjectsAsArrays(v any) any {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			return []any{}
		}
		for k, e := range x {
			x[k] = emptyObjectsAsArrays(e)
		}
	case []any:
		for i, e := range x {
			x[i] = emptyObjectsAsArrays(e)
		}
	}
	return v
}

// prune() and Prune cut at the same instant: strictly before, in the app timezone.
func TestPruneInterop(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		loc := interopLocation(t)
		php := newPHP(t, b, map[string]string{"LARAQ_APP_TIMEZONE": interopTZ})
		start := time.Date(2025, 2, 1, 6, 0, 0, 0, time.UTC)
		clock := &fakeClock{t: start}
		s := mustOpen(t, b.dsn, Options{Location: loc, Now: clock.Now, CreateTable: CreateIfMissing})
		var ids []string
		for i := 0; i < 3; i++ {
			id, err := s.Log(ctx, "redis", "default", []byte(samplePayloads[i]), "E")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
			clock.Add(time.Hour)
		}
		// PHP parses the cutoff in the app timezone; the record failed exactly then stays.
		cutoff := start.Add(time.Hour).In(loc).Format(DateFormat)
		var res struct{ Deleted json.Number }
		decodeJSON(t, php.run(t, nil, "prune", cutoff), &res)
		if res.Deleted.String() != "1" {
			t.Fatalf("PHP prune(%s) deleted %s, want 1", cutoff, res.Deleted)
		}
		if left, _ := s.Ids(ctx, ""); !slices.Equal(left, []string{ids[2], ids[1]}) {
			t.Fatalf("after PHP prune: %v", left)
		}
		if n, err := s.Prune(ctx, start.Add(2*time.Hour)); err != nil || n != 1 {
			t.Fatalf("Go Prune = %d, %v; want 1", n, err)
		}
		rows := php.list(t)
		if len(rows) != 1 || anyText(rows[0].ID) != ids[2] {
			t.Fatalf("PHP sees %+v after Go Prune", rows)
		}
	})
}
