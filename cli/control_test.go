package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/laravel"
	"github.com/redis/go-redis/v9"
)

// opsCLI runs the CLI with a fixed environment (never this process' own).
func opsCLI(t *testing.T, stdin string, env map[string]string, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	rc := Main(context.Background(), args, WithIO(strings.NewReader(stdin), &out, &errOut),
		WithGetenv(func(k string) string { return env[k] }))
	return out.String(), errOut.String(), rc
}

// laravel8App writes the .env of a Laravel 8 application using the test's Redis, prefix
// and cache prefix, the way the PHP harness is configured, and returns its path.
func laravel8App(t *testing.T, srv *testenv.Redis, prefix, cachePrefix string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), ".env")
	content := fmt.Sprintf("APP_NAME=Laravel\nREDIS_HOST=127.0.0.1\nREDIS_PORT=%d\nREDIS_PREFIX=%s\nCACHE_PREFIX=%s\nCACHE_DRIVER=redis\nQUEUE_CONNECTION=redis\n",
		srv.Port, prefix, cachePrefix)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// goCache is laraq's view of the cache keys for the same application.
func goCache(t *testing.T, envFile string) *rdb.Cache {
	t.Helper()
	cfg, err := laravel.Load(laravel.App{EnvFile: envFile, Flags: map[string]string{"LARAQ_LARAVEL_VERSION": "8"}, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := cfg.Connect(context.Background(), laravel.ConnectOptions{WithoutFailedStore: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	s := cfg.CacheScheme()
	cache, err := rdb.NewCache(conn.Cache.Client, rdb.CacheKeys{RedisPrefix: s.ConnectionPrefix, Prefix: s.Prefix, Separator: s.Separator})
	if err != nil {
		t.Fatal(err)
	}
	return cache
}

type phpCacheValue struct {
	Value    any    `json:"value"`
	RedisKey string `json:"redis_key"`
}

func phpCacheGet(t *testing.T, php testenv.PHPEnv, key string) phpCacheValue {
	t.Helper()
	var v phpCacheValue
	if err := json.Unmarshal(php.Run(t, nil, "ops_cache.php", "get", key), &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// TestRestartSeenByPHP: `laraq restart` writes the key Laravel 8's cache store reads, and
// laraq reads the one `Cache::forever` wrote in PHP.
func TestRestartSeenByPHP(t *testing.T) {
	testenv.NeedPHP(t)
	srv := testenv.RedisServer(t)
	prefix := testenv.Prefix(t)
	cachePrefix := "lqcache" + testenv.RandomName(3)
	envFile := laravel8App(t, srv, prefix, cachePrefix)
	php := testenv.PHPEnv{Redis: srv, Prefix: prefix, CachePrefix: cachePrefix}

	defer func(f func() time.Time) { clock = f }(clock)
	clock = func() time.Time { return time.Unix(1_800_000_123, 0) }
	out, errOut, rc := opsCLI(t, "", nil, "restart", "--env-file", envFile, "--laravel-version", "8")
	if rc != 0 || out != "Broadcasting queue restart signal.\n" || errOut != "" {
		t.Fatalf("restart: rc %d out %q err %q", rc, out, errOut)
	}
	got := phpCacheGet(t, php, "illuminate:queue:restart")
	// RedisStore stores an integer raw and returns it as the numeric string.
	if got.Value != "1800000123" {
		t.Errorf("PHP Cache::get = %#v", got.Value)
	}
	if want := prefix + cachePrefix + ":illuminate:queue:restart"; got.RedisKey != want {
		t.Errorf("PHP's key %q, laraq's scheme %q", got.RedisKey, want)
	}
	raw := srv.Client(t, 1).Get(context.Background(), got.RedisKey).Val()
	if raw != "1800000123" {
		t.Errorf("stored %q, want the bare integer as RedisStore writes it", raw)
	}

	php.Run(t, nil, "ops_cache.php", "forever", "illuminate:queue:restart", "1800000999")
	ts, ok, err := goCache(t, envFile).RestartTimestamp(context.Background())
	if err != nil || !ok || ts != 1_800_000_999 {
		t.Errorf("laraq reads PHP's restart signal: %d %v %v", ts, ok, err)
	}
}

// TestPauseResumeWithPHP: laraq pause is seen by PHP's cache, PHP's pause key is seen and
// removed by laraq.
func TestPauseResumeWithPHP(t *testing.T) {
	testenv.NeedPHP(t)
	srv := testenv.RedisServer(t)
	prefix := testenv.Prefix(t)
	cachePrefix := "lqcache" + testenv.RandomName(3)
	envFile := laravel8App(t, srv, prefix, cachePrefix)
	php := testenv.PHPEnv{Redis: srv, Prefix: prefix, CachePrefix: cachePrefix}
	const key = "illuminate:queue:paused:redis:default"

	out, _, rc := opsCLI(t, "", nil, "pause", "default", "--env-file", envFile, "--laravel-version", "8")
	if rc != 0 || out != "Job processing on queue [redis:default] has been paused.\n" {
		t.Fatalf("pause: %d %q", rc, out)
	}
	if v := phpCacheGet(t, php, key).Value; v != true {
		t.Errorf("PHP sees pause flag %#v, want true", v)
	}
	out, _, rc = opsCLI(t, "", nil, "resume", "redis:default", "--env-file", envFile, "--laravel-version", "8")
	if rc != 0 || out != "Job processing on queue [redis:default] has been resumed.\n" {
		t.Fatalf("resume: %d %q", rc, out)
	}
	if v := phpCacheGet(t, php, key).Value; v != nil {
		t.Errorf("PHP still sees %#v after resume", v)
	}

	// PHP pauses (as queue:pause does: forever(key, true)); laraq's reading agrees, and
	// laraq's resume clears PHP's key.
	php.Run(t, nil, "ops_cache.php", "forever", key, "true")
	php.Run(t, nil, "ops_cache.php", "forever", "illuminate:queue:paused:sqs:emails", "true")
	_, paused, err := goCache(t, envFile).Paused(context.Background(), "redis", []string{"default", "emails"})
	if err != nil || !paused[0] || paused[1] {
		t.Errorf("laraq reads PHP's pause flags: %v %v", paused, err)
	}
	out, _, rc = opsCLI(t, "", nil, "resume", "--connection", "sqs", "emails", "--env-file", envFile, "--laravel-version", "8")
	if rc != 0 || !strings.Contains(out, "[sqs:emails] has been resumed") {
		t.Fatalf("resume sqs:emails: %d %q", rc, out)
	}
	if v := phpCacheGet(t, php, "illuminate:queue:paused:sqs:emails").Value; v != nil {
		t.Errorf("PHP still sees sqs:emails paused: %#v", v)
	}
	if v := phpCacheGet(t, php, key).Value; v != true {
		t.Errorf("resuming another queue touched redis:default: %#v", v)
	}
}

// TestCacheKeySchemes checks the keys restart and pause write for the 11.x and 12.x
// schemes (no ":" after the cache prefix; hyphens in 12.x) on a real server.
func TestCacheKeySchemes(t *testing.T) {
	srv := testenv.RedisServer(t)
	ctx := context.Background()
	for _, tc := range []struct {
		version string
		key     string
	}{
		{"11", "laravel_database_laravel_cache_illuminate:queue:paused:redis:default"},
		{"12", "laravel-database-laravel-cache-illuminate:queue:paused:redis:default"},
		{"9", "laravel_database_laravel_cache_:illuminate:queue:paused:redis:default"},
	} {
		name := "App" + testenv.RandomName(3)
		slug := strings.ToLower(name)
		env := map[string]string{"REDIS_PORT": strconv.Itoa(srv.Port), "APP_NAME": name, "REDIS_CACHE_DB": "2",
			"CACHE_DRIVER": "file", "CACHE_STORE": "file"}
		out, errOut, rc := opsCLI(t, "", env, "pause", "default", "--laravel-version", tc.version)
		if rc != 0 {
			t.Fatalf("v%s: %d %q %q", tc.version, rc, out, errOut)
		}
		key := strings.ReplaceAll(tc.key, "laravel", slug)
		if v := srv.Client(t, 2).Get(ctx, key).Val(); v != "b:1;" {
			t.Errorf("v%s: %s = %q, want b:1;", tc.version, key, v)
		}
		if !strings.Contains(errOut, `warning: the application's cache store is "file"`) {
			t.Errorf("v%s: no warning about the file cache store: %q", tc.version, errOut)
		}
		// queue:restart on a file cache store is what PHP workers read: a Redis key would
		// restart laraq workers only, so restart refuses.
		restart := strings.Replace(key, "paused:redis:default", "restart", 1)
		if _, errOut, rc := opsCLI(t, "", env, "restart", "--laravel-version", tc.version); rc == 0 ||
			!strings.Contains(errOut, `cache store is "file"`) || srv.Client(t, 2).Exists(ctx, restart).Val() != 0 {
			t.Errorf("v%s: restart on a file cache store: rc %d %q", tc.version, rc, errOut)
		}
		env["CACHE_DRIVER"], env["CACHE_STORE"] = "redis", "redis"
		opsCLI(t, "", env, "restart", "--laravel-version", tc.version)
		if v := srv.Client(t, 2).Get(ctx, restart).Val(); v == "" {
			t.Errorf("v%s: no restart key %s", tc.version, restart)
		}
		srv.Client(t, 2).Del(ctx, key, restart)
	}
}

func TestClear(t *testing.T) {
	srv := testenv.RedisServer(t)
	ctx := context.Background()
	prefix := testenv.Prefix(t)
	envFile := laravel8App(t, srv, prefix, "c")
	r, err := rdb.New(srv.Client(t, 0), rdb.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if err := r.Push(ctx, "mail", []byte(fmt.Sprintf(`{"uuid":"u%d","attempts":0}`, i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Later(ctx, "mail", time.Now().Unix()+60, []byte(`{"uuid":"d","attempts":0}`)); err != nil {
		t.Fatal(err)
	}
	out, _, rc := opsCLI(t, "no\n", nil, "clear", "mail", "--env-file", envFile)
	if rc != 1 || !strings.HasPrefix(out, "Are you sure you want to clear all jobs from the [mail] queue? (yes/no) [no]:") ||
		!strings.Contains(out, "Command canceled.") {
		t.Errorf("answer no: %d %q", rc, out)
	}
	if n, _ := r.Size(ctx, "mail"); n != 4 {
		t.Fatalf("declined clear removed jobs: size %d", n)
	}
	out, _, rc = opsCLI(t, "yes\n", nil, "clear", "mail", "--env-file", envFile)
	if rc != 0 || !strings.HasSuffix(out, "Cleared 4 jobs from the [mail] queue\n") {
		t.Errorf("answer yes: %d %q", rc, out)
	}
	if keys, _ := testenv.Keys(ctx, srv.Client(t, 0), prefix); len(keys) != 0 {
		t.Errorf("keys left: %q", keys)
	}
	out, _, rc = opsCLI(t, "", nil, "clear", "--force", "--env-file", envFile, "--queue", "mail")
	if rc != 0 || out != "Cleared 0 jobs from the [mail] queue\n" {
		t.Errorf("--force on an empty queue: %d %q", rc, out)
	}
}

func TestStats(t *testing.T) {
	srv := testenv.RedisServer(t)
	ctx := context.Background()
	prefix := testenv.Prefix(t)
	r, err := rdb.New(srv.Client(t, 0), rdb.Options{Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	defer func(f func() time.Time) { clock = f }(clock)
	clock = func() time.Time { return now }
	push := func(q, body string) {
		if err := r.Push(ctx, q, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	push("default", `{"uuid":"a","job":"x","attempts":0,"createdAt":1799999867}`) // 133 s old
	push("default", `{"uuid":"b","job":"x","attempts":0,"createdAt":1799999990}`)
	push("default", `{"uuid":"c","job":"x","attempts":0}`)
	if _, _, err := r.Pop(ctx, "default", now.Unix()+90); err != nil { // a reserved (no longer the oldest)
		t.Fatal(err)
	}
	push("horizon", `{"uuid":"h","job":"x","attempts":0,"pushedAt":"1799999994.5"}`)
	push("plain", `{"uuid":"p","job":"x","attempts":0}`)
	if err := r.Later(ctx, "later", now.Unix()+60, []byte(`{"uuid":"l","attempts":0}`)); err != nil {
		t.Fatal(err)
	}
	// A payload the pop script could not reserve, set aside by a worker.
	if err := srv.Client(t, 0).RPush(ctx, prefix+"queues:plain:invalid", "not json").Err(); err != nil {
		t.Fatal(err)
	}
	redisURL := fmt.Sprintf("redis://127.0.0.1:%d/0", srv.Port)

	out, errOut, rc := opsCLI(t, "", nil, "stats", "--redis", redisURL, "--prefix", prefix)
	want := `+---------+-------+---------+----------+---------+--------------+
| Queue   | Ready | Delayed | Reserved | Invalid | Oldest ready |
+---------+-------+---------+----------+---------+--------------+
| default | 2     | 0       | 1        | 0       | 10s          |
| horizon | 1     | 0       | 0        | 0       | 6s           |
| later   | 0     | 1       | 0        | 0       | -            |
| plain   | 1     | 0       | 0        | 1       | -            |
+---------+-------+---------+----------+---------+--------------+
`
	if rc != 0 || out != want || errOut != "" {
		t.Errorf("stats rc %d err %q:\n%s\nwant:\n%s", rc, errOut, out, want)
	}

	out, _, rc = opsCLI(t, "", nil, "stats", "--redis", redisURL, "--prefix", prefix, "--queue", "default,nothing", "--json")
	var got struct {
		Prefix string       `json:"prefix"`
		Queues []queueStats `json:"queues"`
	}
	if err := json.Unmarshal([]byte(out), &got); rc != 0 || err != nil {
		t.Fatalf("--json: %d %v %q", rc, err, out)
	}
	if got.Prefix != prefix || len(got.Queues) != 2 || got.Queues[0].Ready != 2 || got.Queues[0].Reserved != 1 ||
		got.Queues[0].Oldest == nil || *got.Queues[0].Oldest != 10 || got.Queues[1].Queue != "nothing" || got.Queues[1].Oldest != nil {
		t.Errorf("--json: %+v", got)
	}
	if !strings.Contains(out, `"oldest_ready_age_seconds": null`) {
		t.Errorf("unknown age should be null: %s", out)
	}

	// The same, with the connection from the application's .env instead of flags.
	envFile := laravel8App(t, srv, prefix, "c")
	out, _, rc = opsCLI(t, "", nil, "stats", "--env-file", envFile)
	if rc != 0 || out != want {
		t.Errorf("stats from .env: %d\n%s", rc, out)
	}
	_, errOut, rc = opsCLI(t, "", nil, "stats", "--env-file", filepath.Join(t.TempDir(), "none.env"))
	if rc != 1 || !strings.Contains(errOut, "none.env") {
		t.Errorf("missing .env: %d %q", rc, errOut)
	}
}

func TestFormatAge(t *testing.T) {
	for d, want := range map[time.Duration]string{
		1500 * time.Millisecond:        "2s",
		2*time.Minute + 13*time.Second: "2m13s",
		50 * time.Hour:                 "2d2h",
		3*time.Hour + 5*time.Second:    "3h0m5s",
	} {
		if got := formatAge(d); got != want {
			t.Errorf("formatAge(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestRedisURLErrorsDoNotLeak(t *testing.T) {
	for _, cmd := range [][]string{{"stats"}, {"work", "--database", "null"}, {"dispatch", "X"}, {"restart"}, {"failed", "list", "--database", "null"}} {
		for _, url := range []string{"redis://u:hunter2%zz@127.0.0.1:1/0", "redis://u:hunter2@127.0.0.1:1/x", "http://u:hunter2@x/0"} {
			_, errOut, rc := opsCLI(t, "", nil, append(cmd, "--redis", url)...)
			if rc == 0 || strings.Contains(errOut, "hunter2") || !strings.Contains(errOut, "--redis") {
				t.Errorf("%s --redis %s: rc %d stderr %q", cmd, url, rc, errOut)
			}
		}
	}
}

// TestWorkPoolFitsConcurrency: the worker's clients get a pool for every running job
// plus its own connections instead of go-redis' default.
func TestWorkPoolFitsConcurrency(t *testing.T) {
	cfg, err := laravel.Load(laravel.App{LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	opts := laravel.ConnectOptions{QueuePool: 500 + 4, CachePool: 500 + 2, WithoutFailedStore: true}
	c, err := cfg.Connect(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	q, cache := c.Client.(*redis.Client), c.Cache.Client.(*redis.Client)
	if q == cache || q.Options().PoolSize != 504 || cache.Options().PoolSize != 502 || cache.Options().DB != 1 {
		t.Errorf("pools %d and %d (cache db %d)", q.Options().PoolSize, cache.Options().PoolSize, cache.Options().DB)
	}
	cfg.CacheRedis = cfg.Redis // REDIS_CACHE_CONNECTION=default: one client for both
	if c, err = cfg.Connect(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if q := c.Client.(*redis.Client); c.Cache.Client != c.Client || q.Options().PoolSize != 1006 {
		t.Errorf("shared pool %d", q.Options().PoolSize)
	}
}

// TestRestartLaravel8SkeletonEnv: given only the .env of a Laravel 8 application (no
// framework to read, no --laravel-version), laraq infers 8.x from its keys and writes the
// restart signal where Laravel 8's cache store reads it:
// laravel_database_laravel_cache:illuminate:queue:restart.
func TestRestartLaravel8SkeletonEnv(t *testing.T) {
	testenv.NeedPHP(t)
	srv := testenv.RedisServer(t)
	ctx := context.Background()
	const cacheDB = 10 // the skeleton's prefixes are not unique per test: a database of its own
	cache := srv.Client(t, cacheDB)
	if err := cache.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cache.FlushDB(context.Background()) })

	// The skeleton's .env.example, pointed at the test server and its Redis cache store.
	skel, err := os.ReadFile(filepath.Join(testenv.RepoRoot(), "laravel", "testdata", "skeleton", "laravel8.env"))
	if err != nil {
		t.Fatal(err)
	}
	env := strings.NewReplacer(
		"REDIS_PORT=6379", fmt.Sprintf("REDIS_PORT=%d\nREDIS_CACHE_DB=%d", srv.Port, cacheDB),
		"CACHE_DRIVER=file", "CACHE_DRIVER=redis",
		"QUEUE_CONNECTION=sync", "QUEUE_CONNECTION=redis",
	).Replace(string(skel))
	if !strings.Contains(env, "CACHE_DRIVER=redis") || !strings.Contains(env, "REDIS_CACHE_DB=") {
		t.Fatal("skeleton .env does not have the expected lines")
	}
	envFile := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(envFile, []byte(env), 0o600); err != nil {
		t.Fatal(err)
	}

	defer func(f func() time.Time) { clock = f }(clock)
	clock = func() time.Time { return time.Unix(1_800_000_456, 0) }
	out, errOut, rc := opsCLI(t, "", nil, "restart", "--env-file", envFile)
	if rc != 0 || out != "Broadcasting queue restart signal.\n" || errOut != "" {
		t.Fatalf("restart: rc %d out %q err %q", rc, out, errOut)
	}
	const key = "laravel_database_laravel_cache:illuminate:queue:restart"
	keys, _ := cache.Keys(ctx, "*").Result()
	if len(keys) != 1 || keys[0] != key {
		t.Fatalf("cache keys %q, want only %s", keys, key)
	}
	if v := cache.Get(ctx, key).Val(); v != "1800000456" {
		t.Errorf("%s = %q", key, v)
	}
	// Laravel 8's own cache store, configured as the skeleton is, reads the same value.
	php := testenv.PHPEnv{Redis: srv, CacheDB: cacheDB, Prefix: "laravel_database_", CachePrefix: "laravel_cache"}
	got := phpCacheGet(t, php, "illuminate:queue:restart")
	if got.Value != "1800000456" || got.RedisKey != key {
		t.Errorf("PHP Cache::get = %#v at %q", got.Value, got.RedisKey)
	}

	// The version and its origin are visible in the configuration laraq loaded.
	cfg, err := laravel.Load(laravel.App{EnvFile: envFile, LookupEnv: func(string) (string, bool) { return "", false }})
	if err != nil {
		t.Fatal(err)
	}
	if o := cfg.Origin("Release"); cfg.Release.Major != 8 || !cfg.Release.Guessed || o.Kind != laravel.Inferred || !strings.HasPrefix(o.Name, "CACHE_DRIVER") {
		t.Errorf("release %s from %s", cfg.Release, o)
	}
}
