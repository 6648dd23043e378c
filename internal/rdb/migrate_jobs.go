package rdb

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"
)

var (
	//go:embed migrate_jobs.lua
	migrateJobsSrc    string
	migrateJobsScript = redis.NewScript(migrateJobsSrc)
)

// MigrateExpiredJobs is MigrateExpired returning the payloads it moved, in the order they
// joined the ready list, as Laravel's RedisQueue::migrateExpiredJobs returns them. Use it
// instead of MigrateExpired when the moved jobs must be reported, as Horizon's JobsMigrated
// event does (Horizon.Migrated): the effect on the queue keys is the same.
func (r *RDB) MigrateExpiredJobs(ctx context.Context, from Zset, queue string, now int64, limit int) ([][]byte, error) {
	k := r.keysOf(queue)
	var src string
	switch from {
	case Delayed:
		src = k.Delayed
	case Reserved:
		src = k.Reserved
	default:
		return nil, fmt.Errorf("rdb: migrate on queue %q: unknown source %v", queue, from)
	}
	if limit < 0 {
		limit = 0
	}
	res, err := migrateJobsScript.Run(ctx, r.client, []string{src, k.Queue, k.Notify}, now, limit).Slice()
	if err != nil {
		return nil, fmt.Errorf("rdb: migrate %s jobs on queue %q: %w", from, queue, err)
	}
	out := make([][]byte, len(res))
	for i, v := range res {
		b, err := replyBytes(v)
		if err != nil {
			return nil, fmt.Errorf("rdb: migrate %s jobs on queue %q: %w", from, queue, err)
		}
		out[i] = b
	}
	return out, nil
}
