package laraq

import (
	"context"
	"sync"
	"sync/atomic"

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
	hz      *horizonState           // nil: Horizon is off
	batcher atomic.Pointer[batcher] // nil when none runs: deletions go straight through
}

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
	hz      *hzJob // Horizon's records of the deletion, nil for none
	deleted bool
	err     error
	done    chan struct{}

	// A request without deletion: Horizon records sent in the order of the requests
	// (see acks.record). release is called once they were sent.
	record   func(ctx context.Context, b *rdb.HorizonBatch)
	what     string
	release  func()
	reserves *hzJob // set for a job's reserved record
}

func newAcks(r *rdb.RDB) *acks { return &acks{rdb: r} }

// delete removes one finished job's reserved copy and reports whether it was still there.
// hz, when not nil, are the job's Horizon records, sent in the same round trip.
func (a *acks) delete(ctx context.Context, queue string, reserved []byte, hz *hzJob) (bool, error) {
	b := a.batcher.Load()
	if b == nil {
		return a.deleteOne(ctx, queue, reserved, hz)
	}
	b.mu.RLock()
	if b.closed {
		b.mu.RUnlock()
		return a.deleteOne(ctx, queue, reserved, hz)
	}
	b.inflight.Add(1)
	b.mu.RUnlock()
	defer b.inflight.Done()

	r := &deleteReq{job: rdb.Finished{Queue: queue, Reserved: reserved}, hz: hz, done: make(chan struct{})}
	select {
	case b.reqs <- r:
	case <-ctx.Done():
		return false, ctx.Err()
	}
	<-r.done
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
		for {
			select {
			case <-b.quit:
				return
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
				a.deleteMany(ctx, batch)
				for _, r := range batch {
					if r.done != nil {
						close(r.done)
					}
					if r.release != nil {
						r.release()
					}
				}
			}
		}
	}()
	return func() {
		a.batcher.Store(nil)
		b.mu.Lock()
		b.closed = true
		b.mu.Unlock()
		b.inflight.Wait()
		close(b.quit)
		<-b.finished
	}
}
