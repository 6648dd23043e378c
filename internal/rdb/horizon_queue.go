package rdb

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Queue operations that carry more commands in their round trip: Horizon's records of
// the jobs they push or delete (see Horizon), queued by the caller's also function on the
// same pipeline. The queue commands are exactly those of the plain operations; the
// commands also adds run after them, and their errors are reported apart, so that a
// bookkeeping error never looks like a failed push or deletion.

// Pushing is one payload for PushAllAnd: made ready (RPUSH with its notify token, the
// push script) or, when Delayed, added to :delayed with score AvailableAt.
type Pushing struct {
	Queue       string
	Payload     []byte
	Delayed     bool
	AvailableAt int64 // Unix seconds
}

// PushAllAnd pushes payloads as Push and Later do, in order, and then the commands also
// queues, all inside one MULTI/EXEC: no worker can pop a job between its push and the
// commands that describe it (Horizon's StoreJob), which Horizon's own PHP push, two round
// trips, allows. The push script is sent with EVAL (a script missing from the server's
// cache would make EVALSHA fail inside the transaction and the job would not be pushed).
// err is the error of the first push that failed, or of the transaction; extra are the
// commands also queued, for their results and errors. On a Redis Cluster every key of
// the transaction must be in one slot.
func (r *RDB) PushAllAnd(ctx context.Context, pushes []Pushing, also func(p redis.Pipeliner)) (extra []redis.Cmder, err error) {
	if len(pushes) == 0 && also == nil {
		return nil, nil
	}
	cmds, perr := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for _, m := range pushes {
			k := r.keysOf(m.Queue)
			if m.Delayed {
				p.ZAdd(ctx, k.Delayed, redis.Z{Score: float64(m.AvailableAt), Member: m.Payload})
				continue
			}
			pushScript.Eval(ctx, p, []string{k.Queue, k.Notify}, m.Payload)
		}
		if also != nil {
			also(p)
		}
		return nil
	})
	if len(cmds) < len(pushes) {
		// The transaction never ran (connection error, or a command refused when queued).
		return nil, fmt.Errorf("rdb: push %d jobs: %w", len(pushes), perr)
	}
	for i, m := range pushes {
		if e := cmds[i].Err(); e != nil {
			return cmds[len(pushes):], fmt.Errorf("rdb: push to queue %q: %w", m.Queue, e)
		}
	}
	return cmds[len(pushes):], nil
}

// PushOnceAnd is PushOnce followed, in the same MULTI/EXEC, by the commands also queues.
// They run whether or not the push happened: a repeated call repeats them.
func (r *RDB) PushOnceAnd(ctx context.Context, queue string, payload []byte, id string, keep time.Duration, also func(p redis.Pipeliner)) (pushed bool, extra []redis.Cmder, err error) {
	k := r.keysOf(queue)
	secs := int64((keep + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	var push *redis.Cmd
	cmds, perr := r.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		push = pushOnceScript.Eval(ctx, p, []string{k.Queue, k.Notify, k.PushGuard(id)}, payload, secs)
		if also != nil {
			also(p)
		}
		return nil
	})
	if len(cmds) == 0 {
		return false, nil, fmt.Errorf("rdb: push to queue %q: %w", queue, perr)
	}
	n, err := push.Int64()
	if err != nil {
		return false, cmds[1:], fmt.Errorf("rdb: push to queue %q: %w", queue, err)
	}
	return n == 1, cmds[1:], nil
}

// DeleteReservedManyAnd is DeleteReservedMany with the commands also queues sent in the
// same pipeline, after the deletions (a pipeline, not a transaction: each ZREM is
// independent as in DeleteReservedMany). deleted and errs are those of the deletions
// only; extra are the commands also queued. err is the first deletion error.
func (r *RDB) DeleteReservedManyAnd(ctx context.Context, jobs []Finished, also func(p redis.Pipeliner)) (deleted []bool, errs []error, extra []redis.Cmder, err error) {
	deleted = make([]bool, len(jobs))
	errs = make([]error, len(jobs))
	zrem := make([]*redis.Cmd, len(jobs))
	queue := func(p redis.Pipeliner) {
		for i, j := range jobs {
			// ZREM key member, as ZRem sends it, with the key boxed once per queue:
			// ZRem's own variadic arguments cost four allocations a job.
			zrem[i] = p.Do(ctx, "zrem", r.argsOf(j.Queue).reserved, j.Reserved)
		}
		if also != nil {
			also(p)
		}
	}
	var cmds []redis.Cmder
	var perr error
	if r.replicas == nil {
		cmds, perr = r.client.Pipelined(ctx, func(p redis.Pipeliner) error { queue(p); return nil })
	} else {
		cmds, perr = r.replicas.pipelined(ctx, queue)
	}
	for i, c := range zrem {
		n, cerr := c.Int64()
		if cerr != nil {
			errs[i] = fmt.Errorf("rdb: delete reserved job on queue %q: %w", jobs[i].Queue, cerr)
			if err == nil {
				err = errs[i]
			}
			continue
		}
		deleted[i] = n == 1
	}
	if len(cmds) < len(jobs) && err == nil && perr != nil {
		err = fmt.Errorf("rdb: delete reserved jobs: %w", perr)
		for i := range errs {
			errs[i] = err
		}
	}
	if len(cmds) > len(jobs) {
		extra = cmds[len(jobs):]
	}
	return deleted, errs, extra, err
}
