package laravel

import (
	"net"
	"net/url"
	"path/filepath"
	"strings"
)

// loadFailed derives the failed-job store: queue.failed.driver (QUEUE_FAILED_DRIVER),
// its table, and a DSN for failed.Open from the application's default database
// connection (DB_CONNECTION with DB_HOST, DB_PORT, DB_DATABASE, DB_USERNAME, DB_PASSWORD,
// or DB_URL / DATABASE_URL), as config/database.php builds it.
func (c *Config) loadFailed(r *resolver, app appFiles) error {
	def := DefaultFailedDriver
	if c.major() < 8 {
		def = "database"
	}
	c.FailedDriver = r.str("FailedDriver", "QUEUE_FAILED_DRIVER", def)
	c.FailedTable = r.str("FailedTable", "QUEUE_FAILED_TABLE", DefaultFailedTable)
	if c.FailedTable == "" {
		c.FailedTable = DefaultFailedTable
	}
	if v, origin, ok := r.override("DATABASE"); ok {
		c.FailedDatabase = v
		r.origins["FailedDatabase"] = origin
		return nil
	}
	switch c.FailedDriver {
	case "null", "":
		c.FailedDatabase = "null"
		r.origins["FailedDatabase"] = r.origins["FailedDriver"]
		return nil
	case "database", "database-uuids":
	default:
		c.warn("failed-job driver %q (%s) is not supported by laraq (database-uuids and database are); failed jobs cannot be shared with PHP", c.FailedDriver, r.origins["FailedDriver"])
		return nil
	}

	urlVar := "DATABASE_URL"
	if c.major() >= 11 {
		urlVar = "DB_URL"
	}
	if v, origin := r.get("FailedDatabase", urlVar); v.set && !v.null && v.str != "" {
		dsn, ok := dsnFromURL(v.str, app)
		if !ok {
			c.warn("%s (%s) names a database laraq cannot open; set LARAQ_DATABASE", urlVar, origin)
			return nil
		}
		c.FailedDatabase = dsn
		return nil
	}

	connDefault, dbDefault, userDefault := "mysql", "forge", "forge"
	if c.major() >= 11 {
		connDefault, dbDefault, userDefault = "sqlite", "laravel", "root"
	}
	conn := r.str("DBConnection", "DB_CONNECTION", connDefault)
	// The failed database is as much named as DB_CONNECTION is.
	r.origins["FailedDatabase"] = r.origins["DBConnection"]
	switch conn {
	case "sqlite":
		path := r.str("DBDatabase", "DB_DATABASE", "")
		dir := app.databaseDir
		switch {
		case path == ":memory:":
			c.warn("DB_DATABASE is :memory:; an in-memory SQLite database cannot be shared, set LARAQ_DATABASE")
			return nil
		case path == "" && dir == "":
			if r.origins["DBConnection"].Kind != Default {
				c.warn("DB_CONNECTION is sqlite with the default database/database.sqlite; pass --laravel-root (or LARAQ_DATABASE) so laraq finds it")
			}
			return nil
		case path == "":
			path = filepath.Join(dir, "database.sqlite")
		case !filepath.IsAbs(path) && dir != "":
			// `php artisan` runs in the application root; a relative DB_DATABASE is
			// relative to it.
			path = filepath.Join(filepath.Dir(dir), path)
		}
		c.FailedDatabase = "sqlite:" + path
	case "mysql", "mariadb", "pgsql":
		port := "3306"
		scheme := "mysql"
		if conn == "pgsql" {
			port, scheme = "5432", "postgres"
		}
		host := r.str("DBHost", "DB_HOST", "127.0.0.1")
		port = r.str("DBPort", "DB_PORT", port)
		name := r.str("DBDatabase", "DB_DATABASE", dbDefault)
		user := r.str("DBUsername", "DB_USERNAME", userDefault)
		pass := r.str("DBPassword", "DB_PASSWORD", "")
		u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port), Path: "/" + name}
		if pass != "" {
			u.User = url.UserPassword(user, pass)
		} else if user != "" {
			u.User = url.User(user)
		}
		c.FailedDatabase = u.String()
	default:
		c.warn("DB_CONNECTION %q (%s) is not supported for failed jobs (sqlite, mysql, mariadb and pgsql are); set LARAQ_DATABASE", conn, r.origins["DBConnection"])
	}
	return nil
}

// dsnFromURL turns a Laravel database URL into one of failed.Open's DSN forms.
func dsnFromURL(s string, app appFiles) (string, bool) {
	u, err := url.Parse(s)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "mysql", "mysql2", "mariadb":
		u.Scheme = "mysql"
		return u.String(), true
	case "postgres", "postgresql", "pgsql":
		u.Scheme = "postgres"
		return u.String(), true
	case "sqlite", "sqlite3":
		// sqlite:///abs/path, or sqlite://null/... as Laravel rewrites it.
		path := u.Path
		if u.Host != "" && u.Host != "null" {
			path = u.Host + path
		}
		if path == "" {
			return "", false
		}
		if !filepath.IsAbs(path) && app.databaseDir != "" {
			path = filepath.Join(filepath.Dir(app.databaseDir), path)
		}
		return "sqlite:" + path, true
	}
	return "", false
}
