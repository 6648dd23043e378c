package rdb

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// ExtendReservation moves the reservation of a running job forward to until (Unix
// seconds), as long as it is still reserved: the score of the exact reserved bytes in
// queues:NAME:reserved, never lowered, never re-added once gone (extend.lua). PHP's
// migrateExpiredJobs and laraq's migration only move members whose score has passed, so
// a job whose reservation keeps being extended is run by no other worker.
//
// held is false when the reservation is gone: the job was acknowledged or released, or
// it expired and was migrated back (another worker may run it now).
func (r *RDB) ExtendReservation(ctx context.Context, queue string, reserved []byte, until int64) (held bool, err error) {
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
