package rdb

import (
	"context"
	"fmt"
	"unsafe"

	"github.com/redis/go-redis/v9"
)

// The pop is the worker's hottest call: its arguments are built from keys boxed once per
// queue (a string put in an `any` is an allocation each time), and its reply's strings
// become the jobs' bytes without a copy.

// popHash is the pop script's SHA1, boxed once.
var popHash any = popScript.Hash()

// runPop sends the pop script (EVALSHA, then EVAL when the server does not know it, as
// redis.Script.Run does) with keys k (boxed) and args, and returns the reply's elements.
func (r *RDB) runPop(ctx context.Context, k []any, args ...any) ([]any, error) {
	call := func(name string, script any) ([]any, error) {
		cmd := popCmd(ctx, name, script, k, args)
		_ = r.client.Process(ctx, cmd)
		return cmd.Slice()
	}
	res, err := call("evalsha", popHash)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		res, err = call("eval", popSrc)
	}
	return res, err
}

// popCmd is the command that calls the pop script (name: evalsha with popHash, or eval
// with its source) with keys k (boxed) and args.
func popCmd(ctx context.Context, name string, script any, k, args []any) *redis.Cmd {
	cmdArgs := make([]any, 0, 3+len(k)+len(args))
	cmdArgs = append(cmdArgs, name, script, len(k))
	cmdArgs = append(cmdArgs, k...)
	cmdArgs = append(cmdArgs, args...)
	cmd := redis.NewCmd(ctx, cmdArgs...)
	// A Cluster client routes the call by its first key, the ready list.
	cmd.SetFirstKeyPos(3)
	return cmd
}

// PipelinedPop is a ticketed pop (PopTicket) sent in a pipeline of the caller's, after
// the commands queued before it: a worker sends its finished jobs' deletions and their
// Horizon records in the round trip of its next pop, and Redis runs them first, so
// that the slot a deletion ends is free before the pop fills it.
type PipelinedPop struct {
	r          *RDB
	queue      string
	keys, args []any
	cmd        *redis.Cmd
}

// PipelinedPopTicket prepares a PopTicket of up to max jobs from queue: Queue adds it to
// a pipeline, Result reads its jobs once the pipeline ran.
func (r *RDB) PipelinedPopTicket(ctx context.Context, queue string, reserveUntil int64, max int, t Ticket) (*PipelinedPop, error) {
	if t.Owner == "" || t.Seq < 1 {
		return nil, fmt.Errorf("rdb: pop from queue %q: ticket needs an owner and a sequence number >= 1", queue)
	}
	keys, args, err := r.popCall(queue, reserveUntil, max, &t)
	if err != nil {
		return nil, err
	}
	return &PipelinedPop{r: r, queue: queue, keys: keys, args: args, cmd: popCmd(ctx, "evalsha", popHash, keys, args)}, nil
}

// Queue adds the pop to pipeline p.
func (p *PipelinedPop) Queue(ctx context.Context, pl redis.Pipeliner) { _ = pl.Process(ctx, p.cmd) }

// Result is the pop's jobs, or its error, once the pipeline ran. A server that did not
// know the script (restarted, flushed: NOSCRIPT, nothing ran) is sent the pop again on
// its own, with the script's source.
func (p *PipelinedPop) Result(ctx context.Context) ([]PoppedJob, error) {
	res, err := p.cmd.Slice()
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		res, err = p.r.runPop(ctx, p.keys, p.args...)
	}
	if err != nil {
		return nil, fmt.Errorf("rdb: pop from queue %q: %w", p.queue, p.r.queueError(ctx, p.queue, err))
	}
	return popJobs(res, p.queue, p.r.keysOf(p.queue))
}

// ConfirmsAcks reports whether acknowledgements wait for replicas (Options.ReplicaAcks).
func (r *RDB) ConfirmsAcks() bool { return r.replicas != nil }

// popJobs turns the pop's reply, triples {job, reserved, reason}, into jobs. The job and
// reserved bytes are views of the reply's strings: go-redis allocates each string of a
// reply for that reply alone and keeps no reference to it, so the []byte is the only
// way to its memory, and nobody writes to popped bytes (ZREM, Release and the
// failed-job store need them exactly as they are). A raw reply (RawCmd) would save the
// strings' headers but its buffer grows by doubling: twice the bytes, which the
// collector pays for.
func popJobs(res []any, queue string, k *QueueKeys) ([]PoppedJob, error) {
	if len(res)%3 != 0 {
		return nil, fmt.Errorf("rdb: pop from queue %q: reply of %d elements, want triples", queue, len(res))
	}
	jobs := make([]PoppedJob, len(res)/3)
	for i := range jobs {
		p := &jobs[i]
		var reason []byte
		var err error
		if p.Job, err = replyView(res[3*i]); err == nil {
			if p.Reserved, err = replyView(res[3*i+1]); err == nil {
				reason, err = replyView(res[3*i+2])
			}
		}
		if err == nil && p.Job == nil {
			err = fmt.Errorf("job %d of the reply is null", i)
		}
		if err != nil {
			return nil, fmt.Errorf("rdb: pop from queue %q: %w", queue, err)
		}
		if p.Reserved == nil {
			p.Invalid = &InvalidJobError{Queue: queue, Key: k.Invalid, Job: p.Job, Reason: string(reason)}
		}
	}
	return jobs, nil
}

// replyView is a reply string as []byte without a copy (see popJobs); nil stays nil.
func replyView(v any) ([]byte, error) {
	switch v := v.(type) {
	case nil:
		return nil, nil
	case string:
		if v == "" {
			return []byte{}, nil
		}
		return unsafe.Slice(unsafe.StringData(v), len(v)), nil
	default:
		return nil, fmt.Errorf("unexpected reply element %T", v)
	}
}
