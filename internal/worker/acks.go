package worker

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/horizon"
	"github.com/laraq/laraq/internal/rdb"
)

// maxAckBatch bounds how many deletions go into one pipeline.
const maxAckBatch = 256

// acks deletes finished jobs. The deletions that jobs finishing at the same moment ask
// for are sent together with rdb.DeleteReservedMany, in one round trip, instead of one
// round trip each. The commands are the same (one ZREM per job, exactly the member the
// pop returned); only the round trips and system calls are shared, which is most of the
// client's CPU per job when many jobs finish per millisecond.
type acks struct {
	rdb     *rdb.RDB
	hz      *horizon.Recorder       // nil: Horizon is off
	batcher atomic.Pointer[batcher] // nil when none runs: deletions go straight through

	// While the fetch loop pops (riding), a finished job's deletion waits for the
	// loop's next pop and travels in its pipeline, before it (rdb.PipelinedPop), and
	// hands its slot to the loop: the pop takes that slot too. One round trip carries
	// both, and Redis removes the reservation a slot ends before it makes the one the
	// slot starts. A deletion the loop has not taken within rideWait (the loop is
	// idle in block_for or a sleep, paused, stopping) goes with the batcher, which
	// frees its slot once Redis answered. A deletion that failed keeps its slot with
	// its job until a retry succeeds. A slot is handed over only for a job whose
	// deletion is its last step in Redis (its chain continued before, see
	// settler.applyOutcome). With Horizon, its records and every other deletion ride
	// too, in the one order of the riders, without waking the loop. Not with replica
	// acknowledgements, --rest, --max-jobs or a single slot (mayRide): those keep
	// PHP's order, one job's every step before the next job's pop.
	mayRide bool
	riding  atomic.Bool
	rideMu  sync.Mutex
	riders  []*deleteReq
	rode    chan struct{} // the first rider was queued: the fetch loop wakes
	nudge   chan struct{} // the same, for the batcher: it starts its rideWait
}

// rideWait is how long a finished job's deletion waits for the fetch loop's next pop
// before the batcher sends it: longer than a pop of a few hundred jobs takes on a busy
// server, short against anything the delay could change (the job stays reserved that
// much longer, its slot waits for it, and the loop waits for slots only when it has
// jobs to pop).
const rideWait = 10 * time.Millisecond

type batcher struct {
	mu       sync.RWMutex
	closed   bool
	inflight sync.WaitGroup // delete calls that handed a request to this batcher
	reqs     chan *deleteReq
	quit     chan struct{}
	finished chan struct{}
}

type deleteReq struct {
	job     rdb.Finished
	hz      *horizon.Job // Horizon's records of the deletion, nil for none
	deleted bool
	err     error
	done    chan struct{}  // closed when sent, for a request that has one (records)
	wait    sync.WaitGroup // done when sent, for a job's deletion (no allocation per job)

	// A request without deletion: Horizon records sent in the order of the requests
	// (see acks.record). release is called once they were sent.
	record   func(ctx context.Context, b *rdb.HorizonBatch)
	what     string
	release  func()
	reserves *horizon.Job // set for a job's reserved record

	// A job's deletion that may ride the next pop hands its slot over when queued:
	// slots is the run's slot tokens; freed says the job no longer holds its token
	// (the fetch loop or the batcher gives it back).
	slots chan struct{}
	freed bool
}

func newAcks(r *rdb.RDB, hz *horizon.Recorder, cfg *Config) *acks {
	mayRide := !r.ConfirmsAcks() && cfg.Concurrency > 1 && cfg.Rest == 0 && cfg.MaxJobs == 0
	return &acks{rdb: r, hz: hz, mayRide: mayRide, rode: make(chan struct{}, 1), nudge: make(chan struct{}, 1)}
}

// delete removes one finished job's reserved copy and reports whether it was still there.
// r names the job (its queue and exact reserved bytes) and, in hz, its Horizon records,
// sent in the same round trip; the caller owns r, one per attempt, so that a deletion
// allocates nothing.
func (a *acks) delete(ctx context.Context, r *deleteReq) (bool, error) {
	b := a.batcher.Load()
	if b == nil {
		return a.deleteOne(ctx, r.job.Queue, r.job.Reserved, r.hz)
	}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return a.deleteOne(ctx, r.job.Queue, r.job.Reserved, r.hz)
	}
	b.inflight.Add(1)
	b.mu.RUnlock()
	defer b.inflight.Done()

	r.deleted, r.err = false, nil
	r.wait.Add(1)
	if (r.slots != nil || a.hz != nil) && a.riding.Load() {
		r.freed = r.slots != nil
		a.ride(r)
		if r.freed {
			signal(a.rode)
		}
		r.wait.Wait()
		return r.deleted, r.err
	}
	select {
	case b.reqs <- r:
	case <-ctx.Done():
		r.wait.Done()
		return false, ctx.Err()
	}
	r.wait.Wait()
	return r.deleted, r.err
}

// start runs a batcher until the returned stop is called; stop waits for the requests
// already handed over.
func (a *acks) start(ctx context.Context) (stop func()) {
	b := &batcher{reqs: make(chan *deleteReq, maxAckBatch), quit: make(chan struct{}), finished: make(chan struct{})}
	a.batcher.Store(b)
	go func() {
		defer close(b.finished)
		batch := make([]*deleteReq, 0, maxAckBatch)
		var late <-chan time.Time // rideWait after a rider was queued
		for {
			select {
			case <-b.quit:
				return
			case <-a.nudge:
				if late == nil {
					late = time.After(rideWait)
				}
			case <-late:
				late = nil
				a.sendLate(ctx)
			case r := <-b.reqs:
				batch = append(batch[:0], r)
			more:
				for len(batch) < maxAckBatch {
					select {
					case r := <-b.reqs:
						batch = append(batch, r)
					default:
						break more
					}
				}
				a.sendLate(ctx) // the riders queued before these requests go first
				a.deleteMany(ctx, batch)
				for _, r := range batch {
					r.sent()
				}
			}
		}
	}()
	return func() {
		a.stopRiding(ctx)
		a.batcher.Store(nil)
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		b.inflight.Wait()
		close(b.quit)
		<-b.finished
	}
}

// startRiding lets finished jobs' deletions wait for the fetch loop's pops (see
// acks.riding), when they may.
func (a *acks) startRiding() { a.riding.Store(a.mayRide) }

// stopRiding ends the rides: the deletions waiting for a pop are sent now, later ones
// go with the batcher.
func (a *acks) stopRiding(ctx context.Context) {
	a.riding.Store(false)
	a.sendLate(ctx)
}

// takeRiders returns the deletions waiting for a pop; the caller sends them and calls
// doneRiders.
func (a *acks) takeRiders() []*deleteReq {
	if !a.mayRide {
		return nil
	}
	a.rideMu.Lock()
	reqs := a.riders
	a.riders = nil
	a.rideMu.Unlock()
	return reqs
}

// ride queues r for the fetch loop's next pop; the batcher sends it after rideWait if
// no pop took it.
func (a *acks) ride(r *deleteReq) {
	a.rideMu.Lock()
	first := len(a.riders) == 0
	a.riders = append(a.riders, r)
	a.rideMu.Unlock()
	if first {
		signal(a.nudge)
	}
}

// sendRiding sends riders the fetch loop took, in the pipeline of its pop when pop is
// not nil (before it), and returns how many deletions that brought a slot failed:
// their slots stay with their jobs, the loop holds the others.
func (a *acks) sendRiding(ctx context.Context, riders []*deleteReq, pop *rdb.PipelinedPop) (failed int) {
	return a.sendRiders(ctx, riders, pop, false)
}

// sendLate sends the riders no pop took, on their own, and frees the slots of the
// deletions Redis made, after its answer: a pop the loop sends meanwhile on another
// connection may reach Redis first, and must not have counted them.
func (a *acks) sendLate(ctx context.Context) {
	if reqs := a.takeRiders(); len(reqs) > 0 {
		a.sendRiders(ctx, reqs, nil, true)
	}
}

// sendRiders sends riders (with pop, see sendMany) and settles the slots they brought:
// a failed deletion's slot goes back to its job, a made one's to the slot tokens when
// freeSlots (else the fetch loop holds it). It returns how many failed.
func (a *acks) sendRiders(ctx context.Context, riders []*deleteReq, pop *rdb.PipelinedPop, freeSlots bool) (failed int) {
	a.sendMany(ctx, riders, pop)
	for _, r := range riders {
		switch {
		case !r.freed:
		case r.err != nil:
			r.freed = false
			failed++
		case freeSlots:
			r.slots <- struct{}{}
		}
		r.sent()
	}
	return failed
}

// sent tells the sender of r that it was sent: a deletion's caller waits for its
// result, a record's for its done channel, and the batcher counts the request done.
func (r *deleteReq) sent() {
	if r.done != nil {
		close(r.done)
	} else if r.record == nil {
		r.wait.Done()
	}
	if r.release != nil {
		r.release()
	}
}

// signal wakes the receiver of c, a channel of one, without waiting.
func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// reservedAndDeleted finds the completed jobs whose reserved record comes before their
// deletion in reqs; nil when there are none.
func reservedAndDeleted(reqs []*deleteReq) map[*horizon.Job]bool {
	var reserving, both map[*horizon.Job]bool
	for _, r := range reqs {
		switch {
		case r.reserves != nil:
			if reserving == nil {
				reserving = make(map[*horizon.Job]bool)
			}
			reserving[r.reserves] = true
		case r.record == nil && r.hz != nil && r.hz.Failure == nil && reserving[r.hz]:
			if both == nil {
				both = make(map[*horizon.Job]bool)
			}
			both[r.hz] = true
		}
	}
	return both
}

// deleteOne deletes one job outside a batch, with its Horizon records when it has any.
func (a *acks) deleteOne(ctx context.Context, queue string, reserved []byte, hz *horizon.Job) (bool, error) {
	if a.hz == nil || hz == nil {
		return a.rdb.DeleteReserved(ctx, queue, reserved)
	}
	r := &deleteReq{job: rdb.Finished{Queue: queue, Reserved: reserved}, hz: hz}
	a.deleteMany(ctx, []*deleteReq{r})
	return r.deleted, r.err
}

// record sends Horizon records through the batcher, in the pipeline of the deletions
// handed over with it, after every request handed over before: a job's reserved record
// always precedes its completed record, which its deletion hands over later. It does
// not wait. Without a running batcher it sends them at once.
func (a *acks) record(ctx context.Context, what string, fn func(ctx context.Context, b *rdb.HorizonBatch)) {
	a.send(ctx, &deleteReq{record: fn, what: what})
}

// recordReserved is record for job's reserved record, fn. When the job's deletion
// travels in the same batch, the batch sends both records as one call
// (rdb.Horizon.ReservedCompleted) instead of fn.
func (a *acks) recordReserved(ctx context.Context, job *horizon.Job, fn func(ctx context.Context, b *rdb.HorizonBatch)) {
	a.send(ctx, &deleteReq{record: fn, what: "reserved", reserves: job})
}

func (a *acks) send(ctx context.Context, req *deleteReq) {
	if b := a.batcher.Load(); b != nil {
		b.mu.RLock()
		if !b.closed {
			b.inflight.Add(1)
			b.mu.RUnlock()
			req.release = b.inflight.Done
			if a.riding.Load() {
				a.ride(req)
				return
			}
			select {
			case b.reqs <- req:
			case <-ctx.Done():
				b.inflight.Done()
			}
			return
		}
		b.mu.RUnlock()
	}
	a.hz.ExecBatch(ctx, req.what, func(b *rdb.HorizonBatch) { req.record(ctx, b) })
}

// deleteMany sends a batch of requests: the deletions of finished jobs
// (rdb.DeleteReservedMany), whose results it sets, and Horizon's records, in the order
// of the requests: those of the batcher's record requests, and for each deletion its
// completed and metrics, or failed, records. With Horizon's keys on the queue's client
// they go in the pipeline of the deletions, after them; otherwise in a pipeline of their
// own right after. PHP's Horizon records a deletion (JobDeleted) whether or not the
// reservation was still there: a job whose reservation had expired is recorded finished
// by the worker that finished it.
func (a *acks) deleteMany(ctx context.Context, reqs []*deleteReq) { a.sendMany(ctx, reqs, nil) }

// sendMany is deleteMany with the fetch loop's pop, when not nil, queued last in the
// pipeline of the deletions (and of the records, with Horizon's keys on the queue's
// client).
func (a *acks) sendMany(ctx context.Context, reqs []*deleteReq, pop *rdb.PipelinedPop) {
	h := a.hz
	jobs := make([]rdb.Finished, 0, len(reqs))
	dels := make([]*deleteReq, 0, len(reqs))
	withRecords := false
	for _, r := range reqs {
		if r.record != nil {
			withRecords = true
			continue
		}
		jobs = append(jobs, r.job)
		dels = append(dels, r)
		withRecords = withRecords || r.hz != nil
	}
	// deleteAnd deletes jobs with the commands of also, then the pop, in one pipeline,
	// and returns also's commands.
	deleteAnd := func(also func(p redis.Pipeliner)) (extra []redis.Cmder) {
		var deleted []bool
		var errs []error
		if also == nil && pop == nil {
			deleted, errs, _ = a.rdb.DeleteReservedMany(ctx, jobs)
		} else {
			deleted, errs, extra, _ = a.rdb.DeleteReservedManyAnd(ctx, jobs, func(p redis.Pipeliner) {
				if also != nil {
					also(p)
				}
				if pop != nil {
					pop.Queue(ctx, p)
				}
			})
			if pop != nil && len(extra) > 0 {
				extra = extra[:len(extra)-1]
			}
		}
		for i, r := range dels {
			r.deleted, r.err = deleted[i], errs[i]
		}
		return extra
	}
	if h == nil || !withRecords {
		deleteAnd(nil)
		return
	}
	// Every record of the requests, in their order, as one batch: one script call. A
	// job whose reserved record and deletion are both here has them sent together.
	together := reservedAndDeleted(reqs)
	queue := func(p redis.Pipeliner) {
		b := &rdb.HorizonBatch{}
		for _, r := range reqs {
			switch {
			case r.record != nil:
				if r.reserves == nil || !together[r.reserves] {
					r.record(ctx, b)
				}
			case r.hz != nil && r.err == nil:
				h.Finished(ctx, b, r.hz, together[r.hz])
			}
		}
		if _, err := b.Queue(ctx, p); err != nil {
			h.Failed("records", err)
		}
	}
	if !h.Shared || (len(jobs) == 0 && pop == nil) {
		if len(jobs) > 0 || pop != nil {
			deleteAnd(nil)
		}
		h.Exec(ctx, "records", func(p redis.Pipeliner) error { queue(p); return nil })
		return
	}
	h.Settle(ctx, "records", deleteAnd(queue))
}
