package failed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Defaults of Options.
const (
	// DefaultTable is the table of Laravel's queue:failed-table migration (config
	// queue.failed.table).
	DefaultTable = "failed_jobs"
	// DateFormat is how failed_at is written: Laravel's query grammar turns the Carbon
	// from Date::now() into this text, in the app timezone, before binding it.
	DateFormat = "2006-01-02 15:04:05"
)

// Driver selects which Laravel provider's row shape a Store reads and writes (config
// queue.failed.driver).
type Driver int

const (
	// DatabaseUUIDs is Laravel 8+'s default "database-uuids" driver: rows are addressed by
	// the payload's uuid, which `queue:failed` shows as the ID.
	DatabaseUUIDs Driver = iota
	// Database is the legacy "database" driver (the Laravel 5.5–7.x table has no uuid
	// column): rows are addressed by their auto-increment id.
	Database
)

func (d Driver) String() string {
	switch d {
	case DatabaseUUIDs:
		return "database-uuids"
	case Database:
		return "database"
	}
	return fmt.Sprintf("Driver(%d)", int(d))
}

// TableCreation says when Open creates the table.
type TableCreation int

const (
	// CreateSQLiteOnly (the default) creates a missing table in SQLite files only. On
	// MySQL/MariaDB and PostgreSQL the table belongs to the Laravel application's
	// migrations (`php artisan queue:failed-table`), so a missing table is an error.
	CreateSQLiteOnly TableCreation = iota
	// CreateIfMissing creates a missing table on every database, with the schema
	// Laravel's migration would create there.
	CreateIfMissing
	// CreateNever never creates the table; Open fails when it is missing.
	CreateNever
)

// Options configure a Store. The zero value matches a Laravel 8+ skeleton.
type Options struct {
	// Table is the failed-jobs table, optionally schema-qualified ("schema.table").
	// Default DefaultTable.
	Table string
	// Driver is the row shape. Default DatabaseUUIDs.
	Driver Driver
	// Location is the application timezone (config app.timezone): failed_at is written as
	// wall-clock text in it and read back in it. Default time.UTC (the skeleton's 'UTC').
	Location *time.Location
	// Now returns the current time for failed_at and Flush. Default time.Now.
	Now func() time.Time
	// CreateTable says when a missing table is created. Default CreateSQLiteOnly.
	CreateTable TableCreation
	// Logger receives warnings about rows that PHP would have failed to write (a payload
	// without uuid, a uuid already in the table). Default slog.Default().
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Table == "" {
		o.Table = DefaultTable
	}
	if o.Location == nil {
		o.Location = time.UTC
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	return o
}

// Record is one failed job, as `php artisan queue:failed` sees it.
type Record struct {
	// ID addresses the record in Find, Forget and `queue:retry`/`queue:forget`: the uuid
	// for DatabaseUUIDs, the auto-increment id as decimal text for Database.
	ID string
	// UUID is the row's uuid column (empty for Database).
	UUID string
	// Connection is the queue connection name, e.g. "redis".
	Connection string
	// Queue is the bare queue name, e.g. "default".
	Queue string
	// Payload is the job exactly as popped for the failing attempt.
	Payload []byte
	// Exception is the failure as PHP prints a Throwable (see Exception.String).
	Exception string
	// FailedAt is the failed_at column read as wall-clock time in Options.Location.
	FailedAt time.Time
}

// Store is a failed-job store that PHP's `queue:failed`, `queue:retry`, `queue:forget` and
// `queue:flush` can work with, and that reads the rows PHP wrote. Implementations are safe
// for concurrent use.
type Store interface {
	// Log writes a failed job and returns its ID. payload is stored byte for byte.
	Log(ctx context.Context, connection, queue string, payload []byte, exception string) (id string, err error)
	// All returns every record, newest first (ordered by the auto-increment id
	// descending, like Laravel's all()).
	All(ctx context.Context) ([]Record, error)
	// Find returns the record with this ID, or nil, nil when there is none.
	Find(ctx context.Context, id string) (*Record, error)
	// Forget deletes the record with this ID and reports whether one was deleted.
	Forget(ctx context.Context, id string) (bool, error)
	// Flush deletes every record when olderThan is 0 (`queue:flush`), otherwise the
	// records that failed at or before now-olderThan (`queue:flush --hours`, Laravel 10+).
	Flush(ctx context.Context, olderThan time.Duration) error
	// Prune deletes the records that failed strictly before `before` and returns how many
	// (`queue:prune-failed`).
	Prune(ctx context.Context, before time.Time) (int64, error)
	// Ids returns the IDs `queue:retry all` (queue == "") or `queue:retry --queue=NAME`
	// would retry, in the same order (newest first). Queue names match exactly.
	Ids(ctx context.Context, queue string) ([]string, error)
	// Close releases the database handle.
	Close() error
}

// ErrBadDSN is wrapped by Open for a DSN it cannot use.
var ErrBadDSN = errors.New("failed: bad DSN")

// ErrNoTable is wrapped by Open when the table is missing or lacks a column.
var ErrNoTable = errors.New("failed: table missing or incomplete")

// Open opens the store a DSN names:
//
//	sqlite:PATH                                  SQLite file (pure Go driver)
//	mysql://user:pass@host:port/db?param=value   MySQL or MariaDB; params are go-sql-driver's
//	postgres://user:pass@host:port/db?sslmode=…  PostgreSQL (pgx); also postgresql:// and pgsql://
//	null                                         NewNull()
//
// Open checks that the table has the columns the driver needs (creating it first as
// Options.CreateTable says). MySQL connections use utf8mb4/utf8mb4_unicode_ci, as
// Laravel's do, unless the DSN names another charset or collation. If the Laravel
// application sets `database.connections.mysql.timezone`, give the same value as the
// `time_zone` DSN parameter (quoted, e.g. time_zone=%27%2B00%3A00%27): MySQL converts
// TIMESTAMP columns through the session time zone, so both sides must use the same one.
func Open(ctx context.Context, dsn string, opts Options) (Store, error) {
	opts = opts.withDefaults()
	if opts.Driver != DatabaseUUIDs && opts.Driver != Database {
		return nil, fmt.Errorf("failed: unknown driver %v", opts.Driver)
	}
	if opts.CreateTable < CreateSQLiteOnly || opts.CreateTable > CreateNever {
		return nil, fmt.Errorf("failed: unknown CreateTable value %d", int(opts.CreateTable))
	}
	if strings.TrimSpace(dsn) == "null" {
		return NewNull(), nil
	}
	target, err := parseDSN(dsn)
	if err != nil {
		return nil, err
	}
	return openSQL(ctx, target, opts)
}

// payloadUUID returns the top-level "uuid" string of a JSON payload the way PHP's
// json_decode($payload, true)['uuid'] finds it: exact key, the last duplicate wins.
func payloadUUID(payload []byte) (string, bool) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(payload, &top); err != nil {
		return "", false
	}
	raw, ok := top["uuid"]
	if !ok {
		return "", false
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || s == "" {
		return "", false
	}
	return s, true
}

// nullStore is Laravel's NullFailedJobProvider: nothing is kept.
type nullStore struct{}

// NewNull returns a Store that keeps nothing, like the "null" failed driver: Log returns
// an empty ID, All and Ids return nothing, Find returns nil and Forget false.
func NewNull() Store { return nullStore{} }

func (nullStore) Log(context.Context, string, string, []byte, string) (string, error) {
	return "", nil
}
func (nullStore) All(context.Context) ([]Record, error)           { return nil, nil }
func (nullStore) Find(context.Context, string) (*Record, error)   { return nil, nil }
func (nullStore) Forget(context.Context, string) (bool, error)    { return false, nil }
func (nullStore) Flush(context.Context, time.Duration) error      { return nil }
func (nullStore) Prune(context.Context, time.Time) (int64, error) { return 0, nil }
func (nullStore) Ids(context.Context, string) ([]string, error)   { return nil, nil }
func (nullStore) Close() error                                    { return nil }
