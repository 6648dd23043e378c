package database

import (
	"fmt"
	"strings"
)

// quoteTable validates a table name ("table" or "schema.table") and quotes it for the
// dialect. Names are restricted to letters, digits, '_' and '$' so that no value from a
// config file can change a statement.
func quoteTable(d Dialect, name string) (string, error) {
	parts := strings.Split(name, ".")
	if len(parts) > 2 {
		return "", fmt.Errorf("failed: table name %q: at most one '.' (schema.table)", name)
	}
	for i, p := range parts {
		if p == "" {
			return "", fmt.Errorf("failed: table name %q: empty part", name)
		}
		for j, c := range p {
			ok := c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
			if !ok {
				return "", fmt.Errorf("failed: table name %q: character %q at offset %d is not allowed (letters, digits, _ and $ only)", name, c, j)
			}
		}
		parts[i] = quoteIdent(d, p)
	}
	return strings.Join(parts, "."), nil
}

func quoteIdent(d Dialect, name string) string {
	if d == MySQL {
		return "`" + name + "`"
	}
	return `"` + name + `"`
}

// Schema is the failed_jobs table one Laravel release's `php artisan queue:failed-table`
// (make:queue-failed-table from 11.x) migration stub creates, for CreateIfMissing. The
// zero value is the stub every release from 8.0 to 13.8 ships; SchemaFor picks the one
// of a release. The 11.x+ skeleton's own jobs migration still creates SchemaText, and a
// store reads and writes both alike: the schema only matters for the table laraq creates.
type Schema int

const (
	// SchemaText is the stub of Laravel 8.0–13.8: id, uuid (unique), connection and queue
	// as text, payload and exception as longText, failed_at (current timestamp).
	SchemaText Schema = iota
	// SchemaIndexed is the stub of Laravel 13.9+: connection and queue become string(255)
	// and an index on (connection, queue, failed_at) serves `queue:failed` filters.
	SchemaIndexed
)

func (s Schema) String() string {
	switch s {
	case SchemaText:
		return "8.0–13.8 stub"
	case SchemaIndexed:
		return "13.9+ stub"
	}
	return fmt.Sprintf("Schema(%d)", int(s))
}

// SchemaFor returns the schema of release major.minor's queue:failed-table stub: SchemaIndexed
// from 13.9 on (laravel/framework #60073), SchemaText before. An unknown release (major 0)
// gets the newest. 12.47.x shipped the index on the text columns and 12.48.0 withdrew it (the
// index cannot be built on MySQL text columns); laraq creates that release's table
// without it.
func SchemaFor(major, minor int) Schema {
	if major == 0 || major > 13 || major == 13 && minor >= 9 {
		return SchemaIndexed
	}
	return SchemaText
}

// createTableSQL returns the statements Laravel's schema grammar generates for the
// queue:failed-table migration of schema (8.x stub: id(), string('uuid')->unique(), text
// connection, text queue, longText payload, longText exception,
// timestamp('failed_at')->useCurrent(); 13.9+: string connection and queue and
// index(['connection', 'queue', 'failed_at'])), or for the 5.5–7.x stub without uuid when
// driver is Database. Index names follow Laravel's "<table>_<columns>_<type>" so a later
// Laravel migration recognises them.
func createTableSQL(d Dialect, drv Driver, schema Schema, table string) []string {
	qt, _ := quoteTable(d, table)
	base := strings.ReplaceAll(strings.ToLower(table), ".", "_")
	uniqueName := quoteIdent(d, base+"_uuid_unique")
	withUUID := drv == DatabaseUUIDs
	indexed := withUUID && schema == SchemaIndexed
	// connection and queue: text, or string(255) (SQLite's grammar writes a bare varchar).
	short := map[Dialect]string{MySQL: "varchar(255)", PostgreSQL: "varchar(255)", SQLite: "varchar"}[d]
	if !indexed {
		short = "text"
	}
	q := func(c string) string { return quoteIdent(d, c) }
	var index string
	if indexed {
		name := quoteIdent(d, base+"_connection_queue_failed_at_index")
		cols := q("connection") + ", " + q("queue") + ", " + q("failed_at")
		if d == MySQL {
			index = "alter table " + qt + " add index " + name + "(" + cols + ")"
		} else {
			index = "create index " + name + " on " + qt + " (" + cols + ")"
		}
	}
	var cols []string
	var out []string
	switch d {
	case MySQL:
		cols = append(cols, "`id` bigint unsigned not null auto_increment primary key")
		if withUUID {
			cols = append(cols, "`uuid` varchar(255) not null")
		}
		cols = append(cols,
			"`connection` "+short+" not null", "`queue` "+short+" not null",
			"`payload` longtext not null", "`exception` longtext not null",
			"`failed_at` timestamp default CURRENT_TIMESTAMP not null")
		out = []string{"create table if not exists " + qt + " (" + strings.Join(cols, ", ") +
			") default character set utf8mb4 collate 'utf8mb4_unicode_ci'"}
		if withUUID {
			out = append(out, "alter table "+qt+" add unique "+uniqueName+"(`uuid`)")
		}
	case PostgreSQL:
		cols = append(cols, `"id" bigserial primary key not null`)
		if withUUID {
			cols = append(cols, `"uuid" varchar(255) not null`)
		}
		// timestamp(0) without time zone: PostgreSQL keeps the wall-clock text as given,
		// rounded to whole seconds, and never converts it.
		cols = append(cols,
			`"connection" `+short+` not null`, `"queue" `+short+` not null`,
			`"payload" text not null`, `"exception" text not null`,
			`"failed_at" timestamp(0) without time zone default CURRENT_TIMESTAMP not null`)
		out = []string{"create table if not exists " + qt + " (" + strings.Join(cols, ", ") + ")"}
		if withUUID {
			out = append(out, "alter table "+qt+" add constraint "+uniqueName+` unique ("uuid")`)
		}
	default:
		cols = append(cols, `"id" integer not null primary key autoincrement`)
		if withUUID {
			cols = append(cols, `"uuid" varchar not null`)
		}
		cols = append(cols,
			`"connection" `+short+` not null`, `"queue" `+short+` not null`,
			`"payload" text not null`, `"exception" text not null`,
			`"failed_at" datetime default CURRENT_TIMESTAMP not null`)
		out = []string{"create table if not exists " + qt + " (" + strings.Join(cols, ", ") + ")"}
		if withUUID {
			out = append(out, "create unique index if not exists "+uniqueName+" on "+qt+` ("uuid")`)
		}
	}
	if index != "" {
		out = append(out, index)
	}
	return out
}
