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
		cmdArgs := make([]any, 0, 3+len(k)+len(args))
		cmdArgs = append(cmdArgs, name, script, len(k))
		cmdArgs = append(cmdArgs, k...)
		cmdArgs = append(cmdArgs, args...)
		cmd := redis.NewCmd(ctx, cmdArgs...)
		// A Cluster client routes the call by its first key, the ready list.
		cmd.SetFirstKeyPos(3)
		_ = r.client.Process(ctx, cmd)
		return cmd.Slice()
	}
	res, err := call("evalsha", popHash)
	if err != nil && redis.HasErrorPrefix(err, "NOSCRIPT") {
		res, err = call("eval", popSrc)
	}
	return res, err
}

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
