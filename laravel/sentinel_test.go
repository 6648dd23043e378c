package laravel

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// predisSentinelRedis is a config/database.php 'redis' section connecting through
// Sentinel with predis, as laravel/framework's PredisConnector takes it: the Sentinels as
// the connection's list (arrays and a URI string), 'replication' and 'service' in the
// options, the master's parameters in 'parameters' (the cache connection has its own).
func predisSentinelRedis(addrs []string) string {
	host, port, _ := strings.Cut(addrs[0], ":")
	return fmt.Sprintf(`'redis' => [
        'client' => 'predis',
        'options' => [
            'replication' => 'sentinel',
            'service' => env('REDIS_SENTINEL_SERVICE', 'mymaster'),
            'prefix' => env('REDIS_PREFIX', 'shop-database-'),
            'parameters' => [
                'password' => env('REDIS_PASSWORD'),
                'database' => env('REDIS_DB', 0),
            ],
        ],
        'default' => [
            ['host' => env('REDIS_SENTINEL_HOST', '%s'), 'port' => env('REDIS_SENTINEL_PORT', %s)],
            'tcp://%s',
            ['host' => '127.0.0.1', 'port' => '%s', 'password' => env('REDIS_SENTINEL_PASSWORD')],
        ],
        'cache' => [
            ['host' => '%s', 'port' => %s],
            'tcp://%s',
            'options' => ['parameters' => ['password' => env('REDIS_PASSWORD'), 'database' => env('REDIS_CACHE_DB', 1)]],
        ],
    ],
];
`, host, port, addrs[1], strings.TrimPrefix(addrs[2], "127.0.0.1:"), host, port, addrs[1])
}

// TestAppPredisSentinel: an application connecting through Sentinel with predis is read
// as PHP's connector reads it, and Connect reaches the master of a real master, replica
// and three Sentinels: the queue on its database 0, the cache on its database 1.
func TestAppPredisSentinel(t *testing.T) {
	s := testenv.PrivateSentinels(t, "shop-master")
	redisSection := regexp.MustCompile(`(?s)'redis' => \[.*\];\s*$`)
	root := skeletonApp(t, "laravel-13", map[string]func(string) string{
		"config/database.php": func(src string) string { return redisSection.ReplaceAllString(src, predisSentinelRedis(s.Addrs)) },
		".env":                appendEnv("REDIS_SENTINEL_SERVICE=shop-master\nCACHE_STORE=redis\n"),
	})
	cfg := mustLoad(t, App{EnvFile: filepath.Join(root, ".env"), LookupEnv: env()})
	for _, rd := range []Redis{cfg.Redis, cfg.CacheRedis} {
		if rd.SentinelMaster != "shop-master" || len(rd.Addrs) != 3 && rd.DB == 0 || rd.Addrs[0] != s.Addrs[0] || rd.Addrs[1] != s.Addrs[1] {
			t.Errorf("redis %s (addrs %q)", rd, rd.Addrs)
		}
	}
	if cfg.Redis.DB != 0 || cfg.CacheRedis.DB != 1 || len(cfg.CacheRedis.Addrs) != 2 || cfg.Prefix != "shop-database-" {
		t.Errorf("queue db %d, cache db %d with %d Sentinels, prefix %q", cfg.Redis.DB, cfg.CacheRedis.DB, len(cfg.CacheRedis.Addrs), cfg.Prefix)
	}
	if got := cfg.Origin("RedisAddrs").String(); !strings.HasPrefix(got, "config/database.php:") {
		t.Errorf("Sentinels from %s", got)
	}
	ctx := context.Background()
	conn, err := cfg.Connect(ctx, ConnectOptions{WithoutFailedStore: true})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	key := testenv.Prefix(t) + "sentinel"
	if err := conn.Client.Set(ctx, key, "queue", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := conn.Cache.Client.Set(ctx, key, "cache", 0).Err(); err != nil {
		t.Fatal(err)
	}
	for db, want := range map[int]string{0: "queue", 1: "cache"} {
		if got := s.Master.Client(t, db).Get(ctx, key).Val(); got != want {
			t.Errorf("the master's database %d holds %q, want %q", db, got, want)
		}
	}

	// LARAQ_REDIS_SENTINEL replaces the application's Sentinels; a server on the command
	// line replaces both.
	cfg = mustLoad(t, App{EnvFile: filepath.Join(root, ".env"), LookupEnv: env("LARAQ_REDIS_SENTINEL", "10.0.0.9:26379")})
	if cfg.Redis.Addrs[0] != "10.0.0.9:26379" || cfg.Redis.SentinelMaster != "shop-master" {
		t.Errorf("LARAQ_REDIS_SENTINEL: %s", cfg.Redis)
	}
	cfg = mustLoad(t, App{EnvFile: filepath.Join(root, ".env"), Flags: map[string]string{"LARAQ_REDIS_URL": "redis://10.0.0.8:6379/0"}, LookupEnv: env()})
	if cfg.Redis.SentinelMaster != "" || cfg.Redis.Addrs[0] != "10.0.0.8:6379" {
		t.Errorf("--redis: %s", cfg.Redis)
	}
}
