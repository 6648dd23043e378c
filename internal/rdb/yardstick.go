package rdb

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// laravelPopSrc is only referenced from LaravelPopEffect, which no worker calls: the
// linker leaves it out of every program but the benchmarks.
//
//go:embed laravel_pop.lua
var laravelPopSrc string

// LaravelPopEffect pops up to max jobs from queue with the effect of Laravel's own pop
// script and nothing more, in one script call (see laravel_pop.lua), and returns how many
// it took. It is the benchmarks' yardstick — the least work Redis can do per job for a
// Laravel queue — not a queue operation: it returns no job and, like Laravel, loses a
// payload cjson cannot reserve.
func (r *RDB) LaravelPopEffect(ctx context.Context, queue string, reserveUntil int64, max int) (int, error) {
	k := r.keysOf(queue)
	n, err := redis.NewScript(laravelPopSrc).Run(ctx, r.client, []string{k.Queue, k.Reserved, k.Notify}, reserveUntil, max).Int()
	if err != nil {
		return 0, fmt.Errorf("rdb: Laravel's pop effect on queue %q: %w", queue, err)
	}
	return n, nil
}
