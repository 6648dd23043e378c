package database

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/laraq/laraq/payload"
)

// fakeClock is an injectable Now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func payloadWithUUID(u string, extra string) []byte {
	return []byte(fmt.Sprintf(`{"uuid":%q,"job":"App\\Jobs\\X@handle","data":{"n":%q},"attempts":0}`, u, extra))
}

func TestStoreBasics(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		clock := &fakeClock{t: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)}
		s := mustOpen(t, b.dsn, Options{Now: clock.Now, CreateTable: CreateIfMissing})
		var ids []string
		for i := 0; i < 4; i++ {
			u := uuid.NewString()
			id, err := s.Log(ctx, "redis", "default", payloadWithUUID(u, fmt.Sprint(i)), fmt.Sprintf("E%d: m in f.go:%d\nStack trace:\n#0 {main}", i, i))
			if err != nil || id != u {
				t.Fatalf("Log = %q, %v; want %q", id, err, u)
			}
			ids = append(ids, id)
			clock.Add(time.Second)
		}
		all, err := s.All(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range all {
			got = append(got, r.ID)
		}
		want := slices.Clone(ids)
		slices.Reverse(want)
		if !slices.Equal(got, want) {
			t.Fatalf("All order %v, want newest first %v", got, want)
		}
		if all[3].FailedAt != time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC) || all[0].FailedAt != time.Date(2025, 1, 2, 3, 4, 8, 0, time.UTC) {
			t.Fatalf("failed_at %v … %v", all[3].FailedAt, all[0].FailedAt)
		}
		if all[3].Exception != "E0: m in f.go:0\nStack trace:\n#0 {main}" || all[3].Connection != "redis" || all[3].Queue != "default" {
			t.Fatalf("record %+v", all[3])
		}
		if r, err := s.Find(ctx, uuid.NewString()); r != nil || err != nil {
			t.Fatalf("Find(unknown) = %+v, %v", r, err)
		}
		if ok, err := s.Forget(ctx, ids[2]); !ok || err != nil {
			t.Fatalf("Forget = %v, %v", ok, err)
		}
		if ok, err := s.Forget(ctx, ids[2]); ok || err != nil {
			t.Fatalf("second Forget = %v, %v; want false", ok, err)
		}
		if err := s.Flush(ctx, 0); err != nil {
			t.Fatal(err)
		}
		if all, err := s.All(ctx); err != nil || len(all) != 0 {
			t.Fatalf("after Flush(0): %d records, %v", len(all), err)
		}
	})
}

func TestFlushOlderThanAndPrune(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		loc := interopLocation(t)
		start := time.Date(2025, 6, 1, 10, 0, 0, 0, time.UTC)
		clock := &fakeClock{t: start}
		s := mustOpen(t, b.dsn, Options{Now: clock.Now, Location: loc, CreateTable: CreateIfMissing})
		var ids []string
		for _, offset := range []time.Duration{0, time.Hour, 3 * time.Hour} {
			clock.t = start.Add(offset)
			id, err := s.Log(ctx, "redis", "default", payloadWithUUID(uuid.NewString(), ""), "E")
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		clock.t = start.Add(3 * time.Hour)
		// now-2h = start+1h: the record at start+1h is "at or before" and goes too.
		if err := s.Flush(ctx, 2*time.Hour); err != nil {
			t.Fatal(err)
		}
		left, err := s.Ids(ctx, "")
		if err != nil || !slices.Equal(left, ids[2:]) {
			t.Fatalf("after Flush(2h): %v, %v; want %v", left, err, ids[2:])
		}
		id, err := s.Log(ctx, "redis", "default", payloadWithUUID(uuid.NewString(), ""), "E")
		if err != nil {
			t.Fatal(err)
		}
		// Prune is strict: the record failed exactly at `before` stays.
		n, err := s.Prune(ctx, start.Add(3*time.Hour))
		if err != nil || n != 0 {
			t.Fatalf("Prune(at) = %d, %v; want 0", n, err)
		}
		n, err = s.Prune(ctx, start.Add(3*time.Hour+time.Second))
		if err != nil || n != 2 {
			t.Fatalf("Prune(after) = %d, %v; want 2", n, err)
		}
		if r, _ := s.Find(ctx, id); r != nil {
			t.Fatalf("pruned record still found")
		}
	})
}

func TestIdsQueueMatchesExactly(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		s := mustOpen(t, b.dsn, Options{CreateTable: CreateIfMissing})
		byQueue := map[string][]string{}
		for i, q := range []string{"default", "Default", "emails", "default", "default "} {
			id, err := s.Log(ctx, "redis", q, payloadWithUUID(uuid.NewString(), fmt.Sprint(i)), "E")
			if err != nil {
				t.Fatal(err)
			}
			byQueue[q] = append([]string{id}, byQueue[q]...)
		}
		for q, want := range byQueue {
			got, err := s.Ids(ctx, q)
			if err != nil || !slices.Equal(got, want) {
				t.Errorf("Ids(%q) = %v, %v; want %v", q, got, err, want)
			}
		}
		if got, _ := s.Ids(ctx, "nope"); len(got) != 0 {
			t.Errorf("Ids(nope) = %v", got)
		}
	})
}

func TestLogWithoutUUIDAndDuplicates(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		var logs bytes.Buffer
		s := mustOpen(t, b.dsn, Options{CreateTable: CreateIfMissing, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
		for _, p := range []string{`{"job":"X@y","data":[],"attempts":0}`, `{"uuid":"","job":"X@y"}`, `not json`, `{"uuid":7}`} {
			id, err := s.Log(ctx, "redis", "default", []byte(p), "E")
			if err != nil {
				t.Fatalf("Log(%s): %v", p, err)
			}
			if _, err := uuid.Parse(id); err != nil {
				t.Fatalf("generated id %q is not a uuid", id)
			}
			r, err := s.Find(ctx, id)
			if err != nil || r == nil || string(r.Payload) != p {
				t.Fatalf("Find(%s) = %+v, %v", id, r, err)
			}
		}
		if !strings.Contains(logs.String(), "no uuid") {
			t.Errorf("no warning logged: %s", logs.String())
		}
		p := payloadWithUUID("dup-0001", "")
		first, err := s.Log(ctx, "redis", "default", p, "first")
		if err != nil || first != "dup-0001" {
			t.Fatalf("first Log = %q, %v", first, err)
		}
		// The same job failing again on its queue (a failover brought it back): no
		// second row, the first stays.
		again, err := s.Log(ctx, "redis", "default", bytes.Replace(p, []byte(`"attempts":0`), []byte(`"attempts":3`), 1), "again")
		if err != nil || again != first {
			t.Fatalf("Log on the same queue = %q, %v; want the existing row's uuid", again, err)
		}
		if ids, _ := s.Ids(ctx, ""); countID(ids, first) != 1 {
			t.Errorf("rows %v: want one with uuid %s", ids, first)
		}
		if r, _ := s.Find(ctx, first); r == nil || r.Exception != "first" {
			t.Errorf("the existing row changed: %+v", r)
		}
		if !strings.Contains(logs.String(), "already recorded on this queue; no second row written") {
			t.Errorf("no note logged: %s", logs.String())
		}
		// Another queue's row under the same uuid: both are kept, the new one under a
		// generated uuid.
		second, err := s.Log(ctx, "redis", "other", p, "second")
		if err != nil || second == first {
			t.Fatalf("second Log = %q, %v; want a new uuid", second, err)
		}
		r1, _ := s.Find(ctx, first)
		r2, _ := s.Find(ctx, second)
		if r1 == nil || r2 == nil || r1.Exception != "first" || r2.Exception != "second" || !bytes.Equal(r2.Payload, p) {
			t.Fatalf("records %+v %+v", r1, r2)
		}
		if !strings.Contains(logs.String(), "already recorded on another queue") {
			t.Errorf("no duplicate warning logged: %s", logs.String())
		}
	})
}

// failed_at is wall-clock text in the app timezone; check the raw column value.
func TestFailedAtStoredAsAppWallClock(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		loc := interopLocation(t)
		instant := time.Date(2024, 12, 31, 20, 30, 15, 999_000_000, time.UTC) // 2025-01-01 02:15:15 +05:45
		s := mustOpen(t, b.dsn, Options{Location: loc, Now: func() time.Time { return instant }, CreateTable: CreateIfMissing})
		id, err := s.Log(ctx, "redis", "default", payloadWithUUID(uuid.NewString(), ""), "E")
		if err != nil {
			t.Fatal(err)
		}
		st := s.(*sqlStore)
		q := "select failed_at from failed_jobs where uuid = ?"
		switch b.name {
		case "postgres":
			q = "select to_char(failed_at, 'YYYY-MM-DD HH24:MI:SS') from failed_jobs where uuid = $1"
		case "mariadb":
			q = "select cast(failed_at as char) from failed_jobs where uuid = ?"
		case "sqlite":
			q = "select cast(failed_at as text) from failed_jobs where uuid = ?"
		}
		var raw string
		if err := st.db.QueryRowContext(ctx, q, id).Scan(&raw); err != nil {
			t.Fatal(err)
		}
		if raw != "2025-01-01 02:15:15" {
			t.Fatalf("stored failed_at %q, want the +05:45 wall clock 2025-01-01 02:15:15", raw)
		}
		r, err := s.Find(ctx, id)
		if err != nil || r == nil {
			t.Fatal(err)
		}
		if !r.FailedAt.Equal(instant.Truncate(time.Second)) || r.FailedAt.Location() != loc {
			t.Fatalf("FailedAt %v, want %v in %v", r.FailedAt, instant.Truncate(time.Second), loc)
		}
	})
}

func TestBytesTheDatabaseCannotStore(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		s := mustOpen(t, b.dsn, Options{CreateTable: CreateIfMissing})
		bad := []byte(`{"uuid":"bad-utf8","data":"` + "\xff\xfe" + `"}`)
		id, err := s.Log(ctx, "redis", "default", bad, "E")
		if b.name == "sqlite" {
			r, _ := s.Find(ctx, id)
			if err != nil || r == nil || !bytes.Equal(r.Payload, bad) {
				t.Fatalf("sqlite must keep any bytes: %v, %+v", err, r)
			}
		} else if err == nil || !strings.Contains(err.Error(), "byte offset 27") {
			t.Fatalf("Log(invalid UTF-8) = %q, %v; want an error naming offset 27", id, err)
		}
		// Exception text is made storable, like Laravel 9.2+'s mb_convert_encoding.
		id, err = s.Log(ctx, "redis", "default", payloadWithUUID(uuid.NewString(), ""), "E: a\xffb\x00c in f.go:1")
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Find(ctx, id)
		if err != nil || r == nil {
			t.Fatal(err)
		}
		want := "E: a?b\x00c in f.go:1"
		if b.name == "postgres" {
			want = "E: a?b?c in f.go:1"
		}
		if r.Exception != want {
			t.Fatalf("exception stored as %q, want %q", r.Exception, want)
		}
	})
}

func TestOpenTableChecks(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		_, err := Open(ctx, b.dsn, Options{CreateTable: CreateNever})
		if !errors.Is(err, ErrNoTable) {
			t.Fatalf("CreateNever on an empty database: %v, want ErrNoTable", err)
		}
		// Every database alike: the default leaves the table to the application's migration
		// and says how to create it, naming the CLI flag too.
		if _, err := Open(ctx, b.dsn, Options{}); !errors.Is(err, ErrNoTable) || !strings.Contains(err.Error(), "queue:failed-table") ||
			!strings.Contains(err.Error(), "--create-failed-table") {
			t.Fatalf("default options on %s with no table: %v, want ErrNoTable with a hint", b.name, err)
		}
		// Creating is idempotent, and a legacy table does not satisfy the uuid driver.
		for i := 0; i < 2; i++ {
			s := mustOpen(t, b.dsn, Options{Table: "old_failed", Driver: Database, CreateTable: CreateIfMissing})
			_ = s.Close()
		}
		if _, err := Open(ctx, b.dsn, Options{Table: "old_failed"}); !errors.Is(err, ErrNoTable) {
			t.Fatalf("uuid driver on a legacy table: %v, want ErrNoTable", err)
		}
		custom := mustOpen(t, b.dsn, Options{Table: "jobs_failed_2", CreateTable: CreateIfMissing})
		if _, err := custom.Log(ctx, "redis", "default", payloadWithUUID("u-custom", ""), "E"); err != nil {
			t.Fatal(err)
		}
		if ids, _ := custom.Ids(ctx, ""); !slices.Equal(ids, []string{"u-custom"}) {
			t.Fatalf("custom table ids %v", ids)
		}
	})
}

func TestLegacyDriver(t *testing.T) {
	forEachBackend(t, func(t *testing.T, b backend) {
		ctx := ctxT(t)
		s := mustOpen(t, b.dsn, Options{Driver: Database, CreateTable: CreateIfMissing})
		for i := 1; i <= 3; i++ {
			id, err := s.Log(ctx, "redis", "default", []byte(`{"job":"X@y","data":[]}`), "E")
			if err != nil || id != fmt.Sprint(i) {
				t.Fatalf("Log = %q, %v; want %d", id, err, i)
			}
		}
		if r, err := s.Find(ctx, "2"); err != nil || r == nil || r.ID != "2" || r.UUID != "" {
			t.Fatalf("Find(2) = %+v, %v", r, err)
		}
		if r, err := s.Find(ctx, "abc"); err != nil || r != nil {
			t.Fatalf("Find(abc) = %+v, %v; want nil, nil", r, err)
		}
		if ok, err := s.Forget(ctx, "2"); !ok || err != nil {
			t.Fatalf("Forget(2) = %v, %v", ok, err)
		}
		if ids, err := s.Ids(ctx, "default"); err != nil || !slices.Equal(ids, []string{"3", "1"}) {
			t.Fatalf("Ids = %v, %v", ids, err)
		}
	})
}

func TestParseDSN(t *testing.T) {
	good := map[string]dsnTarget{
		"sqlite:/srv/app/x.db":    {SQLite, "sqlite", "/srv/app/x.db?_pragma=busy_timeout(10000)", "sqlite:/srv/app/x.db"},
		"sqlite:x.db?mode=ro":     {SQLite, "sqlite", "x.db?mode=ro&_pragma=busy_timeout(10000)", "sqlite:x.db?mode=ro"},
		"mysql://u:p%40ss@h/db":   {MySQL, "mysql", "u:p@ss@tcp(h:3306)/db?collation=utf8mb4_unicode_ci&timeout=10s", "mysql://u:xxxxx@h/db"},
		"pgsql://u:p@h:5433/db":   {PostgreSQL, "pgx", "postgres://u:p@h:5433/db", "pgsql://u:xxxxx@h:5433/db"},
		"postgresql://u@h/db?x=1": {PostgreSQL, "pgx", "postgres://u@h/db?x=1", "postgresql://u@h/db?x=1"},
	}
	for dsn, want := range good {
		got, err := parseDSN(dsn)
		if err != nil || got != want {
			t.Errorf("parseDSN(%q) = %+v, %v; want %+v", dsn, got, err, want)
		}
	}
	tz, err := parseDSN("mysql://u:p@h:3307/db?time_zone=%27%2B00%3A00%27")
	if err != nil || !strings.Contains(tz.connString, "time_zone=%27%2B00%3A00%27") {
		t.Errorf("time_zone param lost: %+v, %v", tz, err)
	}
	for _, dsn := range []string{"", "nothing", "sqlite:", "ftp://x", "mysql://h", "mysql:///db", "mysql://u:secret@h/a/b", "postgres://u:secret@/db", "postgres://u:secret@h/", "mysql://u:secret@h:99999999999/db%zz"} {
		_, err := parseDSN(dsn)
		if !errors.Is(err, ErrBadDSN) {
			t.Errorf("parseDSN(%q) = %v; want ErrBadDSN", dsn, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("parseDSN(%q) error repeats the password: %v", dsn, err)
		}
	}
}

func TestTableNames(t *testing.T) {
	for _, name := range []string{"failed_jobs", "app.failed_jobs", "x$1"} {
		if _, err := quoteTable(MySQL, name); err != nil {
			t.Errorf("quoteTable(%q): %v", name, err)
		}
	}
	for _, name := range []string{"failed jobs", "a.b.c", "x;drop", "a`b", `a"b`, ".x", ""} {
		if _, err := quoteTable(PostgreSQL, name); err == nil {
			t.Errorf("quoteTable(%q) accepted", name)
		}
	}
	if _, err := Open(context.Background(), "sqlite:"+t.TempDir()+"/x.db", Options{Table: "x;drop"}); err == nil {
		t.Error("Open accepted a bad table name")
	}
	if _, err := Open(context.Background(), "sqlite:"+t.TempDir()+"/x.db", Options{Driver: Driver(9)}); err == nil {
		t.Error("Open accepted an unknown driver")
	}
}

func TestNullStore(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, "null", Options{})
	if err != nil {
		t.Fatal(err)
	}
	id, err := s.Log(ctx, "redis", "default", []byte(`{"uuid":"x"}`), "E")
	all, _ := s.All(ctx)
	r, _ := s.Find(ctx, "x")
	ok, _ := s.Forget(ctx, "x")
	ids, _ := s.Ids(ctx, "")
	if id != "" || err != nil || len(all) != 0 || r != nil || ok || len(ids) != 0 || s.Flush(ctx, 0) != nil || s.Close() != nil {
		t.Fatalf("null store kept something")
	}
}

func TestWallClock(t *testing.T) {
	loc := time.FixedZone("X", 3600)
	cases := []struct {
		in   any
		want time.Time
	}{
		{"2024-02-03 04:05:06", time.Date(2024, 2, 3, 4, 5, 6, 0, loc)},
		{[]byte("2024-02-03 04:05:06.5"), time.Date(2024, 2, 3, 4, 5, 6, 5e8, loc)},
		{time.Date(2024, 2, 3, 4, 5, 6, 0, time.UTC), time.Date(2024, 2, 3, 4, 5, 6, 0, loc)},
		{"2024-02-03T04:05:06Z", time.Date(2024, 2, 3, 5, 5, 6, 0, loc)},
		{nil, time.Time{}},
	}
	for _, c := range cases {
		got, err := wallClock(c.in, loc)
		if err != nil || !got.Equal(c.want) {
			t.Errorf("wallClock(%v) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	if _, err := wallClock("yesterday", loc); err == nil {
		t.Error("wallClock accepted garbage")
	}
	if _, err := wallClock(3.5, loc); err == nil {
		t.Error("wallClock accepted a float")
	}
}

// describeTable returns a comparable description of the failed_jobs table as the
// database itself reports it.
func describeTable(t *testing.T, ctx context.Context, s *sqlStore) []string {
	t.Helper()
	var queries []string
	switch s.dialect {
	case MySQL:
		var name, ddl string
		if err := s.db.QueryRowContext(ctx, "show create table "+s.table).Scan(&name, &ddl); err != nil {
			t.Fatal(err)
		}
		return strings.Split(ddl, "\n")
	case PostgreSQL:
		queries = []string{
			`select concat_ws('|', column_name, data_type, character_maximum_length, is_nullable, column_default, datetime_precision)
			   from information_schema.columns where table_schema = current_schema() and table_name = 'failed_jobs' order by ordinal_position`,
			`select indexdef from pg_indexes where schemaname = current_schema() and tablename = 'failed_jobs' order by indexname`,
			`select concat_ws('|', conname, contype, pg_get_constraintdef(oid)) from pg_constraint where conrelid = 'failed_jobs'::regclass order by conname`,
		}
	default:
		// What SQLite knows of the table, not the text of the statements: Laravel's SQLite
		// grammar orders the column modifiers differently from 10.x on.
		queries = []string{
			`select name || '|' || type || '|' || "notnull" || '|' || coalesce(dflt_value, 'NULL') || '|' || pk from pragma_table_info('failed_jobs')`,
			`select il.name || '|' || il."unique" || '|' || (select group_concat(name, ',') from (select name from pragma_index_info(il.name) order by seqno))
			   from pragma_index_list('failed_jobs') il order by il.name`,
		}
	}
	var out []string
	for _, q := range queries {
		rows, err := s.db.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		for rows.Next() {
			var line sql.NullString
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			out = append(out, line.String)
		}
		rows.Close()
	}
	return out
}

// payloadUUID reads the uuid the way PHP's json_decode does; the envelope parser agrees
// on every sample.
func TestPayloadUUIDAgreesWithEnvelopeParser(t *testing.T) {
	for _, p := range samplePayloads {
		env, err := payload.Parse([]byte(p))
		if err != nil {
			t.Fatalf("payload.Parse: %v", err)
		}
		got, ok := payloadUUID([]byte(p))
		if !ok || got != env.UUID {
			t.Errorf("payloadUUID = %q, %v; payload.Parse says %q", got, ok, env.UUID)
		}
	}
	for p, want := range map[string]string{`{"uuid":"a","uuid":"b"}`: "b", `{"UUID":"x"}`: "", `{"uuid":"\u00e9"}`: "é", `{"data":{"uuid":"x"}}`: ""} {
		if got, _ := payloadUUID([]byte(p)); got != want {
			t.Errorf("payloadUUID(%s) = %q, want %q", p, got, want)
		}
	}
}

func countID(ids []string, id string) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}
