package laravel_test

import (
	"fmt"

	"github.com/laraq/laraq/laravel"
)

// Load reads a Laravel 8 application's .env and config files: the key prefixes come from
// APP_NAME through Str::slug, as PHP derives them, and secrets stay out of printed values.
func ExampleLoad() {
	cfg, err := laravel.Load(laravel.App{
		Root:      "testdata/app8",
		LookupEnv: func(string) (string, bool) { return "", false }, // ignore this process' environment
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("Laravel", cfg.Release)
	fmt.Println("queue keys:", cfg.Prefix+"queues:"+cfg.Queue)
	fmt.Println("restart key:", cfg.CacheScheme().RestartKey())
	fmt.Println("queue redis:", cfg.Redis)
	fmt.Println("cache redis:", cfg.CacheRedis)
	fmt.Println("failed jobs:", laravel.RedactDSN(cfg.FailedDatabase), cfg.FailedTable)
	// Output:
	// Laravel 8.83.27
	// queue keys: acme_shop_database_queues:default
	// restart key: acme_shop_database_acme_shop_cache:illuminate:queue:restart
	// queue redis: redis://redis.internal:6380/0
	// cache redis: redis://redis.internal:6380/1
	// failed jobs: mysql://shop:xxxxx@db.internal:3307/shop failed_jobs
}

// Flags win over the environment, which wins over .env: here a --redis URL and a queue
// name given on the command line.
func ExampleLoad_flags() {
	cfg, err := laravel.Load(laravel.App{
		EnvFile:   "testdata/app12/.env",
		LookupEnv: func(string) (string, bool) { return "", false },
		Flags: map[string]string{
			"LARAQ_REDIS_URL":       "rediss://worker:pw@redis.example:6380/0",
			"LARAQ_REDIS_QUEUE":     "emails",
			"LARAQ_LARAVEL_VERSION": "12",
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cfg.Redis, "queue", cfg.Queue, "from", cfg.Origins["Queue"].String())
	fmt.Println("paused key:", cfg.CacheScheme().PauseKey(cfg.Connection, cfg.Queue))
	// Output:
	// rediss://worker:xxxxx@redis.example:6380/0 queue emails from flag LARAQ_REDIS_QUEUE
	// paused key: acme-shop-database-acme-shop-cache-illuminate:queue:paused:redis:emails
}
