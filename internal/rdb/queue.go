package rdb

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// Push makes payload ready on queue: RPUSH to the ready list and one "1" to the notify list,
// in one script (Laravel's push / pushRaw). The payload is stored byte for byte.
func (r *RDB) Push(ctx context.Context, queue string, payload []byte) error {
	k := r.keysOf(queue)
	if err := pushScript.Run(ctx, r.client, []string{k.Queue, k.Notify}, payload).Err(); err != nil {
		return fmt.Errorf("rdb: push to queue %q: %w", queue, err)
	}
	return nil
}

// PushOnce makes payload ready like Push, unless a PushOnce with the same id did so in
// the last keep (see push_once.lua): a push retried after an error whose outcome is
// unknown cannot make the job ready twice. id is the job's (unique) payload id.
func (r *RDB) PushOnce(ctx context.Context, queue string, payload []byte, id string, keep time.Duration) (pushed bool, err error) {
	k := r.keysOf(queue)
	secs := int64((keep + time.Second - 1) / time.Second)
	if secs < 1 {
		secs = 1
	}
	n, err := pushOnceScript.Run(ctx, r.client, []string{k.Queue, k.Notify, k.PushGuard(id)}, payload, secs).Int64()
	if err != nil {
		return false, fmt.Errorf("rdb: push to queue %q: %w", queue, r.queueError(ctx, queue, err))
	}
	return n == 1, nil
}

// PushBulk makes all payloads ready, in order, atomically: either all are pushed (each with
// its notify token) or none — the effect of Laravel's bulk(), which runs its pushes in
// MULTI/EXEC. It is one script call, so a very large batch holds the server for its
// duration; callers split huge batches.
func (r *RDB) PushBulk(ctx context.Context, queue string, payloads [][]byte) error {
	if len(payloads) == 0 {
		return nil
	}
	k := r.keysOf(queue)
	args := make([]any, len(payloads))
	for i, p := range payloads {
		args[i] = p
	}
	if err := pushScript.Run(ctx, r.client, []string{k.Queue, k.Notify}, args...).Err(); err != nil {
		return fmt.Errorf("rdb: push %d payloads to queue %q: %w", len(payloads), queue, err)
	}
	return nil
}

// Later adds payload to the delayed zset with score availableAt (Unix seconds): the plain
// ZADD Laravel ≤12.44 sends (12.45+ wraps the same ZADD in a script). No notify token: the
// job becomes ready when a pop's migration moves it. Like Laravel, an identical payload
// already delayed only has its score updated.
func (r *RDB) Later(ctx context.Context, queue string, availableAt int64, payload []byte) error {
	k := r.keysOf(queue)
	if err := r.client.ZAdd(ctx, k.Delayed, redis.Z{Score: float64(availableAt), Member: payload}).Err(); err != nil {
		return fmt.Errorf("rdb: delay job on queue %q: %w", queue, err)
	}
	return nil
}

// PoppedJob is one job taken off a ready list. Its byte slices share memory with the
// script's reply and nothing else: read them, never write to them.
type PoppedJob struct {
	// Job is the payload exactly as it was in the ready list. Its attempts field is one
	// less than the current attempt. It is what a failed-job record stores and what
	// Unreserve puts back.
	Job []byte
	// Reserved is the cjson-re-encoded copy with attempts+1, now a member of the reserved
	// zset. DeleteReserved and Release need these exact bytes: a re-encoded copy matches
	// nothing. Nil when Invalid is set.
	Reserved []byte
	// Invalid is set when the payload could not be reserved and was moved to the invalid
	// list instead.
	Invalid *InvalidJobError
}

// Pop reserves the job at the head of queue, with reservation expiry reserveUntil (Unix
// seconds, now + retry_after): the effect of Laravel's pop script. It does not migrate
// delayed or expired jobs first (call MigrateDelayed and MigrateReserved before it, as
// RedisQueue::pop does) and never blocks. job and reserved are nil when the queue is empty.
//
// A payload that Laravel's script would fail on is moved to the queue's invalid list
// instead of being lost; Pop then returns the payload as job, a nil reserved, and an
// *InvalidJobError (errors.Is(err, ErrInvalidJob)). The next Pop takes the next job.
func (r *RDB) Pop(ctx context.Context, queue string, reserveUntil int64) (job, reserved []byte, err error) {
	jobs, err := r.PopMany(ctx, queue, reserveUntil, 1)
	if err != nil || len(jobs) == 0 {
		return nil, nil, err
	}
	if jobs[0].Invalid != nil {
		return jobs[0].Job, nil, jobs[0].Invalid
	}
	return jobs[0].Job, jobs[0].Reserved, nil
}

// PopMany reserves up to max jobs from the head of queue in one script call, each with
// exactly the effects of one Pop (so n jobs leave the same state as n Pops). Invalid
// payloads are moved aside and reported in their PoppedJob.Invalid; they count toward max.
// An empty result means the queue was empty. One call takes at most MaxPop jobs.
//
// A PopMany whose reply is lost may have reserved jobs nobody will run until retry_after:
// workers use PopTicket.
func (r *RDB) PopMany(ctx context.Context, queue string, reserveUntil int64, max int) ([]PoppedJob, error) {
	return r.pop(ctx, queue, reserveUntil, max, nil)
}

// Ticket names one pop request of one worker, so that a pop whose reply was lost can be
// asked again: the same ticket gets the same jobs back, never a second pop (see pop.lua).
type Ticket struct {
	// Owner is unique per worker run (a UUID); it names the key its last pop is kept in.
	Owner string
	// Seq numbers the owner's requests from 1. After a reply is received the next request
	// uses Seq+1; after an error the same Seq is asked again until a reply arrives.
	Seq int64
	// Keep is how long Redis keeps the last pop's jobs: longer than the owner may take to
	// ask again. Rounded up to whole seconds; at least one.
	Keep time.Duration
}

// PopTicket is PopMany made safe to repeat. The first call with a ticket pops; every
// later call with the same ticket — a repetition after an error, or a copy of the first
// the client re-sent — changes nothing and returns that call's jobs again: those still
// reserved with the same bytes (a reservation that expired and was migrated back is no
// longer the owner's), and the invalid ones with their reason. A call with a lower Seq
// than the owner's last request on this queue returns nothing and changes nothing. When
// the reply of the first call is lost, asking again with the same ticket hands its jobs
// to the worker instead of leaving them reserved with no owner.
func (r *RDB) PopTicket(ctx context.Context, queue string, reserveUntil int64, max int, t Ticket) ([]PoppedJob, error) {
	if t.Owner == "" || t.Seq < 1 {
		return nil, fmt.Errorf("rdb: pop from queue %q: ticket needs an owner and a sequence number >= 1", queue)
	}
	return r.pop(ctx, queue, reserveUntil, max, &t)
}

// MaxPop is the most jobs one pop call takes: the script reserves them with one ZADD,
// whose arguments Lua's unpack must hold (a few thousand at most).
const MaxPop = 1000

func (r *RDB) pop(ctx context.Context, queue string, reserveUntil int64, max int, t *Ticket) ([]PoppedJob, error) {
	keys, args, err := r.popCall(queue, reserveUntil, max, t)
	if err != nil {
		return nil, err
	}
	res, err := r.runPop(ctx, keys, args...)
	if err != nil {
		return nil, fmt.Errorf("rdb: pop from queue %q: %w", queue, r.queueError(ctx, queue, err))
	}
	return popJobs(res, queue, r.keysOf(queue))
}

// popCall is the pop script's keys (boxed) and arguments for a pop of up to max jobs,
// with ticket t when it is not nil.
func (r *RDB) popCall(queue string, reserveUntil int64, max int, t *Ticket) (keys, args []any, err error) {
	if max < 1 {
		return nil, nil, fmt.Errorf("rdb: pop from queue %q: max %d < 1", queue, max)
	}
	max = min(max, MaxPop)
	keys = r.argsOf(queue).pop
	if t == nil {
		return keys, []any{reserveUntil, max}, nil
	}
	keep := int64((t.Keep + time.Second - 1) / time.Second)
	if keep < 1 {
		keep = 1
	}
	withTicket := append(keys[:len(keys):len(keys)], r.keysOf(queue).Ticket(t.Owner))
	return withTicket, []any{reserveUntil, max, t.Seq, keep}, nil
}

// Release moves a reserved job to the delayed zset with score availableAt (Unix seconds;
// now for an immediate retry): Laravel's release script. reserved must be the exact bytes
// Pop returned. The moved member is the reserved copy, whose attempts already counts the
// attempt that is ending.
//
// released is false when the reservation was not found: it expired and another worker
// already moved the job back to the ready list (or the bytes differ). Unlike Laravel, which
// then still adds the stale copy to the delayed zset and so duplicates the job, nothing is
// added.
func (r *RDB) Release(ctx context.Context, queue string, reserved []byte, availableAt int64) (released bool, err error) {
	k := r.keysOf(queue)
	var n int64
	if r.replicas == nil {
		n, err = releaseScript.Run(ctx, r.client, []string{k.Delayed, k.Reserved}, reserved, availableAt).Int64()
	} else {
		err = r.replicas.do(ctx, func(c redis.Scripter) (err error) {
			n, err = releaseScript.Run(ctx, c, []string{k.Delayed, k.Reserved}, reserved, availableAt).Int64()
			return err
		})
	}
	if err != nil {
		return false, fmt.Errorf("rdb: release job on queue %q: %w", queue, r.queueError(ctx, queue, err))
	}
	return n == 1, nil
}

// DeleteReserved removes a finished job: ZREM of the reserved zset, exactly
// RedisQueue::deleteReserved. reserved must be the exact bytes Pop returned; any
// re-encoding removes nothing. deleted is false when the reservation was not found
// (expired and migrated back, so the job will run again).
func (r *RDB) DeleteReserved(ctx context.Context, queue string, reserved []byte) (deleted bool, err error) {
	if r.replicas != nil {
		deleted, _, _, err := r.DeleteReservedManyAnd(ctx, []Finished{{Queue: queue, Reserved: reserved}}, nil)
		return deleted[0], err
	}
	k := r.keysOf(queue)
	n, err := r.client.ZRem(ctx, k.Reserved, reserved).Result()
	if err != nil {
		return false, fmt.Errorf("rdb: delete reserved job on queue %q: %w", queue, r.queueError(ctx, queue, err))
	}
	return n == 1, nil
}

// Unreserve gives a reserved job back without spending the attempt: atomically removes
// reserved from the reserved zset and, only if that removed it, pushes the original job
// bytes (as popped, attempts not incremented) back to the head of the ready list with a
// notify token. For jobs a worker took but will not run (shutting down, queue paused).
// PHP workers in the same fleet see an ordinary ready job. false means the reservation
// was gone and nothing was pushed.
func (r *RDB) Unreserve(ctx context.Context, queue string, job, reserved []byte) (bool, error) {
	k := r.keysOf(queue)
	n, err := unreserveScript.Run(ctx, r.client, []string{k.Queue, k.Reserved, k.Notify}, reserved, job).Int64()
	if err != nil {
		return false, fmt.Errorf("rdb: unreserve job on queue %q: %w", queue, r.queueError(ctx, queue, err))
	}
	return n == 1, nil
}

// Zset names the sorted set a migration reads.
type Zset int

const (
	// Delayed is queues:NAME:delayed (jobs pushed with a delay, and released jobs).
	Delayed Zset = iota
	// Reserved is queues:NAME:reserved (jobs whose reservation may have expired).
	Reserved
)

func (z Zset) String() string {
	switch z {
	case Delayed:
		return "delayed"
	case Reserved:
		return "reserved"
	}
	return fmt.Sprintf("Zset(%d)", int(z))
}

// NoLimit migrates every due member, as Laravel ≤9.22 and migration_batch_size -1 do.
const NoLimit = -1

// MigrateExpired moves the members of from scored ≤ now to the end of queue's ready list,
// in score order, with one notify token each: Laravel's migrateExpiredJobs script. With
// limit > 0 at most limit members move (9.23+ migration_batch_size); limit ≤ 0 means no
// limit. (Laravel would send LIMIT 0 0 for a batch size of 0 and never migrate; here 0
// is treated as no limit.) Returns the number moved.
func (r *RDB) MigrateExpired(ctx context.Context, from Zset, queue string, now int64, limit int) (int64, error) {
	k := r.keysOf(queue)
	var src string
	switch from {
	case Delayed:
		src = k.Delayed
	case Reserved:
		src = k.Reserved
	default:
		return 0, fmt.Errorf("rdb: migrate on queue %q: unknown source %v", queue, from)
	}
	if limit < 0 {
		limit = 0
	}
	n, err := migrateScript.Run(ctx, r.client, []string{src, k.Queue, k.Notify}, now, limit).Int64()
	if err != nil {
		return 0, fmt.Errorf("rdb: migrate %s jobs on queue %q: %w", from, queue, r.queueError(ctx, queue, err))
	}
	return n, nil
}

// MigrateDelayed moves due delayed jobs to the ready list (see MigrateExpired).
func (r *RDB) MigrateDelayed(ctx context.Context, queue string, now int64, limit int) (int64, error) {
	return r.MigrateExpired(ctx, Delayed, queue, now, limit)
}

// MigrateReserved moves jobs whose reservation expired back to the ready list (see
// MigrateExpired). Laravel skips this when retry_after is null.
func (r *RDB) MigrateReserved(ctx context.Context, queue string, now int64, limit int) (int64, error) {
	return r.MigrateExpired(ctx, Reserved, queue, now, limit)
}

// isNil reports a go-redis nil reply.
func isNil(err error) bool { return errors.Is(err, redis.Nil) }
