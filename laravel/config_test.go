package laravel

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraq/laraq"
	"github.com/redis/go-redis/v9"
)

// env returns a LookupEnv over a fixed map (tests never read the real environment).
func env(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeEnv(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustLoad(t *testing.T, src App) *Config {
	t.Helper()
	if src.LookupEnv == nil && src.Getenv == nil {
		src.LookupEnv = env()
	}
	c, err := Load(src)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestLoadLaravel8App(t *testing.T) {
	c := mustLoad(t, App{Root: "testdata/app8"})
	if c.major() != 8 {
		t.Errorf("version %d", c.major())
	}
	if c.Prefix != "acme_shop_database_" || c.CachePrefix != "acme_shop_cache" || !c.CacheScheme().Separator {
		t.Errorf("prefixes %q %q %v", c.Prefix, c.CachePrefix, c.CacheScheme().Separator)
	}
	if got := c.CacheScheme().RestartKey(); got != "acme_shop_database_acme_shop_cache:illuminate:queue:restart" {
		t.Errorf("restart key %q", got)
	}
	// 8.x's config/app.php writes the timezone; APP_TIMEZONE in .env is not read.
	if c.Timezone != "UTC" {
		t.Errorf("timezone %q", c.Timezone)
	}
	want := Redis{Addrs: []string{"redis.internal:6380"}, DB: 0}
	if c.Redis.String() != want.String() || c.Redis.Password != "" {
		t.Errorf("redis %s password %q", c.Redis, c.Redis.Password)
	}
	if c.CacheRedis.DB != 1 || c.CacheRedis.Addrs[0] != "redis.internal:6380" {
		t.Errorf("cache redis %s", c.CacheRedis)
	}
	if c.FailedDatabase != "mysql://shop:s3cr3t%20p%40ss@db.internal:3307/shop" {
		t.Errorf("failed DSN %q", c.FailedDatabase)
	}
	if c.FailedDriver != "database-uuids" || c.FailedTable != "failed_jobs" {
		t.Errorf("failed %q %q", c.FailedDriver, c.FailedTable)
	}
	if string(c.AppKey) != "0123456789abcdef0123456789abcdef" {
		t.Errorf("app key %q", c.AppKey)
	}
	if c.CacheStore != "redis" || c.DefaultConnection != "redis" || c.Queue != "default" || c.RetryAfter != 90 {
		t.Errorf("store %q conn %q queue %q retry %d", c.CacheStore, c.DefaultConnection, c.Queue, c.RetryAfter)
	}
	// The .env sets APP_TIMEZONE, which 8.x's config/app.php does not read: PHP ignores it.
	if len(c.Warnings) != 1 || !strings.HasPrefix(c.Warnings[0], "APP_TIMEZONE is set (testdata/app8/.env:5), but config/app.php:70 does not read it") {
		t.Errorf("warnings %q", c.Warnings)
	}
	if o := c.Origins["Prefix"].String(); o != "config/database.php:126" {
		t.Errorf("prefix origin %q", o)
	}
	if o := c.Origins["RedisHost"].String(); !strings.HasSuffix(o, filepath.Join("app8", ".env")+":17") {
		t.Errorf("host origin %q", o)
	}
}

func TestLoadLaravel12App(t *testing.T) {
	c := mustLoad(t, App{Root: "testdata/app12"})
	if c.major() != 12 || c.Prefix != "acme-shop-database-" || c.CachePrefix != "acme-shop-cache-" || c.CacheScheme().Separator {
		t.Errorf("version %d prefixes %q %q %v", c.major(), c.Prefix, c.CachePrefix, c.CacheScheme().Separator)
	}
	if got := c.CacheScheme().PauseKey("redis", "default"); got != "acme-shop-database-acme-shop-cache-illuminate:queue:paused:redis:default" {
		t.Errorf("paused key %q", got)
	}
	if c.Timezone != "America/New_York" {
		t.Errorf("timezone %q", c.Timezone)
	}
	// The URL's /3 is the database of both connections, as the skeleton gives both the same url.
	if c.Redis.Addrs[0] != "redis.internal:6390" || c.Redis.Username != "queue" || c.Redis.Password != "hunter2" ||
		c.Redis.DB != 3 || c.CacheRedis.DB != 3 {
		t.Errorf("redis %+v cache %+v", c.Redis, c.CacheRedis)
	}
	abs, _ := filepath.Abs("testdata/app12/database/database.sqlite")
	if c.FailedDatabase != "sqlite:"+filepath.Join("testdata", "app12", "database", "database.sqlite") && c.FailedDatabase != "sqlite:"+abs {
		t.Errorf("failed DSN %q", c.FailedDatabase)
	}
	if string(c.AppKey) != "rawkeyrawkeyrawkeyrawkeyrawkey12" {
		t.Errorf("app key %q", c.AppKey)
	}
	// APP_ENV in the process environment selects .env.staging, as Laravel does.
	c = mustLoad(t, App{Root: "testdata/app12", LookupEnv: env("APP_ENV", "staging")})
	if c.Prefix != "staging-database-" || c.Redis.Addrs[0] != "127.0.0.1:6379" {
		t.Errorf("staging: prefix %q redis %s", c.Prefix, c.Redis)
	}
}

func TestPrecedence(t *testing.T) {
	file := writeEnv(t, "REDIS_HOST=from-file\nREDIS_PORT=7000\nREDIS_DB=4\nREDIS_QUEUE=file-queue\nAPP_NAME=FileApp\n")
	lookup := env("REDIS_HOST", "from-env", "LARAQ_REDIS_PORT", "7001", "LARAQ_REDIS_QUEUE", "env-queue")
	c := mustLoad(t, App{EnvFile: file, LookupEnv: lookup, Release: majorRelease(10),
		Flags: map[string]string{"LARAQ_REDIS_QUEUE": "flag-queue"}})
	checks := []struct{ got, want, origin, wantOrigin string }{
		{c.Redis.Addrs[0], "from-env:7001", c.Origins["RedisHost"].String(), "environment REDIS_HOST"},
		{c.Queue, "flag-queue", c.Origins["Queue"].String(), "flag LARAQ_REDIS_QUEUE"},
		{c.Prefix, "fileapp_database_", c.Origins["Prefix"].String(), "default"},
		{c.CachePrefix, "fileapp_cache_", c.Origins["CachePrefix"].String(), "default"},
	}
	for _, ch := range checks {
		if ch.got != ch.want || ch.origin != ch.wantOrigin {
			t.Errorf("got %q from %q, want %q from %q", ch.got, ch.origin, ch.want, ch.wantOrigin)
		}
	}
	if c.Origins["RedisPort"].String() != "environment LARAQ_REDIS_PORT" || c.Redis.DB != 4 || !strings.HasSuffix(c.Origins["RedisDB"].String(), ".env:3") {
		t.Errorf("port origin %q db %d from %q", c.Origins["RedisPort"].String(), c.Redis.DB, c.Origins["RedisDB"].String())
	}
	// A LARAQ_ override of one part beats the application's REDIS_URL; REDIS_HOST does not.
	file = writeEnv(t, "REDIS_URL=redis://u:p@url-host:7100/5\nREDIS_HOST=ignored\n")
	c = mustLoad(t, App{EnvFile: file, LookupEnv: env("LARAQ_REDIS_DB", "6")})
	if c.Redis.Addrs[0] != "url-host:7100" || c.Redis.DB != 6 || c.CacheRedis.DB != 5 || c.Redis.Password != "p" {
		t.Errorf("url merge: %+v / cache db %d", c.Redis, c.CacheRedis.DB)
	}
}

func TestVersionDefaults(t *testing.T) {
	for _, tc := range []struct {
		version       int
		style         PrefixStyle
		prefix, cache string
		sep           bool
		restart       string
	}{
		{8, PrefixAuto, "laravel_database_", "laravel_cache", true, "laravel_database_laravel_cache:illuminate:queue:restart"},
		{9, PrefixAuto, "laravel_database_", "laravel_cache_", true, "laravel_database_laravel_cache_:illuminate:queue:restart"},
		{10, PrefixAuto, "laravel_database_", "laravel_cache_", true, "laravel_database_laravel_cache_:illuminate:queue:restart"},
		{11, PrefixAuto, "laravel_database_", "laravel_cache_", false, "laravel_database_laravel_cache_illuminate:queue:restart"},
		{12, PrefixAuto, "laravel-database-", "laravel-cache-", false, "laravel-database-laravel-cache-illuminate:queue:restart"},
		{12, PrefixUnderscore, "laravel_database_", "laravel_cache_", false, "laravel_database_laravel_cache_illuminate:queue:restart"},
		{13, PrefixAuto, "laravel-database-", "laravel-cache-", false, "laravel-database-laravel-cache-illuminate:queue:restart"},
	} {
		// APP_NAME in the environment names an application, whose skeleton derives the prefix.
		c := mustLoad(t, App{Release: majorRelease(tc.version), PrefixStyle: tc.style, LookupEnv: env("APP_NAME", "Laravel")})
		if c.Prefix != tc.prefix || c.CachePrefix != tc.cache || c.CacheScheme().Separator != tc.sep || c.CacheScheme().RestartKey() != tc.restart {
			t.Errorf("v%d style %d: %q %q %v %q", tc.version, tc.style, c.Prefix, c.CachePrefix, c.CacheScheme().Separator, c.CacheScheme().RestartKey())
		}
		// Without any application the connection prefix is empty; the cache key keeps the
		// version's cache prefix and separator.
		c = mustLoad(t, App{Release: majorRelease(tc.version), PrefixStyle: tc.style})
		if want := strings.TrimPrefix(tc.restart, tc.prefix); c.Prefix != "" || c.CacheScheme().RestartKey() != want {
			t.Errorf("v%d style %d without application: prefix %q restart %q, want %q", tc.version, tc.style, c.Prefix, c.CacheScheme().RestartKey(), want)
		}
	}
	c := mustLoad(t, App{LookupEnv: env("LARAQ_LARAVEL_VERSION", "12.40.2", "LARAQ_PREFIX_STYLE", "underscore", "APP_NAME", "laravel")})
	if c.major() != 12 || c.Prefix != "laravel_database_" {
		t.Errorf("from LARAQ_*: %d %q", c.major(), c.Prefix)
	}
	if _, err := Load(App{LookupEnv: env("LARAQ_PREFIX_STYLE", "camel")}); err == nil || !strings.Contains(err.Error(), "LARAQ_PREFIX_STYLE") {
		t.Errorf("bad style: %v", err)
	}
	if _, err := Load(App{LookupEnv: env("LARAQ_LARAVEL_VERSION", "four")}); err == nil {
		t.Error("bad version accepted")
	}
}

func TestPrefixValues(t *testing.T) {
	for _, tc := range []struct {
		file, prefix, cache string
	}{
		{"REDIS_PREFIX=\nCACHE_PREFIX=\n", "", ""},                                // set but empty: no prefix
		{"REDIS_PREFIX=null\n", "", "laravel_cache"},                              // env() null
		{"APP_NAME=null\n", "_database_", "_cache"},                               // Str::slug(null)
		{"APP_NAME=true\n", "1_database_", "1_cache"},                             // (string) true
		{"APP_NAME=\"Café Crème\"\n", "cafe_creme_database_", "cafe_creme_cache"}, // transliterated
		{"REDIS_PREFIX=custom:\nCACHE_PREFIX=c\n", "custom:", "c"},
	} {
		c := mustLoad(t, App{EnvFile: writeEnv(t, tc.file), Release: majorRelease(8)})
		if c.Prefix != tc.prefix || c.CachePrefix != tc.cache {
			t.Errorf("%q: prefix %q cache %q, want %q %q", tc.file, c.Prefix, c.CachePrefix, tc.prefix, tc.cache)
		}
	}
}

func TestRedisURLs(t *testing.T) {
	for _, tc := range []struct {
		url  string
		want Redis
		db   int
	}{
		{"redis://localhost", Redis{Addrs: []string{"localhost:6379"}}, 0},
		{"rediss://:pw@cache.example:6380/2", Redis{Addrs: []string{"cache.example:6380"}, Password: "pw", TLS: true}, 2},
		{"tls://user:p%40ss%3Aw@h:1?database=7", Redis{Addrs: []string{"h:1"}, Username: "user", Password: "p@ss:w", TLS: true}, 7},
		{"tcp://h:2/", Redis{Addrs: []string{"h:2"}}, 0},
	} {
		c := mustLoad(t, App{LookupEnv: env("REDIS_URL", tc.url)})
		w := tc.want
		w.DB = tc.db
		if c.Redis.String() != w.String() || c.Redis.Password != w.Password || c.Redis.Username != w.Username || c.Redis.DB != tc.db {
			t.Errorf("%s: got %+v want %+v", tc.url, c.Redis, w)
		}
	}
	for _, bad := range []string{
		"redis://user:sup3r%zzsecret@h:1",
		"redis://us{er:sup3rsecret@h:1",
		"redis://user:sup3rsecret@h:port",
		"redis://user:sup3rsecret@h:1/x",
		"http://user:sup3rsecret@h:1",
	} {
		_, err := Load(App{LookupEnv: env("REDIS_URL", bad)})
		if err == nil {
			t.Errorf("%s accepted", bad)
			continue
		}
		if strings.Contains(err.Error(), "sup3r") || strings.Contains(err.Error(), "secret") {
			t.Errorf("error repeats the password: %v", err)
		}
		if !strings.Contains(err.Error(), "REDIS_URL") {
			t.Errorf("error does not say which setting: %v", err)
		}
	}
}

func TestSentinelAndCluster(t *testing.T) {
	c := mustLoad(t, App{LookupEnv: env("LARAQ_REDIS_SENTINEL", "s1:26379, s2:26379", "LARAQ_REDIS_SENTINEL_MASTER", "queue-master",
		"LARAQ_REDIS_SENTINEL_PASSWORD", "spw", "REDIS_PASSWORD", "pw")})
	o, err := c.Redis.UniversalOptions()
	if err != nil {
		t.Fatal(err)
	}
	if o.MasterName != "queue-master" || len(o.Addrs) != 2 || o.Addrs[1] != "s2:26379" || o.SentinelPassword != "spw" || o.Password != "pw" {
		t.Errorf("sentinel options %+v", o)
	}
	c = mustLoad(t, App{LookupEnv: env("LARAQ_REDIS_CLUSTER", "n1:7000,n2:7001,n3:7002")})
	o, _ = c.Redis.UniversalOptions()
	if !o.IsClusterMode || len(o.Addrs) != 3 || o.DB != 0 || c.CacheRedis.DB != 0 {
		t.Errorf("cluster options %+v cache db %d", o, c.CacheRedis.DB)
	}
	clients, err := testClients(c)
	if err != nil {
		t.Fatal(err)
	}
	defer clients.Close()
	if clients.Cache != clients.Queue {
		t.Error("cluster: cache and queue should share one client")
	}
	if _, err := Load(App{LookupEnv: env("LARAQ_REDIS_CLUSTER", "n1:7000", "LARAQ_REDIS_SENTINEL", "s:1")}); err == nil {
		t.Error("sentinel and cluster together accepted")
	}
	if _, err := Load(App{LookupEnv: env("LARAQ_REDIS_CLUSTER", "n1")}); err == nil {
		t.Error("address without port accepted")
	}
}

func TestSecretsAreRedacted(t *testing.T) {
	file := writeEnv(t, "APP_KEY=base64:c2VjcmV0LWtleS1ieXRlcy0xMjM0NTY3ODkwMTIzNA==\nREDIS_URL=redis://user:redispw-42@h:1/0\nDB_CONNECTION=pgsql\nDB_PASSWORD=dbpw-42\n")
	c := mustLoad(t, App{EnvFile: file, LookupEnv: env("LARAQ_REDIS_SENTINEL_PASSWORD", "sentpw-42", "LARAQ_REDIS_SENTINEL", "s:1")})
	if c.Redis.Password != "redispw-42" || !strings.Contains(c.FailedDatabase, "dbpw-42") {
		t.Fatalf("secrets not loaded: %+v %q", c.Redis, c.FailedDatabase)
	}
	var logged bytes.Buffer
	slog.New(slog.NewJSONHandler(&logged, nil)).Info("config", "cfg", c)
	for _, out := range []string{c.String(), logged.String(), c.Redis.String(), RedactDSN(c.FailedDatabase)} {
		for _, secret := range []string{"redispw-42", "dbpw-42", "sentpw-42", "c2VjcmV0", "secret-key"} {
			if strings.Contains(out, secret) {
				t.Errorf("%q leaks %q", out, secret)
			}
		}
		if !strings.Contains(out, "xxxxx") {
			t.Errorf("%q shows no redaction mark", out)
		}
	}
}

func TestFailedDatabase(t *testing.T) {
	root := t.TempDir()
	for _, tc := range []struct {
		file    string
		version int
		root    string
		want    string
	}{
		{"DB_CONNECTION=pgsql\nDB_HOST=pg\nDB_DATABASE=app\nDB_USERNAME=u\n", 8, "", "postgres://u@pg:5432/app"},
		{"", 8, "", "mysql://forge@127.0.0.1:3306/forge"},
		{"", 11, root, "sqlite:" + filepath.Join(root, "database", "database.sqlite")},
		{"DB_CONNECTION=sqlite\nDB_DATABASE=storage/app.db\n", 11, root, "sqlite:" + filepath.Join(root, "storage", "app.db")},
		{"DB_CONNECTION=sqlite\nDB_DATABASE=/abs/app.db\n", 11, root, "sqlite:/abs/app.db"},
		{"DB_URL=postgresql://u:p@h:5433/d?sslmode=disable\n", 11, "", "postgres://u:p@h:5433/d?sslmode=disable"},
		{"DATABASE_URL=mysql2://u:p@h/d\n", 9, "", "mysql://u:p@h/d"},
		{"QUEUE_FAILED_DRIVER=null\n", 11, "", "null"},
	} {
		src := App{EnvFile: writeEnv(t, tc.file), Release: majorRelease(tc.version), Root: tc.root}
		c := mustLoad(t, src)
		if c.FailedDatabase != tc.want {
			t.Errorf("%q (v%d): %q, want %q", tc.file, tc.version, c.FailedDatabase, tc.want)
		}
	}
	c := mustLoad(t, App{EnvFile: writeEnv(t, "DB_CONNECTION=sqlsrv\n"), Release: majorRelease(8)})
	if c.FailedDatabase != "" || len(c.Warnings) == 0 {
		t.Errorf("sqlsrv: %q %q", c.FailedDatabase, c.Warnings)
	}
	o := mustLoad(t, App{EnvFile: writeEnv(t, "QUEUE_FAILED_DRIVER=database\n"), LookupEnv: env("LARAQ_APP_TIMEZONE", "Asia/Tokyo")}).FailedOptions()
	if o.Table != "failed_jobs" || o.Location.String() != "Asia/Tokyo" || o.Driver.String() != "database" {
		t.Errorf("failed options %+v", o)
	}
}

func TestWarnings(t *testing.T) {
	c := mustLoad(t, App{EnvFile: writeEnv(t, "CACHE_STORE=file\nQUEUE_CONNECTION=sync\n"), Release: majorRelease(11)})
	joined := strings.Join(c.Warnings, "\n")
	if !strings.Contains(joined, `cache store is "file"`) || !strings.Contains(joined, `QUEUE_CONNECTION is "sync"`) {
		t.Errorf("warnings %q", c.Warnings)
	}
	// The database store is shared: laravel.Connect opens it (connectCache).
	c = mustLoad(t, App{EnvFile: writeEnv(t, "CACHE_STORE=database\nDB_CACHE_LOCK_TABLE=locks\n"), Release: majorRelease(11)})
	if strings.Contains(strings.Join(c.Warnings, "\n"), "cache store") || c.CacheDriver != "database" ||
		c.CacheTable != "cache" || c.CacheLockTable != "locks" || c.CacheDBConnection != "" {
		t.Errorf("database store: driver %q tables %q %q connection %q, warnings %q", c.CacheDriver, c.CacheTable, c.CacheLockTable, c.CacheDBConnection, c.Warnings)
	}
	c = mustLoad(t, App{EnvFile: writeEnv(t, "APP_TIMEZONE=Europe/Berlin\nCACHE_DRIVER=redis\nQUEUE_CONNECTION=redis\n"), Release: majorRelease(10)})
	if c.Timezone != "UTC" || len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "APP_TIMEZONE") {
		t.Errorf("timezone %q warnings %q", c.Timezone, c.Warnings)
	}
}

func TestLoadErrors(t *testing.T) {
	for _, tc := range []struct {
		src  App
		want string
	}{
		{App{EnvFile: "testdata/missing.env"}, "missing.env"},
		{App{EnvFile: writeEnvString(t, "A=b c\n")}, ".env:1: Encountered unexpected whitespace"},
		{App{LookupEnv: env("REDIS_PORT", "eighty")}, `REDIS_PORT (environment REDIS_PORT): want an integer, got "eighty"`},
		{App{LookupEnv: env("REDIS_PORT", "70000")}, "out of range"},
		{App{LookupEnv: env("LARAQ_APP_TIMEZONE", "Mars/Base")}, `timezone "Mars/Base"`},
		{App{Root: "testdata/nope"}, "Laravel root"},
		{App{LookupEnv: env("LARAQ_REDIS_TLS_CA", "/nonexistent/ca.pem")}, ""},
	} {
		if tc.src.LookupEnv == nil {
			tc.src.LookupEnv = env()
		}
		c, err := Load(tc.src)
		if tc.want == "" {
			// Loading succeeds; the CA file is read when the client options are built.
			if err != nil {
				t.Fatal(err)
			}
			if _, err := testClients(c); err == nil || !strings.Contains(err.Error(), "ca.pem") {
				t.Errorf("missing CA: %v", err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want it to contain %q", err, tc.want)
		}
	}
}

func writeEnvString(t *testing.T, s string) string { return writeEnv(t, s) }

func FuzzRedisURL(f *testing.F) {
	for _, s := range []string{"redis://localhost", "rediss://:pw@h:6380/2", "tls://u:p%40@h:1?database=7",
		"unix:///tmp/r.sock?db=3", "redis://u:sup3r%zz@h:1", "redis://us{er:pw@h", "http://x", "redis://h:99999/0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := parseRedisURL(s, Origin{Kind: Environment, Name: "REDIS_URL"})
		if err != nil {
			if !strings.HasPrefix(err.Error(), "config: environment REDIS_URL") {
				t.Fatalf("error does not name the setting: %v", err)
			}
			return
		}
		if u.port < 0 || u.port > 65535 || (u.db != nil && *u.db < 0) {
			t.Fatalf("accepted %+v", u)
		}
	})
}

// FuzzRedisURLSecret plants a canary in the user information of an
// arbitrary URL and checks that no error ever repeats it.
func FuzzRedisURLSecret(f *testing.F) {
	for _, s := range []string{"redis://u:p@h", "rediss://:pw@h:6380/x", "http://u:p@x", "redis://u:%zz@h:1",
		"redis://us{er:pw@h", "unix://u:p@/tmp/r.sock?db=z", "redis://u:p@h:99999/0", "tcp://a@b@c:1?database=q"} {
		f.Add(s)
	}
	const canary = "Zq9xCANARYx9qZ"
	f.Fuzz(func(t *testing.T, s string) {
		i := strings.Index(s, "://")
		if i < 0 {
			return
		}
		rest := s[i+3:]
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		at := strings.LastIndex(rest[:end], "@")
		if at < 0 {
			return
		}
		in := s[:i+3] + rest[:at] + canary + rest[at:]
		_, err := parseRedisURL(in, Origin{Kind: Environment, Name: "REDIS_URL"})
		if err != nil && strings.Contains(err.Error(), canary) {
			t.Fatalf("error repeats the user information of %q: %v", in, err)
		}
	})
}

// majorRelease is a release named by its major only ("12"), as LARAQ_LARAVEL_VERSION=12.
func majorRelease(n int) laraq.Release {
	return laraq.Release{Major: n, Minor: 1 << 30}
}

// testClient is what Config.clients opens, for the tests.
type testClient struct {
	Queue, Cache redis.UniversalClient
}

func (c *testClient) Close() error {
	err := c.Queue.Close()
	if c.Cache != c.Queue {
		err = errors.Join(err, c.Cache.Close())
	}
	return err
}

func testClients(c *Config) (*testClient, error) {
	q, cache, err := c.clients(0, 0)
	if err != nil {
		return nil, err
	}
	return &testClient{Queue: q, Cache: cache}, nil
}
