package rdb

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// BlockSlice is the longest single BLPOP BlockForNotify sends. A BLPOP in flight cannot be
// interrupted, so this bounds how late a cancelled context is noticed.
const BlockSlice = time.Second

// BlockForNotify waits for a notify token of queue with BLPOP, as a PHP worker with
// block_for does after an empty pop, and reports whether one arrived (it is consumed; the
// token is only a hint, the caller pops next). timeout 0 waits until a token arrives or
// ctx ends, like BLPOP 0. Redis before 6.0 only takes whole seconds, so the wait is sent as
// BLPOPs of whole seconds, at most BlockSlice each: a timeout is rounded up to whole
// seconds, and a cancelled ctx is noticed within BlockSlice (then ctx.Err() is returned).
func (r *RDB) BlockForNotify(ctx context.Context, queue string, timeout time.Duration) (bool, error) {
	if timeout < 0 {
		return false, fmt.Errorf("rdb: block on queue %q: negative timeout %v", queue, timeout)
	}
	k := r.keysOf(queue)
	remaining := (timeout + time.Second - 1) / time.Second * time.Second
	for {
		if err := ctx.Err(); err != nil {
			return false, err
		}
		slice := BlockSlice
		if timeout > 0 && remaining < slice {
			slice = remaining
		}
		_, err := r.client.BLPop(ctx, slice, k.Notify).Result()
		if err == nil {
			return true, nil
		}
		if !isNil(err) {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return false, ctxErr
			}
			return false, fmt.Errorf("rdb: block on queue %q: %w", queue, r.queueError(ctx, queue, err))
		}
		if timeout > 0 {
			remaining -= slice
			if remaining <= 0 {
				return false, nil
			}
		}
	}
}

// Size returns the number of jobs of queue: ready + delayed + reserved, Laravel's size.
func (r *RDB) Size(ctx context.Context, queue string) (int64, error) {
	ready, delayed, reserved, err := r.Sizes(ctx, queue)
	return ready + delayed + reserved, err
}

// Sizes returns the ready (LLEN), delayed and reserved (ZCARD) counts of queue, read
// together in one script.
func (r *RDB) Sizes(ctx context.Context, queue string) (ready, delayed, reserved int64, err error) {
	k := r.keysOf(queue)
	res, err := sizesScript.Run(ctx, r.client, []string{k.Queue, k.Delayed, k.Reserved}).Int64Slice()
	if err == nil && len(res) != 3 {
		err = fmt.Errorf("reply of %d elements, want 3", len(res))
	}
	if err != nil {
		return 0, 0, 0, fmt.Errorf("rdb: size of queue %q: %w", queue, err)
	}
	return res[0], res[1], res[2], nil
}

// OldestReady returns the payload at the head of queue's ready list (LINDEX 0), the next
// job a pop takes, or nil when the list is empty. Its age can be read from `createdAt`
// (Laravel 12.11+) or Horizon's `pushedAt` when present.
func (r *RDB) OldestReady(ctx context.Context, queue string) ([]byte, error) {
	k := r.keysOf(queue)
	b, err := r.client.LIndex(ctx, k.Queue, 0).Bytes()
	if isNil(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("rdb: oldest job of queue %q: %w", queue, err)
	}
	return b, nil
}

// Clear deletes every job of queue (ready, delayed, reserved and the notify tokens) and
// returns how many jobs there were: Laravel's clear script (`php artisan queue:clear`).
// The invalid list is kept; see ClearInvalid.
func (r *RDB) Clear(ctx context.Context, queue string) (int64, error) {
	k := r.keysOf(queue)
	n, err := clearScript.Run(ctx, r.client, []string{k.Queue, k.Delayed, k.Reserved, k.Notify}).Int64()
	if err != nil {
		return 0, fmt.Errorf("rdb: clear queue %q: %w", queue, err)
	}
	return n, nil
}

// Invalid returns the payloads Pop moved to queue's invalid list, oldest first.
func (r *RDB) Invalid(ctx context.Context, queue string) ([][]byte, error) {
	k := r.keysOf(queue)
	vals, err := r.client.LRange(ctx, k.Invalid, 0, -1).Result()
	if err != nil {
		return nil, fmt.Errorf("rdb: invalid jobs of queue %q: %w", queue, err)
	}
	out := make([][]byte, len(vals))
	for i, v := range vals {
		out[i] = []byte(v)
	}
	return out, nil
}

// InvalidCount returns how many payloads queue's invalid list holds.
func (r *RDB) InvalidCount(ctx context.Context, queue string) (int64, error) {
	n, err := r.client.LLen(ctx, r.keysOf(queue).Invalid).Result()
	if err != nil {
		return 0, fmt.Errorf("rdb: invalid jobs of queue %q: %w", queue, err)
	}
	return n, nil
}

// ClearInvalid deletes queue's invalid list and returns how many payloads it held.
func (r *RDB) ClearInvalid(ctx context.Context, queue string) (int64, error) {
	k := r.keysOf(queue)
	pipe := r.client.TxPipeline()
	n := pipe.LLen(ctx, k.Invalid)
	pipe.Del(ctx, k.Invalid)
	if _, err := pipe.Exec(ctx); err != nil {
		return 0, fmt.Errorf("rdb: clear invalid jobs of queue %q: %w", queue, err)
	}
	return n.Val(), nil
}

// Queues returns the names of the queues that have at least one key under the prefix
// (ready, delayed, reserved, notify or invalid), sorted. Names come back as they appear in
// the keys, e.g. `{default}` for a cluster queue, which Keys maps back to the same keys.
// On a Cluster client every master is scanned.
func (r *RDB) Queues(ctx context.Context) ([]string, error) {
	pattern := queuesPattern(r.prefix)
	seen := map[string]struct{}{}
	var mu sync.Mutex // ForEachMaster scans the masters concurrently
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, pattern, 1000).Iterator()
		for iter.Next(ctx) {
			if name, ok := QueueNameFromKey(r.prefix, iter.Val()); ok {
				mu.Lock()
				seen[name] = struct{}{}
				mu.Unlock()
			}
		}
		return iter.Err()
	}
	var err error
	if cc, ok := r.client.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
	} else {
		err = scan(ctx, r.client)
	}
	if err != nil {
		return nil, fmt.Errorf("rdb: list queues: %w", err)
	}
	names := make([]string, 0, len(seen))
	for n := range seen {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, nil
}
