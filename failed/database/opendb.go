package database

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// OpenDB opens the database a DSN names (the forms Open takes, "null" excepted) for
// another table of the application, such as job_batches: the handle (the caller
// closes it), its dialect, and the DSN without its password for messages. SQLite
// handles wait for a writer of another process (busy_timeout) and begin their
// transactions IMMEDIATE, so that a read-then-update transaction never deadlocks with
// one in another process.
func OpenDB(ctx context.Context, dsn string) (*sql.DB, Dialect, string, error) {
	t, err := parseDSN(dsn)
	if err != nil {
		return nil, 0, "", err
	}
	conn := t.connString
	if t.dialect == SQLite {
		conn += "&_txlock=immediate"
		if !strings.Contains(t.connString, "?") {
			conn = t.connString + "?_txlock=immediate"
		}
	}
	db, err := sql.Open(t.driverName, conn)
	if err != nil {
		return nil, 0, "", fmt.Errorf("open %s: %w", t.dialect, err)
	}
	if t.dialect == SQLite {
		db.SetMaxOpenConns(1)
	}
	if err := db.PingContext(ctx); err != nil {
		_ = db.Close()
		return nil, 0, "", fmt.Errorf("open %s: %w", t.display, redact(err))
	}
	return db, t.dialect, t.display, nil
}

// QuoteTable checks a table name ("table" or "schema.table": letters, digits, _ and $)
// and quotes it for the dialect.
func QuoteTable(d Dialect, name string) (string, error) { return quoteTable(d, name) }
