package rdb

import (
	"context"
	"fmt"
)

// requeueBatch bounds the payloads one requeue_invalid call moves.
const requeueBatch = 500

// RequeueInvalid moves every payload of queue's invalid list back to its ready list, in
// order, each with its notify token (see requeue_invalid.lua), and returns how many
// moved. For payloads repaired meanwhile, or set aside by a bug since fixed: a payload
// the pop script still cannot reserve is set aside again by the next pop.
func (r *RDB) RequeueInvalid(ctx context.Context, queue string) (int64, error) {
	k := r.keysOf(queue)
	var total int64
	for {
		n, err := requeueInvalidScript.Run(ctx, r.client, []string{k.Invalid, k.Queue, k.Notify}, requeueBatch).Int64()
		if err != nil {
			return total, fmt.Errorf("rdb: requeue invalid jobs of queue %q: %w", queue, err)
		}
		total += n
		if n < requeueBatch {
			return total, nil
		}
	}
}

// RemoveInvalid removes one copy of payload from queue's invalid list and reports
// whether it was there.
func (r *RDB) RemoveInvalid(ctx context.Context, queue string, payload []byte) (bool, error) {
	n, err := r.client.LRem(ctx, r.keysOf(queue).Invalid, 1, payload).Result()
	if err != nil {
		return false, fmt.Errorf("rdb: remove an invalid job of queue %q: %w", queue, err)
	}
	return n == 1, nil
}
