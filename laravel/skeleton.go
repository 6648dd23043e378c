package laravel

import (
	"fmt"
	"strings"
	"sync"

	"github.com/laraq/laraq"
)

// era is a generation of laravel/laravel's config files, as far as the keys laraq reads
// differ between them.
type era int

const (
	era57  era = iota // 5.8–7.x: failed driver `database`
	era8              // 8.x: cache prefix '_cache', retry_after 90 literal, DATABASE_URL
	era10             // 9.x–10.x: cache prefix '_cache_', REDIS_USERNAME
	era11             // 11.x: CACHE_STORE, sqlite, DB_URL, REDIS_QUEUE_RETRY_AFTER, APP_TIMEZONE
	era120            // 12.x skeletons before v12.1.0, and the 12.x framework's own config: timezone 'UTC'
	era121            // skeletons from v12.1.0 (12.x and 13.x), 13.x framework: hyphenated prefixes
)

func (e era) String() string {
	return [...]string{"5.8–7.x", "8.x", "9.x–10.x", "11.x", "12.x (before skeleton v12.1.0)", "12.1+"}[e]
}

// skeletonEra is the skeleton an application of release rel was created from, as far as
// laraq can tell without its files: 12.x means the current 12.x skeleton (v12.1.0+).
func skeletonEra(rel laraq.Release) era {
	switch m := rel.Major; {
	case m < 8:
		return era57
	case m == 8:
		return era8
	case m <= 10:
		return era10
	case m == 11:
		return era11
	}
	return era121
}

// frameworkEra is the framework's own config/*.php of rel (11.x+), which Laravel merges
// under the application's files: a key or file the application leaves out comes from
// there. 12.x's framework files keep the underscore prefixes of the 12.0 skeleton.
func frameworkEra(rel laraq.Release) era {
	switch {
	case rel.Major <= 11:
		return era11
	case rel.Major == 12:
		return era120
	}
	return era121
}

// skeletonSource writes, for one era, the keys laraq reads of config/<file>.php as the
// skeleton sets them; prefixEra decides the two prefix expressions (PrefixStyle).
func skeletonSource(file string, e, prefixEra era) string {
	pick := func(old, new string, from era) string {
		if e >= from {
			return new
		}
		return old
	}
	var b strings.Builder
	b.WriteString("<?php return [\n")
	switch file {
	case "database":
		url := pick("env('DATABASE_URL')", "env('DB_URL')", era11)
		name, user := pick("'forge'", "'laravel'", era11), pick("'forge'", "'root'", era11)
		fmt.Fprintf(&b, "'default' => env('DB_CONNECTION', %s),\n", pick("'mysql'", "'sqlite'", era11))
		b.WriteString("'connections' => [\n")
		fmt.Fprintf(&b, "'sqlite' => ['driver' => 'sqlite', 'url' => %s, 'database' => env('DB_DATABASE', database_path('database.sqlite'))],\n", url)
		drivers := []struct{ name, host, port string }{{"mysql", "127.0.0.1", "3306"}, {"mariadb", "127.0.0.1", "3306"}, {"pgsql", "127.0.0.1", "5432"}, {"sqlsrv", "localhost", "1433"}}
		for _, d := range drivers {
			if d.name == "mariadb" && e < era11 {
				continue
			}
			fmt.Fprintf(&b, "'%s' => ['driver' => '%s', 'url' => %s, 'host' => env('DB_HOST', '%s'), 'port' => env('DB_PORT', '%s'), 'database' => env('DB_DATABASE', %s), 'username' => env('DB_USERNAME', %s), 'password' => env('DB_PASSWORD', '')],\n",
				d.name, d.name, url, d.host, d.port, name, user)
		}
		b.WriteString("],\n'redis' => [\n'client' => env('REDIS_CLIENT', 'phpredis'),\n")
		prefix := "env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_database_')"
		if prefixEra >= era121 {
			prefix = "env('REDIS_PREFIX', Str::slug((string) env('APP_NAME', 'laravel')).'-database-')"
		}
		fmt.Fprintf(&b, "'options' => ['cluster' => env('REDIS_CLUSTER', 'redis'), 'prefix' => %s],\n", prefix)
		username := pick("", "'username' => env('REDIS_USERNAME'), ", era10)
		for _, c := range []struct{ name, db string }{{"default", "env('REDIS_DB', '0')"}, {"cache", "env('REDIS_CACHE_DB', '1')"}} {
			fmt.Fprintf(&b, "'%s' => ['url' => env('REDIS_URL'), 'host' => env('REDIS_HOST', '127.0.0.1'), %s'password' => env('REDIS_PASSWORD'), 'port' => env('REDIS_PORT', '6379'), 'database' => %s],\n",
				c.name, username, c.db)
		}
		b.WriteString("],\n")
	case "cache":
		fmt.Fprintf(&b, "'default' => %s,\n", pick("env('CACHE_DRIVER', 'file')", "env('CACHE_STORE', 'database')", era11))
		fmt.Fprintf(&b, "'stores' => ['redis' => ['driver' => 'redis', 'connection' => %s], 'database' => %s],\n",
			pick("'cache'", "env('REDIS_CACHE_CONNECTION', 'cache')", era11),
			pick("['driver' => 'database', 'table' => 'cache', 'connection' => null, 'lock_connection' => null]",
				"['driver' => 'database', 'connection' => env('DB_CACHE_CONNECTION'), 'table' => env('DB_CACHE_TABLE', 'cache'), 'lock_connection' => env('DB_CACHE_LOCK_CONNECTION'), 'lock_table' => env('DB_CACHE_LOCK_TABLE')]", era11))
		switch {
		case prefixEra >= era121:
			b.WriteString("'prefix' => env('CACHE_PREFIX', Str::slug((string) env('APP_NAME', 'laravel')).'-cache-'),\n")
		case prefixEra <= era8:
			b.WriteString("'prefix' => env('CACHE_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_cache'),\n")
		default:
			b.WriteString("'prefix' => env('CACHE_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_cache_'),\n")
		}
	case "queue":
		fmt.Fprintf(&b, "'default' => env('QUEUE_CONNECTION', %s),\n", pick("'sync'", "'database'", era11))
		fmt.Fprintf(&b, "'connections' => ['redis' => ['driver' => 'redis', 'connection' => %s, 'queue' => env('REDIS_QUEUE', 'default'), 'retry_after' => %s, 'block_for' => null, 'after_commit' => false]],\n",
			pick("'default'", "env('REDIS_QUEUE_CONNECTION', 'default')", era11), pick("90", "(int) env('REDIS_QUEUE_RETRY_AFTER', 90)", era11))
		fmt.Fprintf(&b, "'failed' => ['driver' => env('QUEUE_FAILED_DRIVER', %s), 'database' => env('DB_CONNECTION', %s), 'table' => 'failed_jobs'],\n",
			pick("'database'", "'database-uuids'", era8), pick("'mysql'", "'sqlite'", era11))
	case "app":
		tz := "'UTC'"
		if e == era11 {
			tz = "env('APP_TIMEZONE', 'UTC')"
		}
		fmt.Fprintf(&b, "'timezone' => %s,\n'key' => env('APP_KEY'),\n'cipher' => 'AES-256-CBC',\n", tz)
	}
	b.WriteString("];\n")
	return b.String()
}

// configFileNames are the config files laraq reads.
var configFileNames = []string{"app", "cache", "database", "queue"}

var (
	skeletonMu    sync.Mutex
	skeletonCache = map[[2]era]map[string]*phpNode{}
)

// skeletonFiles returns the parsed skeleton files of an era.
func skeletonFiles(e, prefixEra era) map[string]*phpNode {
	skeletonMu.Lock()
	defer skeletonMu.Unlock()
	k := [2]era{e, prefixEra}
	if m, ok := skeletonCache[k]; ok {
		return m
	}
	m := map[string]*phpNode{}
	for _, f := range configFileNames {
		n, err := parseConfigFile(skeletonSource(f, e, prefixEra))
		if err != nil {
			panic(fmt.Sprintf("laravel: skeleton config/%s.php of %s does not parse: %v", f, e, err)) // a bug in skeletonSource
		}
		m[f] = n
	}
	skeletonCache[k] = m
	return m
}
