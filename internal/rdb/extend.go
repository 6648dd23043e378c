package rdb

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// Extend moves the expiry of a reservation this worker holds to until (Unix seconds), so
// that no worker, PHP or Go, migrates the job back while this one still works on it.
// reserved must be the exact bytes Pop returned. held is false when the reservation was
// gone (expired and migrated back, or acknowledged); nothing is added then.
func (r *RDB) Extend(ctx context.Context, queue string, reserved []byte, until int64) (held bool, err error) {
	k := r.keysOf(queue)
	n, err := extendScript.Run(ctx, r.client, []string{k.Reserved}, reserved, until).Int64()
	if err != nil {
		return false, fmt.Errorf("rdb: extend reservation on queue %q: %w", queue, err)
	}
	return n == 1, nil
}

// ForgetTickets deletes owner's pop tickets on queues (see PopTicket), for a worker run
// that ended with every pop answered. Left alone they would expire.
func (r *RDB) ForgetTickets(ctx context.Context, owner string, queues []string) error {
	_, err := r.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, q := range queues {
			p.Del(ctx, r.keysOf(q).Ticket(owner))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("rdb: forget pop tickets: %w", err)
	}
	return nil
}
