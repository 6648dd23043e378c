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

// createTableSQL returns the statements Laravel's schema grammar generates for the
// queue:failed-table migration (8.x stub: id(), string('uuid')->unique(), text connection,
// text queue, longText payload, longText exception, timestamp('failed_at')->useCurrent()),
// or for the 5.5–7.x stub without uuid when driver is Database. Index names follow
// Laravel's "<table>_<column>_unique" so a later Laravel migration recognises them.
func createTableSQL(d Dialect, drv Driver, table string) []string {
	qt, _ := quoteTable(d, table)
	uniqueName := quoteIdent(d, strings.ReplaceAll(strings.ToLower(table), ".", "_")+"_uuid_unique")
	withUUID := drv == DatabaseUUIDs
	var cols []string
	switch d {
	case MySQL:
		cols = append(cols, "`id` bigint unsigned not null auto_increment primary key")
		if withUUID {
			cols = append(cols, "`uuid` varchar(255) not null")
		}
		cols = append(cols,
			"`connection` text not null", "`queue` text not null",
			"`payload` longtext not null", "`exception` longtext not null",
			"`failed_at` timestamp default CURRENT_TIMESTAMP not null")
		out := []string{"create table if not exists " + qt + " (" + strings.Join(cols, ", ") +
			") default character set utf8mb4 collate 'utf8mb4_unicode_ci'"}
		if withUUID {
			out = append(out, "alter table "+qt+" add unique "+uniqueName+"(`uuid`)")
		}
		return out
	case PostgreSQL:
		cols = append(cols, `"id" bigserial primary key not null`)
		if withUUID {
			cols = append(cols, `"uuid" varchar(255) not null`)
		}
		// timestamp(0) without time zone: PostgreSQL keeps the wall-clock text as given,
		// rounded to whole seconds, and never converts it.
		cols = append(cols,
			`"connection" text not null`, `"queue" text not null`,
			`"payload" text not null`, `"exception" text not null`,
			`"failed_at" timestamp(0) without time zone default CURRENT_TIMESTAMP not null`)
		out := []string{"create table if not exists " + qt + " (" + strings.Join(cols, ", ") + ")"}
		if withUUID {
			out = append(out, "alter table "+qt+" add constraint "+uniqueName+` unique ("uuid")`)
		}
		return out
	default:
		cols = append(cols, `"id" integer not null primary key autoincrement`)
		if withUUID {
			cols = append(cols, `"uuid" varchar not null`)
		}
		cols = append(cols,
			`"connection" text not null`, `"queue" text not null`,
			`"payload" text not null`, `"exception" text not null`,
			`"failed_at" datetime default CURRENT_TIMESTAMP not null`)
		out := []string{"create table if not exists " + qt + " (" + strings.Join(cols, ", ") + ")"}
		if withUUID {
			out = append(out, "create unique index if not exists "+uniqueName+" on "+qt+` ("uuid")`)
		}
		return out
	}
}
