package database

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/laraq/laraq/failed"
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

// Driver selects which Laravel provider's row shape a failed.Store reads and writes (config
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

// TableCreation says whether Open creates a missing table. It works alike on every
// database.
type TableCreation int

const (
	// CreateNever (the default) leaves the table to the Laravel application's migrations
	// (`php artisan queue:failed-table`, `make:queue-failed-table` from 11.x, then
	// `migrate`): a missing table is an ErrNoTable error that says so.
	CreateNever TableCreation = iota
	// CreateIfMissing creates a missing table with the schema Laravel's migration would
	// create on that database.
	CreateIfMissing
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
	// CreateTable says whether a missing table is created. Default CreateNever.
	CreateTable TableCreation
	// Schema is the table CreateIfMissing creates: that of the application's Laravel
	// release (SchemaFor). Default SchemaText, the 8.0–13.8 stub.
	Schema Schema
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

func (o Options) check() (Options, error) {
	o = o.withDefaults()
	if o.Driver != DatabaseUUIDs && o.Driver != Database {
		return o, fmt.Errorf("failed: unknown driver %v", o.Driver)
	}
	if o.CreateTable < CreateNever || o.CreateTable > CreateIfMissing {
		return o, fmt.Errorf("failed: unknown CreateTable value %d", int(o.CreateTable))
	}
	if o.Schema < SchemaText || o.Schema > SchemaIndexed {
		return o, fmt.Errorf("failed: unknown Schema value %d", int(o.Schema))
	}
	return o, nil
}

// ErrBadDSN is wrapped by Open for a DSN it cannot use.
var ErrBadDSN = errors.New("failed: bad DSN")

// ErrNoTable is wrapped by Open when the table is missing or lacks a column.
var ErrNoTable = errors.New("failed: table missing or incomplete")

// Dialect is the SQL database a store writes to, for New.
type Dialect int

const (
	SQLite Dialect = iota
	MySQL          // MySQL or MariaDB
	PostgreSQL
)

func (d Dialect) String() string {
	switch d {
	case SQLite:
		return "sqlite"
	case MySQL:
		return "mysql"
	case PostgreSQL:
		return "postgres"
	}
	return fmt.Sprintf("Dialect(%d)", int(d))
}

// New returns a store on a database handle the caller owns (its pool, its driver, its
// TLS settings): Close leaves db open. It checks the table as Open does. The handle's
// driver must speak the dialect's SQL and placeholders (? for SQLite and MySQL, $n for
// PostgreSQL).
func New(ctx context.Context, db *sql.DB, dialect Dialect, opts Options) (failed.Store, error) {
	if db == nil {
		return nil, errors.New("failed: New with a nil *sql.DB")
	}
	if dialect < SQLite || dialect > PostgreSQL {
		return nil, fmt.Errorf("failed: unknown %v", dialect)
	}
	opts, err := opts.check()
	if err != nil {
		return nil, err
	}
	return newSQL(ctx, db, dialect, opts, false)
}

// Open opens the store a DSN names:
//
//	sqlite:PATH                                  SQLite file (pure Go driver)
//	mysql://user:pass@host:port/db?param=value   MySQL or MariaDB; params are go-sql-driver's
//	postgres://user:pass@host:port/db?sslmode=…  PostgreSQL (pgx); also postgresql:// and pgsql://
//	null                                         failed.NewNull()
//
// Open checks that the table has the columns the driver needs (creating it first as
// Options.CreateTable says). MySQL connections use utf8mb4/utf8mb4_unicode_ci, as
// Laravel's do, unless the DSN names another charset or collation. If the Laravel
// application sets `database.connections.mysql.timezone`, give the same value as the
// `time_zone` DSN parameter (quoted, e.g. time_zone=%27%2B00%3A00%27): MySQL converts
// TIMESTAMP columns through the session time zone, so both sides must use the same one.
func Open(ctx context.Context, dsn string, opts Options) (failed.Store, error) {
	opts, err := opts.check()
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(dsn) == "null" {
		return failed.NewNull(), nil
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
