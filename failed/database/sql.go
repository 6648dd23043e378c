package database

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-sql-driver/mysql"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // "pgx" database/sql driver
	"github.com/laraq/laraq/failed"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqlStore implements failed.Store on a database/sql handle with the queries Laravel's
// DatabaseUuidFailedJobProvider / DatabaseFailedJobProvider run.
type sqlStore struct {
	db      *sql.DB
	owned   bool   // opened by Open: Close closes it
	name    string // the DSN without its password, for String
	dialect Dialect
	opts    Options
	table   string // quoted
	q       queries
}

type queries struct {
	insert, all, find, forget, flushAll, flushBefore, prune, ids string
}

func openSQL(ctx context.Context, t dsnTarget, opts Options) (failed.Store, error) {
	if _, err := quoteTable(t.dialect, opts.Table); err != nil {
		return nil, err
	}
	db, err := sql.Open(t.driverName, t.connString)
	if err != nil {
		return nil, fmt.Errorf("failed: open %s: %w", t.dialect, err)
	}
	if t.dialect == SQLite {
		// One connection: SQLite serialises writers anyway, and ":memory:" would otherwise
		// be a different database per pooled connection.
		db.SetMaxOpenConns(1)
	}
	s, err := newSQL(ctx, db, t.dialect, opts, true)
	if err == nil {
		s.(*sqlStore).name = t.display
	}
	return s, err
}

// newSQL checks the table and returns the store; a store that owns db closes it on error.
func newSQL(ctx context.Context, db *sql.DB, d Dialect, opts Options, owned bool) (failed.Store, error) {
	table, err := quoteTable(d, opts.Table)
	if err != nil {
		return nil, err
	}
	s := &sqlStore{db: db, owned: owned, dialect: d, opts: opts, table: table, q: buildQueries(d, opts.Driver, table)}
	if err := s.prepareTable(ctx); err != nil {
		if owned {
			_ = db.Close()
		}
		return nil, err
	}
	return s, nil
}

// prepareTable creates the table if Options allow and it is missing, then checks that
// the columns the driver needs are there.
func (s *sqlStore) prepareTable(ctx context.Context) error {
	create := s.opts.CreateTable == CreateIfMissing
	probe := "select id, connection, queue, payload, exception, failed_at from " + s.table + " where 1 = 0"
	if s.opts.Driver == DatabaseUUIDs {
		probe = "select id, uuid, connection, queue, payload, exception, failed_at from " + s.table + " where 1 = 0"
	}
	probeErr := s.exec(ctx, probe)
	if probeErr == nil {
		return nil
	}
	if err := s.db.PingContext(ctx); err != nil {
		return fmt.Errorf("failed: connect to %s: %w", s.dialect, err)
	}
	if !create {
		return fmt.Errorf("%w: table %s on %s: %v (create it with the application's migration: `php artisan queue:failed-table` "+
			"(make:queue-failed-table from Laravel 11) and `php artisan migrate`; or let laraq create it with Laravel's schema: "+
			"Options.CreateTable = CreateIfMissing here, laravel.ConnectOptions.CreateFailedTable through package laravel, "+
			"`laraq work --create-failed-table` on the command line)",
			ErrNoTable, s.opts.Table, s.dialect, probeErr)
	}
	for _, stmt := range createTableSQL(s.dialect, s.opts.Driver, s.opts.Schema, s.opts.Table) {
		if err := s.exec(ctx, stmt); err != nil {
			// Another process may have created the table meanwhile.
			if s.exec(ctx, probe) == nil {
				return nil
			}
			return fmt.Errorf("failed: create table %s on %s: %w", s.opts.Table, s.dialect, err)
		}
	}
	if err := s.exec(ctx, probe); err != nil {
		return fmt.Errorf("%w: %s on %s after creating it: %v", ErrNoTable, s.opts.Table, s.dialect, err)
	}
	return nil
}

func (s *sqlStore) exec(ctx context.Context, stmt string) error {
	_, err := s.db.ExecContext(ctx, stmt)
	return err
}

func buildQueries(d Dialect, drv Driver, table string) queries {
	ph := func(n int) string {
		if d == PostgreSQL {
			return "$" + strconv.Itoa(n)
		}
		return "?"
	}
	q := queries{
		flushAll:    "delete from " + table,
		flushBefore: "delete from " + table + " where failed_at <= " + ph(1),
	}
	key := "uuid"
	if drv == Database {
		key = "id"
	}
	if drv == DatabaseUUIDs {
		q.insert = "insert into " + table + " (uuid, connection, queue, payload, exception, failed_at) values (" +
			ph(1) + ", " + ph(2) + ", " + ph(3) + ", " + ph(4) + ", " + ph(5) + ", " + ph(6) + ")"
		q.all = "select id, uuid, connection, queue, payload, exception, failed_at from " + table + " order by id desc"
		q.find = "select id, uuid, connection, queue, payload, exception, failed_at from " + table + " where uuid = " + ph(1) + " limit 1"
		q.ids = "select id, uuid, queue from " + table + " order by id desc"
	} else {
		q.insert = "insert into " + table + " (connection, queue, payload, exception, failed_at) values (" +
			ph(1) + ", " + ph(2) + ", " + ph(3) + ", " + ph(4) + ", " + ph(5) + ")"
		if d == PostgreSQL {
			q.insert += " returning id"
		}
		q.all = "select id, '', connection, queue, payload, exception, failed_at from " + table + " order by id desc"
		q.find = "select id, '', connection, queue, payload, exception, failed_at from " + table + " where id = " + ph(1) + " limit 1"
		q.ids = "select id, '', queue from " + table + " order by id desc"
	}
	q.forget = "delete from " + table + " where " + key + " = " + ph(1)
	// Laravel prunes in chunks of 1000 to keep each delete's locks short.
	if d == MySQL {
		q.prune = "delete from " + table + " where failed_at < ? limit 1000"
	} else {
		q.prune = "delete from " + table + " where id in (select id from " + table + " where failed_at < " + ph(1) + " limit 1000)"
	}
	return q
}

func (s *sqlStore) now() string {
	return s.opts.Now().In(s.opts.Location).Format(DateFormat)
}

func (s *sqlStore) Log(ctx context.Context, connection, queue string, payload []byte, exception string) (string, error) {
	// Laravel 9.2+ passes the text through mb_convert_encoding(…, 'UTF-8'), which turns
	// invalid bytes into '?'; doing it always keeps MySQL's strict mode from refusing the row.
	exception = strings.ToValidUTF8(exception, "?")
	if s.dialect == PostgreSQL {
		// PostgreSQL text cannot hold NUL; PHP's insert would fail and lose the record.
		exception = strings.ReplaceAll(exception, "\x00", "?")
	}
	if err := s.checkPayload(payload); err != nil {
		return "", err
	}
	failedAt := s.now()
	if s.opts.Driver == Database {
		return s.logLegacy(ctx, connection, queue, payload, exception, failedAt)
	}
	id, ok := payloadUUID(payload)
	if !ok {
		// PHP reads json_decode($payload)['uuid'] and its insert fails without one, losing
		// the record. A fresh uuid keeps the record usable by queue:retry/queue:forget.
		id = uuid.NewString()
		s.opts.Logger.WarnContext(ctx, "failed job payload has no uuid; the record gets a generated one",
			"uuid", id, "connection", connection, "queue", queue)
	}
	for attempt := 0; ; attempt++ {
		_, err := s.db.ExecContext(ctx, s.q.insert, id, connection, queue, string(payload), exception, failedAt)
		if err == nil {
			return id, nil
		}
		if attempt > 0 || !isUniqueViolation(err) {
			return "", fmt.Errorf("failed: log into %s.%s: %w", s.dialect, s.opts.Table, err)
		}
		// A record with this uuid already exists. On the same connection and queue it is
		// this job's: a failover brought back a job whose row was written and whose
		// deletion the new master never got, or two workers ran the job twice at once.
		// A second row would make `queue:retry all` queue the job twice: the failure is
		// recorded already, and the existing row stays as it is.
		existing, ferr := s.Find(ctx, id)
		if ferr == nil && existing != nil && existing.Queue == queue && existing.Connection == connection {
			s.opts.Logger.InfoContext(ctx, "failed job already recorded on this queue; no second row written",
				"uuid", id, "connection", connection, "queue", queue, "failed_at", existing.FailedAt)
			return id, nil
		}
		// Another queue's (or a row that cannot be read): PHP's insert would throw and
		// lose this failure; keep both under a new uuid.
		old := id
		id = uuid.NewString()
		s.opts.Logger.WarnContext(ctx, "failed job uuid already recorded on another queue; the new record gets a generated uuid",
			"payload_uuid", old, "uuid", id, "connection", connection, "queue", queue)
	}
}

func (s *sqlStore) logLegacy(ctx context.Context, connection, queue string, payload []byte, exception, failedAt string) (string, error) {
	var id int64
	if s.dialect == PostgreSQL {
		if err := s.db.QueryRowContext(ctx, s.q.insert, connection, queue, string(payload), exception, failedAt).Scan(&id); err != nil {
			return "", fmt.Errorf("failed: log into %s.%s: %w", s.dialect, s.opts.Table, err)
		}
		return strconv.FormatInt(id, 10), nil
	}
	res, err := s.db.ExecContext(ctx, s.q.insert, connection, queue, string(payload), exception, failedAt)
	if err != nil {
		return "", fmt.Errorf("failed: log into %s.%s: %w", s.dialect, s.opts.Table, err)
	}
	if id, err = res.LastInsertId(); err != nil {
		return "", fmt.Errorf("failed: log into %s.%s: insert id: %w", s.dialect, s.opts.Table, err)
	}
	return strconv.FormatInt(id, 10), nil
}

// checkPayload rejects payload bytes the database would refuse or alter, with an error
// that says where, instead of the driver's.
func (s *sqlStore) checkPayload(payload []byte) error {
	if s.dialect == SQLite {
		return nil // SQLite keeps any bytes of a text value
	}
	for i := 0; i < len(payload); {
		r, size := utf8.DecodeRune(payload[i:])
		if r == utf8.RuneError && size == 1 {
			return fmt.Errorf("failed: payload is not valid UTF-8 at byte offset %d; %s text columns cannot store it", i, s.dialect)
		}
		if r == 0 && s.dialect == PostgreSQL {
			return fmt.Errorf("failed: payload has a NUL byte at offset %d; postgres text columns cannot store it", i)
		}
		i += size
	}
	return nil
}

func isUniqueViolation(err error) bool {
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		return me.Number == 1062 // ER_DUP_ENTRY
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "23505" // unique_violation
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE || se.Code() == sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY
	}
	return false
}

func (s *sqlStore) All(ctx context.Context) ([]failed.Record, error) {
	rows, err := s.db.QueryContext(ctx, s.q.all)
	if err != nil {
		return nil, fmt.Errorf("failed: list %s.%s: %w", s.dialect, s.opts.Table, err)
	}
	defer rows.Close()
	var out []failed.Record
	for rows.Next() {
		r, err := s.scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("failed: list %s.%s: %w", s.dialect, s.opts.Table, err)
	}
	return out, nil
}

func (s *sqlStore) Find(ctx context.Context, id string) (*failed.Record, error) {
	arg, ok := s.keyArg(id)
	if !ok {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, s.q.find, arg)
	if err != nil {
		return nil, fmt.Errorf("failed: find %q in %s.%s: %w", id, s.dialect, s.opts.Table, err)
	}
	defer rows.Close()
	if !rows.Next() {
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("failed: find %q in %s.%s: %w", id, s.dialect, s.opts.Table, err)
		}
		return nil, nil
	}
	r, err := s.scan(rows)
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// keyArg converts an ID to the value compared with the key column. A legacy id that is
// not an integer matches nothing (PostgreSQL would reject the comparison).
func (s *sqlStore) keyArg(id string) (any, bool) {
	if s.opts.Driver == DatabaseUUIDs {
		return id, true
	}
	n, err := strconv.ParseInt(strings.TrimSpace(id), 10, 64)
	if err != nil {
		return nil, false
	}
	return n, true
}

func (s *sqlStore) Forget(ctx context.Context, id string) (bool, error) {
	arg, ok := s.keyArg(id)
	if !ok {
		return false, nil
	}
	res, err := s.db.ExecContext(ctx, s.q.forget, arg)
	if err != nil {
		return false, fmt.Errorf("failed: forget %q in %s.%s: %w", id, s.dialect, s.opts.Table, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("failed: forget %q in %s.%s: %w", id, s.dialect, s.opts.Table, err)
	}
	return n > 0, nil
}

func (s *sqlStore) Flush(ctx context.Context, olderThan time.Duration) error {
	var err error
	if olderThan <= 0 {
		_, err = s.db.ExecContext(ctx, s.q.flushAll)
	} else {
		cutoff := s.opts.Now().Add(-olderThan).In(s.opts.Location).Format(DateFormat)
		_, err = s.db.ExecContext(ctx, s.q.flushBefore, cutoff)
	}
	if err != nil {
		return fmt.Errorf("failed: flush %s.%s: %w", s.dialect, s.opts.Table, err)
	}
	return nil
}

func (s *sqlStore) Prune(ctx context.Context, before time.Time) (int64, error) {
	cutoff := before.In(s.opts.Location).Format(DateFormat)
	var total int64
	for {
		res, err := s.db.ExecContext(ctx, s.q.prune, cutoff)
		if err != nil {
			return total, fmt.Errorf("failed: prune %s.%s: %w", s.dialect, s.opts.Table, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("failed: prune %s.%s: %w", s.dialect, s.opts.Table, err)
		}
		total += n
		if n == 0 {
			return total, nil
		}
	}
}

func (s *sqlStore) Ids(ctx context.Context, queue string) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, s.q.ids)
	if err != nil {
		return nil, fmt.Errorf("failed: ids in %s.%s: %w", s.dialect, s.opts.Table, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var (
			id     int64
			u, que sql.NullString
		)
		if err := rows.Scan(&id, &u, &que); err != nil {
			return nil, fmt.Errorf("failed: ids in %s.%s: %w", s.dialect, s.opts.Table, err)
		}
		// Filtered here, not in SQL: PHP filters all() in memory with an exact string
		// comparison, while MySQL's _ci collations would match "Default" to "default".
		if queue != "" && que.String != queue {
			continue
		}
		if s.opts.Driver == DatabaseUUIDs {
			out = append(out, u.String)
		} else {
			out = append(out, strconv.FormatInt(id, 10))
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("failed: ids in %s.%s: %w", s.dialect, s.opts.Table, err)
	}
	return out, nil
}

// String names the database and table, without the password.
func (s *sqlStore) String() string {
	name := s.name
	if name == "" {
		name = s.dialect.String() + " (a caller's *sql.DB)"
	}
	return name + " table " + s.opts.Table
}

func (s *sqlStore) Close() error {
	if !s.owned {
		return nil
	}
	return s.db.Close()
}

func (s *sqlStore) scan(rows *sql.Rows) (failed.Record, error) {
	var (
		id                  int64
		u, conn, queue, exc sql.NullString
		payload             []byte
		failedAt            any
		r                   failed.Record
	)
	if err := rows.Scan(&id, &u, &conn, &queue, &payload, &exc, &failedAt); err != nil {
		return r, fmt.Errorf("failed: read %s.%s: %w", s.dialect, s.opts.Table, err)
	}
	r.UUID, r.Connection, r.Queue, r.Exception = u.String, conn.String, queue.String, exc.String
	r.Payload = payload
	if r.Payload == nil {
		r.Payload = []byte{}
	}
	if s.opts.Driver == DatabaseUUIDs {
		r.ID = r.UUID
	} else {
		r.ID = strconv.FormatInt(id, 10)
	}
	t, err := wallClock(failedAt, s.opts.Location)
	if err != nil {
		return r, fmt.Errorf("failed: read %s.%s id %d: failed_at: %w", s.dialect, s.opts.Table, id, err)
	}
	r.FailedAt = t
	return r, nil
}

// wallClock reads a failed_at value as the wall-clock text PHP would get, in loc. Drivers
// hand it over differently: MySQL as text, pgx as a time.Time in UTC carrying the stored
// wall clock (timestamp without time zone), SQLite as text or a parsed time.Time.
func wallClock(v any, loc *time.Location) (time.Time, error) {
	switch x := v.(type) {
	case nil:
		return time.Time{}, nil
	case time.Time:
		return time.Date(x.Year(), x.Month(), x.Day(), x.Hour(), x.Minute(), x.Second(), x.Nanosecond(), loc), nil
	case []byte:
		return parseWallClock(string(x), loc)
	case string:
		return parseWallClock(x, loc)
	case int64:
		// A unix timestamp someone wrote into a SQLite file.
		return time.Unix(x, 0).In(loc), nil
	}
	return time.Time{}, fmt.Errorf("unexpected type %T", v)
}

var wallClockLayouts = []string{
	"2006-01-02 15:04:05",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04",
	"2006-01-02",
}

func parseWallClock(s string, loc *time.Location) (time.Time, error) {
	for _, layout := range wallClockLayouts {
		if t, err := time.ParseInLocation(layout, s, loc); err == nil {
			if strings.ContainsAny(layout, "Z") {
				t = t.In(loc)
			}
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("cannot parse %q as a date", s)
}
