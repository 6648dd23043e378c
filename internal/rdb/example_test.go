package rdb_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/redis/go-redis/v9"
)

func ExampleNewQueueKeys() {
	k := rdb.NewQueueKeys("laravel_database_", "emails", false)
	fmt.Println(k.Queue)
	fmt.Println(k.Delayed)
	fmt.Println(k.Reserved)
	fmt.Println(k.Notify)

	// On a Redis Cluster (Laravel 13.5+ behaviour) the name gets a hash tag, so the
	// scripts' keys share a slot; a name that already has one is left alone.
	fmt.Println(rdb.NewQueueKeys("laravel_database_", "emails", true).Notify)
	fmt.Println(rdb.NewQueueKeys("laravel_database_", "{emails}", true).Notify)
	// Output:
	// laravel_database_queues:emails
	// laravel_database_queues:emails:delayed
	// laravel_database_queues:emails:reserved
	// laravel_database_queues:emails:notify
	// laravel_database_queues:{emails}:notify
	// laravel_database_queues:{emails}:notify
}

func ExampleCacheKeys() {
	// Laravel 8–10: RedisStore puts ":" after the cache prefix.
	l8 := rdb.CacheKeys{RedisPrefix: "laravel_database_", Prefix: "laravel_cache", Separator: true}
	fmt.Println(l8.Restart())
	fmt.Println(l8.JobExceptions("9b1c"))
	// Laravel 12 skeleton: hyphens, no separator.
	l12 := rdb.CacheKeys{RedisPrefix: "laravel-database-", Prefix: "laravel-cache-"}
	fmt.Println(l12.Paused("redis", "default"))
	// Output:
	// laravel_database_laravel_cache:illuminate:queue:restart
	// laravel_database_laravel_cache:job-exceptions:9b1c
	// laravel-database-laravel-cache-illuminate:queue:paused:redis:default
}

// The operations run against any redis.UniversalClient. miniredis stands in for a server
// here; it is not used to check wire behaviour (its cjson differs from Redis', so the
// reserved bytes of Pop are only checked against redis-server in the tests).
func ExampleRDB_Push() {
	srv := miniredis.NewMiniRedis()
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Close()
	client := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer client.Close()
	ctx := context.Background()

	r, err := rdb.New(client, rdb.Options{Prefix: "laravel_database_"})
	if err != nil {
		panic(err)
	}
	_ = r.Push(ctx, "default", []byte(`{"job":"App\\Jobs\\Ping@handle","data":[],"id":"a","attempts":0}`))
	_ = r.Later(ctx, "default", 1700000060, []byte(`{"job":"App\\Jobs\\Ping@handle","data":[],"id":"b","attempts":0}`))

	ready, delayed, reserved, _ := r.Sizes(ctx, "default")
	fmt.Println("ready", ready, "delayed", delayed, "reserved", reserved)
	fmt.Println("notify tokens", client.LLen(ctx, "laravel_database_queues:default:notify").Val())

	moved, _ := r.MigrateDelayed(ctx, "default", 1700000060, rdb.NoLimit)
	fmt.Println("migrated", moved)
	n, _ := r.Clear(ctx, "default")
	fmt.Println("cleared", n)
	// Output:
	// ready 1 delayed 1 reserved 0
	// notify tokens 1
	// migrated 1
	// cleared 2
}
