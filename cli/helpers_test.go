package cli

import (
	"context"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
)

// testDispatcher dispatches as a Laravel 8.83 application on client with this prefix
// would, onto queue (the connection's default queue when "").
func testDispatcher(client redis.UniversalClient, prefix, queue string) (*laraq.Dispatcher, error) {
	return laraq.NewDispatcher(&laraq.Connection{Client: client, Prefix: prefix, Queue: queue, Release: laraq.Release{Major: 8, Minor: 83}})
}

// handle is laraq.HandleClass for a handler written as (ctx, cmd, job).
func handle[T any](jobs *laraq.Jobs, class string, fn func(ctx context.Context, cmd *T, job *laraq.JobInfo) error) {
	laraq.HandleClass(jobs, class, func(ctx context.Context, j *laraq.Job[T]) error { return fn(ctx, &j.Command, j.JobInfo) })
}
