package chaos

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// FailedRow is one row of failed_jobs as the workers wrote it.
type FailedRow struct {
	ID        int64
	UUID      string
	Queue     string
	Payload   string
	Exception string
}

// Key is the suite key the row's payload carries ("" when none).
func (f FailedRow) Key() string { return FindKey([]byte(f.Payload)) }

// ExceptionClass is the first word of the exception text (PHP's Throwable form starts
// with the class name).
func (f FailedRow) ExceptionClass() string {
	c, _, _ := strings.Cut(f.Exception, ":")
	return c
}

// openFailedDB opens a failed-job DSN as `laraq work --database` takes it: sqlite:PATH
// or mysql://user:pass@host:port/db.
func openFailedDB(dsn string) (db *sql.DB, mysqlDialect bool, err error) {
	if path, ok := strings.CutPrefix(dsn, "sqlite:"); ok {
		db, err = sql.Open("sqlite", path+"?_pragma=busy_timeout(10000)")
		return db, false, err
	}
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme != "mysql" {
		return nil, false, fmt.Errorf("chaos: failed-job DSN %q: want sqlite:PATH or mysql://user:pass@host:port/db", dsn)
	}
	cfg := mysql.NewConfig()
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", u.Host, strings.TrimPrefix(u.Path, "/")
	cfg.Timeout = 2 * time.Second
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return nil, false, err
	}
	return sql.OpenDB(conn), true, nil
}

// CreateFailedTable creates failed_jobs with the columns of Laravel 8's
// queue:failed-table migration (uuid unique), which the PHP and Go workers both write.
func CreateFailedTable(ctx context.Context, dsn string) error {
	db, my, err := openFailedDB(dsn)
	if err != nil {
		return err
	}
	defer db.Close()
	stmts := []string{
		`create table if not exists failed_jobs (id integer not null primary key autoincrement,
			uuid varchar not null, connection text not null, queue text not null,
			payload text not null, exception text not null, failed_at datetime default CURRENT_TIMESTAMP not null)`,
		`create unique index if not exists failed_jobs_uuid_unique on failed_jobs (uuid)`,
	}
	if my {
		stmts = []string{
			"create table if not exists `failed_jobs` (`id` bigint unsigned not null auto_increment primary key, " +
				"`uuid` varchar(255) not null, `connection` text not null, `queue` text not null, " +
				"`payload` longtext not null, `exception` longtext not null, " +
				"`failed_at` timestamp default CURRENT_TIMESTAMP not null, unique key `failed_jobs_uuid_unique` (`uuid`)) " +
				"default character set utf8mb4 collate utf8mb4_unicode_ci",
		}
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("chaos: create failed_jobs: %w", err)
		}
	}
	return nil
}

// ReadFailed returns every failed_jobs row.
func ReadFailed(ctx context.Context, dsn string) ([]FailedRow, error) {
	db, _, err := openFailedDB(dsn)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "select id, uuid, queue, payload, exception from failed_jobs order by id")
	if err != nil {
		return nil, fmt.Errorf("chaos: reading failed_jobs: %w", err)
	}
	defer rows.Close()
	var out []FailedRow
	for rows.Next() {
		var r FailedRow
		if err := rows.Scan(&r.ID, &r.UUID, &r.Queue, &r.Payload, &r.Exception); err != nil {
			return nil, fmt.Errorf("chaos: reading failed_jobs: %w", err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
