package database

import (
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/laraq/laraq/internal/secret"
)

// dsnTarget is a parsed DSN: which dialect, and the driver name and connection string
// database/sql needs.
type dsnTarget struct {
	dialect    Dialect
	driverName string
	connString string
	display    string // the DSN with its password replaced, for messages
}

// parseDSN turns one of Open's DSN forms into a database/sql target. Errors name the part
// of the DSN that is wrong but never repeat a password.
func parseDSN(dsn string) (dsnTarget, error) {
	t, err := parseDSNTarget(dsn)
	t.display = redactDSN(dsn)
	return t, err
}

// redactDSN masks a DSN's secrets (internal/secret, the tree's one redaction).
func redactDSN(dsn string) string { return secret.URL(dsn) }

func parseDSNTarget(dsn string) (dsnTarget, error) {
	scheme, rest, ok := strings.Cut(dsn, ":")
	if !ok {
		return dsnTarget{}, fmt.Errorf("%w: no scheme (want sqlite:PATH, mysql://…, postgres://… or null)", ErrBadDSN)
	}
	switch strings.ToLower(scheme) {
	case "sqlite", "sqlite3":
		path := strings.TrimPrefix(rest, "//")
		if path == "" {
			return dsnTarget{}, fmt.Errorf("%w: sqlite: empty path", ErrBadDSN)
		}
		// A concurrent PHP writer holds the file lock briefly; wait instead of failing.
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		return dsnTarget{dialect: SQLite, driverName: "sqlite",
			connString: path + sep + "_pragma=busy_timeout(10000)"}, nil
	case "mysql", "mariadb":
		conn, err := mysqlConnString(dsn)
		if err != nil {
			return dsnTarget{}, err
		}
		return dsnTarget{dialect: MySQL, driverName: "mysql", connString: conn}, nil
	case "postgres", "postgresql", "pgsql":
		u, err := url.Parse(dsn)
		if err != nil {
			return dsnTarget{}, fmt.Errorf("%w: postgres: %v", ErrBadDSN, redact(err))
		}
		if u.Host == "" {
			return dsnTarget{}, fmt.Errorf("%w: postgres: no host", ErrBadDSN)
		}
		if strings.Trim(u.Path, "/") == "" {
			return dsnTarget{}, fmt.Errorf("%w: postgres: no database name", ErrBadDSN)
		}
		u.Scheme = "postgres"
		return dsnTarget{dialect: PostgreSQL, driverName: "pgx", connString: u.String()}, nil
	}
	return dsnTarget{}, fmt.Errorf("%w: unknown scheme %q (want sqlite, mysql, postgres or null)", ErrBadDSN, scheme)
}

func mysqlConnString(dsn string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("%w: mysql: %v", ErrBadDSN, redact(err))
	}
	if u.Host == "" {
		return "", fmt.Errorf("%w: mysql: no host", ErrBadDSN)
	}
	db := strings.TrimPrefix(u.Path, "/")
	if db == "" || strings.Contains(db, "/") {
		return "", fmt.Errorf("%w: mysql: want one database name in the path, got %q", ErrBadDSN, u.Path)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "3306")
	}
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr, cfg.DBName = "tcp", addr, db
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	cfg.Timeout = 10 * time.Second
	q := u.Query()
	// Laravel connects with utf8mb4 / utf8mb4_unicode_ci (the skeleton's config); the
	// uuid lookup compares under that collation.
	if q.Get("charset") == "" && q.Get("collation") == "" {
		cfg.Collation = "utf8mb4_unicode_ci"
	}
	base := cfg.FormatDSN()
	if len(q) > 0 {
		sep := "?"
		if strings.Contains(base, "?") {
			sep = "&"
		}
		base += sep + q.Encode()
	}
	parsed, err := mysql.ParseDSN(base)
	if err != nil {
		return "", fmt.Errorf("%w: mysql: %v", ErrBadDSN, err)
	}
	return parsed.FormatDSN(), nil
}

// redact keeps url.Parse errors from echoing the DSN (and its password).
func redact(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}
