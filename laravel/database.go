package laravel

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strings"
)

// loadFailed derives the failed-job store as QueueServiceProvider does from
// queue.failed (driver, database, table), and a DSN for database.Open from the
// connection it names in config/database.php (driver, url, host, port, database,
// username, password; sqlite's path relative to the application root).
func (l *loader) loadFailed() error {
	c, r := l.c, l.r
	driverSet := setting{name: "FailedDriver", file: "queue", path: []string{"failed", "driver"}, vars: []string{"QUEUE_FAILED_DRIVER"}}
	driver := l.value(driverSet)
	driverAbsent := driver.origin.Kind == ConfigFile && l.layers.get("queue", "failed", "driver").status == absent
	c.FailedTable = l.str(setting{name: "FailedTable", file: "queue", path: []string{"failed", "table"}, vars: []string{"QUEUE_FAILED_TABLE"}}, "")
	tableSet := c.FailedTable != ""
	if !tableSet {
		c.FailedTable = DefaultFailedTable
	}
	switch d := driver.str(); {
	case !driverAbsent && (driver.v.kind == phpNull || d == "null"):
		c.FailedDriver = "null"
	case d == "database-uuids":
		c.FailedDriver = d
	case d == "file" || d == "dynamodb":
		c.FailedDriver = d
		c.warn("failed-job driver %q (%s) is not supported by laraq (database-uuids and database are); failed jobs cannot be shared with PHP", d, r.origins["FailedDriver"])
		return nil
	case !tableSet:
		c.FailedDriver = "null" // no table: Laravel's NullFailedJobProvider
	default:
		if d != "database" && d != "" {
			c.warn("failed-job driver %q (%s) is none Laravel knows: with a table it keeps failed jobs with the legacy \"database\" provider, and so does laraq", d, r.origins["FailedDriver"])
		}
		c.FailedDriver = "database"
	}
	if v, origin, ok := r.override("DATABASE"); ok {
		c.FailedDatabase = v
		r.origins["FailedDatabase"] = origin
		return nil
	}
	if c.FailedDriver == "null" {
		c.FailedDatabase = "null"
		r.origins["FailedDatabase"] = r.origins["FailedDriver"]
		return nil
	}

	// DatabaseFailedJobProvider: queue.failed.database, null for the default connection.
	name := l.str(setting{name: "FailedConnection", file: "queue", path: []string{"failed", "database"}, vars: []string{"DB_CONNECTION"}}, "")
	r.origins["DBConnection"] = r.origins["FailedConnection"]
	if name == "" {
		name = l.str(setting{name: "DBConnection", file: "database", path: []string{"default"}, vars: []string{"DB_CONNECTION"}}, "")
		r.origins["FailedConnection"] = r.origins["DBConnection"]
	}
	c.FailedConnection = name
	// The failed database is as much named as the connection is.
	r.origins["FailedDatabase"] = r.origins["FailedConnection"]
	use := dbUse{what: "the failed-job table", forWhat: "failed jobs", override: "LARAQ_DATABASE", connVar: "DB_CONNECTION",
		urlOrigin: "FailedDatabaseURL", named: r.origins["FailedConnection"].Named()}
	if dsn, origin, ok := l.connectionDSN(name, r.origins["FailedConnection"], use); ok {
		c.FailedDatabase = dsn
		if origin.Kind != Default {
			r.origins["FailedDatabase"] = origin
		}
	}
	return nil
}

// dbUse is what a database connection is opened for, in connectionDSN's warnings and
// origins.
type dbUse struct {
	what     string // "the failed-job table"
	forWhat  string // "failed jobs"
	override string // the variable that names its DSN instead: "LARAQ_DATABASE"
	connVar  string // the variable that names the connection: "DB_CONNECTION"
	origins  string // before the origin names of its settings (DBHost, …)
	// urlOrigin is the origin name of its url setting.
	urlOrigin string
	named     bool // the connection was named by the application, not a default
}

// connectionDSN builds a DSN for database.Open from the connection name of
// config/database.php (driver, url, host, port, database, username, password; sqlite's
// path relative to the application root). nameOrigin is where name came from. ok false:
// no DSN can be built, and why is a warning. origin is the URL's when one was used.
func (l *loader) connectionDSN(name string, nameOrigin Origin, use dbUse) (dsn string, origin Origin, ok bool) {
	c := l.c
	if lk := l.layers.get("database", "connections", name); lk.status == absent || lk.status == unknown || lk.node == nil || !lk.node.isArray {
		where := lk.file
		if lk.status == builtin {
			where = fmt.Sprintf("the %s skeleton's %s", l.layers.skelEra, lk.file)
		}
		c.warn("database connection %q (%s) is not in %s: laraq cannot open %s; set %s", name, nameOrigin, where, use.what, use.override)
		return "", Origin{}, false
	}
	get := func(origin, key string, vars ...string) value {
		return l.value(setting{name: use.origins + origin, file: "database", path: []string{"connections", name, key}, vars: vars})
	}
	dbDriver := l.str(setting{name: use.origins + "DBDriver", file: "database", path: []string{"connections", name, "driver"}}, name)
	if u := l.value(setting{name: use.urlOrigin, file: "database", path: []string{"connections", name, "url"}, vars: []string{"DB_URL", "DATABASE_URL"}}); u.ok && u.v.kind != phpNull && u.str() != "" {
		dsn, ok := dsnFromURL(u.str(), l.base)
		if !ok {
			c.warn("the database URL (%s) names a database laraq cannot open; set %s", u.origin, use.override)
			return "", Origin{}, false
		}
		return dsn, u.origin, true
	}
	switch dbDriver {
	case "sqlite":
		db := get("DBDatabase", "database", "DB_DATABASE")
		path := db.str()
		switch {
		case path == ":memory:":
			c.warn("DB_DATABASE is :memory:; an in-memory SQLite database cannot be shared, set %s", use.override)
			return "", Origin{}, false
		case path == "" && l.base == "":
			if use.named {
				c.warn("%s is sqlite with the default database/database.sqlite; pass --laravel-root (or %s) so laraq finds %s",
					use.connVar, use.override, use.what)
			}
			return "", Origin{}, false
		case path == "":
			path = filepath.Join(l.base, "database", "database.sqlite")
		case !filepath.IsAbs(path) && l.base != "":
			// `php artisan` runs in the application root; a relative path is relative to it.
			path = filepath.Join(l.base, path)
		}
		return "sqlite:" + path, Origin{}, true
	case "mysql", "mariadb", "pgsql":
		port, scheme := "3306", "mysql"
		if dbDriver == "pgsql" {
			port, scheme = "5432", "postgres"
		}
		host := get("DBHost", "host", "DB_HOST").str()
		if host == "" {
			host = "127.0.0.1"
		}
		if p := get("DBPort", "port", "DB_PORT"); p.ok && p.v.kind != phpNull && p.str() != "" {
			port = p.str()
		}
		dbName := get("DBDatabase", "database", "DB_DATABASE").str()
		user := get("DBUsername", "username", "DB_USERNAME").str()
		pass := get("DBPassword", "password", "DB_PASSWORD").str()
		u := url.URL{Scheme: scheme, Host: net.JoinHostPort(host, port), Path: "/" + dbName}
		if pass != "" {
			u.User = url.UserPassword(user, pass)
		} else if user != "" {
			u.User = url.User(user)
		}
		return u.String(), Origin{}, true
	}
	c.warn("database connection %q (%s) has driver %q, which laraq does not support for %s (sqlite, mysql, mariadb and pgsql are); set %s",
		name, nameOrigin, dbDriver, use.forWhat, use.override)
	return "", Origin{}, false
}

// dsnFromURL turns a Laravel database URL into one of failed.Open's DSN forms.
func dsnFromURL(s string, base string) (string, bool) {
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
		if !filepath.IsAbs(path) && base != "" {
			path = filepath.Join(base, path)
		}
		return "sqlite:" + path, true
	}
	return "", false
}

// loadCacheDatabase derives the database of an application's database cache store:
// LARAQ_CACHE_DATABASE, else the connection stores.database.connection names
// (DB_CACHE_CONNECTION), else the default connection, from config/database.php as
// DatabaseStore opens it. Never the failed-job store's override: that one may be a
// database of laraq's own, where PHP reads no signal.
func (l *loader) loadCacheDatabase() {
	c, r := l.c, l.r
	if c.CacheDriver != "database" || !chosen(r.origins["CacheStore"]) {
		return
	}
	if v, origin, ok := r.override("CACHE_DATABASE"); ok {
		c.CacheDatabase = v
		r.origins["CacheDatabase"] = origin
		return
	}
	name, origin := c.CacheDBConnection, r.origins["CacheDBConnection"]
	if name == "" {
		name = l.str(setting{name: "CacheDBDefault", file: "database", path: []string{"default"}, vars: []string{"DB_CONNECTION"}}, "")
		origin = r.origins["CacheDBDefault"]
	}
	connVar := "DB_CACHE_CONNECTION"
	if c.CacheDBConnection == "" {
		connVar = "DB_CONNECTION"
	}
	use := dbUse{what: "the database cache store", forWhat: "the cache store", override: "LARAQ_CACHE_DATABASE", connVar: connVar,
		origins: "Cache", urlOrigin: "CacheDatabaseURL", named: origin.Named()}
	dsn, urlOrigin, ok := l.connectionDSN(name, origin, use)
	if !ok {
		return
	}
	c.CacheDatabase = dsn
	r.origins["CacheDatabase"] = origin
	if urlOrigin.Kind != Default {
		r.origins["CacheDatabase"] = urlOrigin
	}
}
