package bench

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/rdb"
)

// Work is what FillWork queues, for scripts/bench-scaling.sh: how the cost of a job grows
// with its payload, the queues a worker works, and the jobs that come back through a
// migration.
type Work struct {
	// Queues receive the jobs, spread evenly in contiguous blocks: the first queue gets
	// the first Jobs/len(Queues) jobs. A worker working them in this order (priority
	// order, as queue:work --queue=a,b,c) empties them one after the other, so that the
	// work sits in ever later queues and each pop first walks the emptied ones.
	Queues []string
	// Last puts every job in the last queue instead: each pop walks all the others.
	Last bool
	Jobs int
	// PayloadBytes is the length of each payload. At most the no-op's own length (~615
	// bytes): the no-op, Noop; more: Padded, whose pad makes up the difference.
	PayloadBytes int
	// Due is the share of the jobs (0 to 1) that only a migration brings back to the
	// ready lists: half of it due in :delayed, as Laravel's later() and a released job
	// leave them, half in :reserved with an expired reservation (attempts already 1), as
	// a worker that died leaves them. The drain's first migration of each queue moves
	// them to the end of its ready list.
	Due float64
}

// Padded is a job of PayloadBytes: the no-op with a string property whose text looks
// like the serialized attributes that make real payloads large (PHP's s:N:"..." with
// its quotes, which the payload's JSON escapes). testdata/php/jobs_consumer.php's
// App\Jobs\Padded.
type Padded struct {
	N   int64  `php:"n"`
	Pad string `php:"pad"`
	laraq.Queueable
}

// PHPClass is the job's PHP class.
func (Padded) PHPClass() string { return `App\Jobs\Padded` }

// padUnit is repeated to make a pad: one serialized attribute's worth of text.
const padUnit = `s:5:"title";s:24:"A queued job's own text";`

// Filled says what FillWork queued.
type Filled struct {
	PayloadBytes int   // the length of the first payload (the others differ by a few digits)
	Delayed      int64 // jobs put in :delayed, due
	Reserved     int64 // jobs left in :reserved with an expired reservation
}

// FillWork queues w.Jobs jobs as w says, with the payloads Laravel 8.83's dispatcher
// writes, pushed 1,000 at a time.
func FillWork(ctx context.Context, client redis.UniversalClient, prefix string, w Work) (Filled, error) {
	if len(w.Queues) == 0 || w.Jobs < 0 || w.Due < 0 || w.Due > 1 {
		return Filled{}, fmt.Errorf("bench: fill: %d queues, %d jobs, due share %g", len(w.Queues), w.Jobs, w.Due)
	}
	d, err := laraq.NewDispatcher(connection(client, prefix, nil))
	if err != nil {
		return Filled{}, err
	}
	r, err := rdb.New(client, rdb.Options{Prefix: prefix})
	if err != nil {
		return Filled{}, err
	}
	pad, err := padFor(d, w.PayloadBytes)
	if err != nil {
		return Filled{}, err
	}
	var filled Filled
	next := int64(0)
	for i, q := range w.Queues {
		n := w.Jobs / len(w.Queues)
		if i < w.Jobs%len(w.Queues) {
			n++
		}
		if w.Last {
			n = 0
			if i == len(w.Queues)-1 {
				n = w.Jobs
			}
		}
		payloads := make([][]byte, n)
		for j := range payloads {
			m, err := d.Prepare(job(next, pad), laraq.OnQueue(q))
			if err != nil {
				return Filled{}, err
			}
			payloads[j] = m.Payload
			next++
		}
		if filled.PayloadBytes == 0 && n > 0 {
			filled.PayloadBytes = len(payloads[0])
		}
		delayed, reserved, err := fillQueue(ctx, r, q, payloads, w.Due)
		if err != nil {
			return Filled{}, err
		}
		filled.Delayed += delayed
		filled.Reserved += reserved
	}
	return filled, nil
}

// fillQueue pushes payloads to q, after leaving a due share of them in :reserved with
// expired reservations (pushed, then popped with a reservation that ended a second ago)
// and in :delayed, due now.
func fillQueue(ctx context.Context, r *rdb.RDB, q string, payloads [][]byte, due float64) (delayed, reserved int64, err error) {
	nDue := int(due*float64(len(payloads)) + 0.5)
	nReserved := nDue / 2
	now := time.Now().Unix()
	if err := pushAll(ctx, r, q, payloads[:nReserved]); err != nil {
		return 0, 0, err
	}
	for reserved < int64(nReserved) {
		popped, err := r.PopMany(ctx, q, now-1, min(nReserved-int(reserved), rdb.MaxPop))
		if err != nil {
			return 0, 0, err
		}
		if len(popped) == 0 {
			return 0, 0, fmt.Errorf("bench: fill: queue %q ran empty after %d of %d reservations", q, reserved, nReserved)
		}
		reserved += int64(len(popped))
	}
	for _, p := range payloads[nReserved:nDue] {
		if err := r.Later(ctx, q, now, p); err != nil {
			return 0, 0, err
		}
		delayed++
	}
	return delayed, reserved, pushAll(ctx, r, q, payloads[nDue:])
}

func pushAll(ctx context.Context, r *rdb.RDB, q string, payloads [][]byte) error {
	for len(payloads) > 0 {
		n := min(len(payloads), 1000)
		if err := r.PushBulk(ctx, q, payloads[:n]); err != nil {
			return err
		}
		payloads = payloads[n:]
	}
	return nil
}

// job is the benchmark's job number n: the no-op without a pad, else Padded.
func job(n int64, pad string) any {
	if pad == "" {
		return Noop{N: n}
	}
	return Padded{N: n, Pad: pad}
}

// padFor returns the pad that makes a payload size bytes long (within a few bytes: the
// job number's digits vary), "" when the no-op is that long already. Each byte of the
// pad costs more than one in the payload (its quotes are escaped), so the length is
// found by measuring.
func padFor(d *laraq.Dispatcher, size int) (string, error) {
	measure := func(pad string) (int, error) {
		m, err := d.Prepare(job(1e6, pad), laraq.OnQueue("bench"))
		if err != nil {
			return 0, err
		}
		return len(m.Payload), nil
	}
	base, err := measure("")
	if err != nil || size <= base {
		return "", err
	}
	n := size - base
	for range 8 {
		got, err := measure(padText(n))
		if err != nil {
			return "", err
		}
		if got == size {
			break
		}
		n += (size - got) * n / max(got-base, 1)
		n = max(n, 1)
	}
	return padText(n), nil
}

// padText is n bytes of padUnit repeated.
func padText(n int) string {
	return strings.Repeat(padUnit, n/len(padUnit)+1)[:n]
}
