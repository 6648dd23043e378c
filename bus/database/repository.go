// Package database is Laravel's DatabaseBatchRepository on the application's
// job_batches table (SQLite, MySQL/MariaDB or PostgreSQL), for package bus: the same
// statements, in the same transactions with the same row lock.
package database

import (
	"context"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/laraq/laraq/bus"
	fdb "github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/payload"
)

// DefaultTable is config/queue.php's batching.table.
const DefaultTable = "job_batches"

// ErrNoTable is wrapped by Open and New when the table is missing (the application has
// not run `php artisan queue:batches-table` / `make:queue-batches-table`).
var ErrNoTable = errors.New("bus: job_batches table missing or incomplete")

// Repository is bus.Repository on a database/sql handle.
type Repository struct {
	db      *sql.DB
	owned   bool
	dialect fdb.Dialect
	table   string // quoted
	name    string
}

// Open opens the database a DSN names (sqlite:PATH, mysql://…, postgres://…, as
// failed/database takes them) and returns the repository on its table (DefaultTable
// when empty). Close closes the database.
func Open(ctx context.Context, dsn, table string) (*Repository, error) {
	db, d, display, err := fdb.OpenDB(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	r, err := newRepo(ctx, db, d, table, true)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	r.name = display
	return r, nil
}

// New returns the repository on a handle the caller owns (Close leaves it open). Its
// driver must speak the dialect's SQL and placeholders. For SQLite, begin transactions
// IMMEDIATE (modernc.org/sqlite: _txlock=immediate), as Open does.
func New(ctx context.Context, db *sql.DB, dialect fdb.Dialect, table string) (*Repository, error) {
	return newRepo(ctx, db, dialect, table, false)
}

func newRepo(ctx context.Context, db *sql.DB, d fdb.Dialect, table string, owned bool) (*Repository, error) {
	if table == "" {
		table = DefaultTable
	}
	qt, err := fdb.QuoteTable(d, table)
	if err != nil {
		return nil, fmt.Errorf("bus: %w", err)
	}
	r := &Repository{db: db, owned: owned, dialect: d, table: qt, name: d.String()}
	if _, err := db.ExecContext(ctx, "select "+columns+" from "+qt+" where 1 = 0"); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNoTable, table, err)
	}
	return r, nil
}

const columns = "id, name, total_jobs, pending_jobs, failed_jobs, failed_job_ids, options, cancelled_at, created_at, finished_at"

// String names the database and table, without a password.
func (r *Repository) String() string { return "job_batches " + r.table + " on " + r.name }

// Close closes the database when Open opened it.
func (r *Repository) Close() error {
	if r.owned {
		return r.db.Close()
	}
	return nil
}

// ph is the n-th placeholder (1-based).
func (r *Repository) ph(n int) string {
	if r.dialect == fdb.PostgreSQL {
		return "$" + strconv.Itoa(n)
	}
	return "?"
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Find is find(): select * … where id = ? limit 1.
func (r *Repository) Find(ctx context.Context, id string) (*bus.Batch, error) {
	b, _, err := r.find(ctx, r.db, id, "")
	return b, err
}

// find reads a row, and failed_job_ids as stored.
func (r *Repository) find(ctx context.Context, q querier, id, lock string) (*bus.Batch, string, error) {
	var (
		b                         bus.Batch
		ids, opts                 sql.NullString
		cancelled, created, finis sql.NullInt64
	)
	err := q.QueryRowContext(ctx, "select "+columns+" from "+r.table+" where id = "+r.ph(1)+" limit 1"+lock, id).Scan(
		&b.ID, &b.Name, &b.TotalJobs, &b.PendingJobs, &b.FailedJobs, &ids, &opts, &cancelled, &created, &finis)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", fmt.Errorf("%w: %s", bus.ErrNoBatch, id)
	}
	if err != nil {
		return nil, "", fmt.Errorf("bus: reading batch %s: %w", id, err)
	}
	b.FailedJobIDs = jobIDs(ids.String)
	if o := r.unserialize(opts.String); o != "" {
		b.Options, _ = bus.ParseOptions(o) // PHP reads options it cannot unserialize as []
	}
	b.CreatedAt = time.Unix(created.Int64, 0)
	if cancelled.Valid && cancelled.Int64 != 0 {
		t := time.Unix(cancelled.Int64, 0)
		b.CancelledAt = &t
	}
	if finis.Valid && finis.Int64 != 0 {
		t := time.Unix(finis.Int64, 0)
		b.FinishedAt = &t
	}
	return &b, ids.String, nil
}

// unserialize undoes PostgreSQL's base64 (DatabaseBatchRepository::serialize()
// base64-encodes there, and unserialize() decodes a value without ':' or ';').
func (r *Repository) unserialize(s string) string {
	if r.dialect == fdb.PostgreSQL && !strings.ContainsAny(s, ":;") {
		if b, err := base64.StdEncoding.DecodeString(s); err == nil {
			return string(b)
		}
	}
	return s
}

// DecrementPendingJobs is decrementPendingJobs().
func (r *Repository) DecrementPendingJobs(ctx context.Context, id, jobUUID string) (bus.Counts, error) {
	return r.updateAtomicValues(ctx, id, func(b *bus.Batch, ids []payload.Value) (int, int, []payload.Value) {
		return b.PendingJobs - 1, b.FailedJobs, arrayDiff(ids, jobUUID)
	})
}

// IncrementFailedJobs is incrementFailedJobs().
func (r *Repository) IncrementFailedJobs(ctx context.Context, id, jobUUID string) (bus.Counts, error) {
	return r.updateAtomicValues(ctx, id, func(b *bus.Batch, ids []payload.Value) (int, int, []payload.Value) {
		return b.PendingJobs, b.FailedJobs + 1, arrayUnique(append(ids, payload.Value{Kind: payload.KindString, Str: jobUUID}))
	})
}

// updateAtomicValues is DatabaseBatchRepository::updateAtomicValues(): in a transaction,
// select the row `for update` (SQLite has no row locks: the transaction is IMMEDIATE),
// compute, update pending_jobs, failed_jobs and failed_job_ids.
func (r *Repository) updateAtomicValues(ctx context.Context, id string, fn func(*bus.Batch, []payload.Value) (int, int, []payload.Value)) (bus.Counts, error) {
	tx, err := r.db.BeginTx(ctx, nil)
	if err != nil {
		return bus.Counts{}, fmt.Errorf("bus: batch %s: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	lock := " for update"
	if r.dialect == fdb.SQLite {
		lock = ""
	}
	b, raw, err := r.find(ctx, tx, id, lock)
	if err != nil {
		return bus.Counts{}, err
	}
	pending, failed, ids := fn(b, decodeIDs(raw))
	enc, err := (&payload.Value{Kind: payload.KindArray, Items: listItems(ids)}).AppendJSON(nil, 0)
	if err != nil {
		return bus.Counts{}, fmt.Errorf("bus: batch %s: failed_job_ids: %w", id, err)
	}
	_, err = tx.ExecContext(ctx, "update "+r.table+" set pending_jobs = "+r.ph(1)+", failed_jobs = "+r.ph(2)+
		", failed_job_ids = "+r.ph(3)+" where id = "+r.ph(4), pending, failed, string(enc), id)
	if err != nil {
		return bus.Counts{}, fmt.Errorf("bus: updating batch %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return bus.Counts{}, fmt.Errorf("bus: updating batch %s: %w", id, err)
	}
	return bus.Counts{PendingJobs: pending, FailedJobs: failed}, nil
}

// MarkAsFinished is markAsFinished(): finished_at = time().
func (r *Repository) MarkAsFinished(ctx context.Context, id string, now time.Time) error {
	_, err := r.db.ExecContext(ctx, "update "+r.table+" set finished_at = "+r.ph(1)+" where id = "+r.ph(2), now.Unix(), id)
	if err != nil {
		return fmt.Errorf("bus: finishing batch %s: %w", id, err)
	}
	return nil
}

// Cancel is cancel(): cancelled_at = finished_at = time().
func (r *Repository) Cancel(ctx context.Context, id string, now time.Time) error {
	_, err := r.db.ExecContext(ctx, "update "+r.table+" set cancelled_at = "+r.ph(1)+", finished_at = "+r.ph(2)+" where id = "+r.ph(3), now.Unix(), now.Unix(), id)
	if err != nil {
		return fmt.Errorf("bus: cancelling batch %s: %w", id, err)
	}
	return nil
}

var _ bus.Repository = (*Repository)(nil)
