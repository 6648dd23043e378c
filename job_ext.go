package laraq

import (
	"context"

	"github.com/laraq/laraq/encryption"
	"github.com/laraq/laraq/phpser"
)

// jobExt is what a worker attaches to each JobInfo for the Laravel features that live
// beside the handler: the Encrypter of encrypted commands, the unique lock and the
// batch. A JobInfo built outside a worker (package laraqtest) has none.
type jobExt struct {
	w              *Worker
	encrypter      *encryption.Encrypter
	command        any  // the command in its registered Go type (UniqueJob and friends)
	decoded        bool // command was decoded (or failed to)
	uniqueReleased bool // the unique lock was released (or will not be by this attempt)
}

// prepareJob attaches the worker's extensions to a job just parsed, and reads what the
// envelope already says (data.batchId).
func (c *Worker) prepareJob(job *JobInfo) {
	job.ext = &jobExt{w: c, encrypter: c.conn.Encrypter}
	if b := job.Payload.BatchID; b != nil {
		job.BatchID = *b
	}
}

// noteBatch takes the batch id from a decoded command's batchId property (the Batchable
// trait) when the envelope did not carry data.batchId.
func (j *JobInfo) noteBatch(cmd *phpser.Value) {
	if j.BatchID != "" || cmd == nil {
		return
	}
	if v, ok := publicProp(cmd, "batchId"); ok && v.Kind() == phpser.KindString {
		j.BatchID = v.Str()
	}
}

// commandTraits is what a registered class's Go type says about the PHP class beyond
// its properties: ShouldBeUnique, ShouldBeUniqueUntilProcessing, SkipIfBatchCancelled.
// decode turns a job's command into a fresh value of the type.
type commandTraits struct {
	unique, untilProcessing, skipIfBatchCancelled bool
	decode                                        func(*JobInfo) (any, error)
}

// traitsOf reads the traits of T, whose value or pointer may implement them.
func traitsOf[T any]() *commandTraits {
	var zero T
	is := func(f func(any) bool) bool { return f(zero) || f(&zero) }
	t := &commandTraits{
		unique:               is(func(v any) bool { _, ok := v.(UniqueJob); return ok }),
		untilProcessing:      is(func(v any) bool { _, ok := v.(UniqueUntilProcessing); return ok }),
		skipIfBatchCancelled: is(func(v any) bool { _, ok := v.(SkipsCancelledBatch); return ok }),
	}
	if !t.unique && !t.skipIfBatchCancelled {
		return nil
	}
	t.decode = func(info *JobInfo) (any, error) {
		// A pointer: its method set holds the methods of both receivers.
		p := new(T)
		if err := bindCommand(info, p); err != nil {
			return nil, err
		}
		return p, nil
	}
	return t
}

// noteTraits records a class's traits when its Go type has any.
func (j *Jobs) noteTraits(class string, t *commandTraits) {
	if t == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.traits == nil {
		j.traits = map[string]*commandTraits{}
	}
	j.traits[class] = t
}

// traitsFor returns the traits of the class a job is routed to (aliases followed).
func (j *Jobs) traitsFor(class string) *commandTraits {
	_, as, ok := j.lookup(class)
	if !ok {
		return nil
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	return j.traits[as]
}

// commandOf is the job's command decoded into its registered Go type (cached), and the
// type's traits; nil, nil when the type has none or the command does not decode.
func (c *Worker) commandOf(job *JobInfo) (any, *commandTraits) {
	t := c.jobs.traitsFor(job.Class)
	if t == nil || job.ext == nil {
		return nil, nil
	}
	if !job.ext.decoded {
		job.ext.decoded = true
		job.ext.command, _ = t.decode(job)
	}
	if job.ext.command == nil {
		return nil, nil
	}
	return job.ext.command, t
}

// withJobFeatures wraps a handler with what CallQueuedHandler does around handle():
// skipping a job of a cancelled batch (SkipIfBatchCancelled) and releasing the lock of a
// ShouldBeUniqueUntilProcessing job just before the handler runs.
func (c *Worker) withJobFeatures(jr *jobRun, h handlerFunc) handlerFunc {
	return func(ctx context.Context, job *JobInfo) error {
		if c.skipCancelledBatch(ctx, jr) {
			return nil
		}
		c.uniqueBeforeHandle(ctx, jr)
		return h(ctx, job)
	}
}
