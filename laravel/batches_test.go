package laravel

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
	_ "modernc.org/sqlite"
)

// TestConnectOpensJobBatches: Connect opens the application's job_batches table beside
// failed_jobs, and none when the application has no such table.
func TestConnectOpensJobBatches(t *testing.T) {
	srv := testenv.RedisServer(t)
	for _, withTable := range []bool{true, false} {
		var more []string
		if withTable {
			more = append(more, `create table job_batches (id varchar not null primary key, name varchar not null, total_jobs integer not null, pending_jobs integer not null, failed_jobs integer not null, failed_job_ids text not null, options text, cancelled_at integer, created_at integer not null, finished_at integer)`)
		}
		path, db := appDatabase(t, more...)
		db.Close()
		cfg, err := Load(App{LookupEnv: env("LARAQ_DATABASE", "sqlite:"+path, "LARAQ_REDIS_URL", "redis://"+srv.Addr+"/0")})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := cfg.Connect(context.Background(), ConnectOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if (conn.Batches != nil) != withTable {
			t.Errorf("job_batches present %v: Batches %v", withTable, conn.Batches)
		}
		if err := conn.Close(); err != nil {
			t.Error(err)
		}
	}
}

// appDatabase is an application's SQLite database with a failed_jobs table and the
// tables more creates: its path and an open handle.
func appDatabase(t *testing.T, more ...string) (string, *sql.DB) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "app.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	stmts := append([]string{`create table failed_jobs (id integer primary key autoincrement, uuid varchar not null unique, connection text not null, queue text not null, payload text not null, exception text not null, failed_at datetime not null default CURRENT_TIMESTAMP)`}, more...)
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	return path, db
}
