// Command handleronly is the smallest useful laraq program: typed handlers and a worker
// on a Redis client of its own. The tests build it and check that it links no SQL driver,
// no miniredis and no recorded payloads.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
)

type ping struct {
	Host string `php:"host"`
}

func (ping) PHPClass() string { return `App\Jobs\Ping` }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM)
	defer stop()
	client := redis.NewClient(&redis.Options{Addr: os.Getenv("REDIS_ADDR")})
	defer client.Close()
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[ping]) error { return nil })
	w, err := laraq.NewWorker(&laraq.Connection{Client: client, Prefix: "laravel_database_"}, jobs, laraq.WorkerConfig{})
	if err != nil {
		os.Exit(1)
	}
	_ = w.Run(ctx)
}
