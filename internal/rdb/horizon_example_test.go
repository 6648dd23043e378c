package rdb_test

import (
	"context"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/payload"
	"github.com/redis/go-redis/v9"
)

// A worker's Horizon bookkeeping for one job: Reserved in the round trip after the pop,
// Completed and Metrics in the one that deletes the reserved copy. The job was not pushed
// through Horizon, so its first event writes the record Horizon's StoreJob would have.
func ExampleHorizon() {
	mr := miniredis.NewMiniRedis() // stands in for a server here; the tests use a real one
	if err := mr.Start(); err != nil {
		fmt.Println(err)
		return
	}
	defer mr.Close()
	c := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	defer c.Close()
	ctx := context.Background()

	clock := time.Unix(1729411372, 393200000)
	mr.SetTime(clock) // EXPIREAT is compared with the server's clock
	h, _ := rdb.NewHorizon(rdb.HorizonOptions{Prefix: "laravel_horizon:", Now: func() time.Time { return clock }})
	_ = h.LoadScripts(ctx, c)

	reserved := []byte(`{"attempts":1,"displayName":"App\\Jobs\\Send","uuid":"9a0c5d2e","id":"Xr"}`)
	env, _ := payload.Parse(reserved)
	job, _ := rdb.NewHorizonJob(env, "redis", "default", reserved)

	p := c.Pipeline()
	reservedAt, _ := h.Reserved(ctx, p, job)
	_, _ = p.Exec(ctx)

	clock = clock.Add(1500 * time.Millisecond) // the job runs
	p = c.Pipeline()
	// … p.ZRem(ctx, "laravel_database_queues:default:reserved", reserved) …
	_ = h.Completed(ctx, p, job)
	h.Metrics(ctx, p, job.Queue, job.Name, reservedAt)
	_, _ = p.Exec(ctx)

	rec, _ := c.HMGet(ctx, "laravel_horizon:9a0c5d2e", "id", "name", "status", "reserved_at", "completed_at").Result()
	fmt.Println(rec)
	fmt.Println(c.ZRange(ctx, "laravel_horizon:completed_jobs", 0, -1).Val())
	fmt.Println(c.HGetAll(ctx, `laravel_horizon:job:App\Jobs\Send`).Val())
	// Output:
	// [9a0c5d2e App\Jobs\Send completed 1729411372.3932 1729411373.8932]
	// [9a0c5d2e]
	// map[runtime:1500 throughput:1]
}
