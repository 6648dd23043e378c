package laraq

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/payload"
)

// jobRun is one job being worked, with the flags PHP's Job object keeps so that a job
// is deleted, released or failed at most once.
type jobRun struct {
	queue    string
	popped   rdb.PoppedJob
	job      *JobInfo // nil when the payload could not be parsed
	deleted  bool
	released bool
	failed   bool
	hz       *hzJob // what Horizon recorded of the job; nil without Horizon

	// expires is when the reservation ends at the earliest (wall clock, Unix nanoseconds;
	// see expiry): until then no worker may migrate the job back, and acknowledgements
	// are worth retrying. Atomic: a hold extends it while the job's goroutine reads it.
	expires atomic.Int64
}

// work runs one popped job and then frees its slot, unless a handler that outlived its
// context was taken over (see runHandler): the takeover frees the slot then.
func (c *Worker) work(r *run, queue string, p rdb.PoppedJob, expires time.Time) {
	jr := &jobRun{queue: queue, popped: p}
	jr.extendTo(expires)
	var env *payload.Envelope
	var err error
	if p.Invalid == nil {
		// Parsed once, here, for Horizon's reserved record and for the run.
		env, err = payload.Parse(p.Job)
	}
	if err == nil && env != nil {
		c.horizonReserved(r, jr, env)
	}
	if c.process(r, jr, env, err) {
		return
	}
	c.finish(r)
}

// finish frees a job's slot (after Rest) and marks the job done for Run.
func (c *Worker) finish(r *run) {
	if c.s.Rest > 0 {
		c.sleep(r.ctx, c.s.Rest)
	}
	r.slots <- struct{}{}
	r.wg.Done()
}

// process follows Worker::process for one job, whose payload parsed to env (or failed
// to parse with err). It reports whether the job was taken over by runHandler's
// watchdog.
func (c *Worker) process(r *run, jr *jobRun, env *payload.Envelope, err error) (takenOver bool) {
	p := jr.popped
	if p.Invalid != nil {
		c.logInvalid(jr.queue, p.Invalid)
		c.emit(Event{Kind: EventInvalid, Queue: jr.queue, Err: p.Invalid, Payload: p.Job})
		return false
	}
	if err == nil {
		err = env.Runnable()
	}
	if err != nil {
		// Nothing to run and nothing a retry could change: keep it as a failed job.
		c.fail(r, jr, fmt.Errorf("unreadable job payload: %w", err), 0)
		return false
	}
	class := ClassOf(env)
	jr.job = &JobInfo{
		ID:         env.ID,
		UUID:       env.UUID,
		Attempt:    int(env.Attempts) + 1,
		Queue:      jr.queue,
		Connection: c.s.connection,
		Name:       env.Name(),
		Class:      class,
		Payload:    env,
		Raw:        p.Job,
		Reserved:   p.Reserved,
		release:    c.conn.Release,
	}
	c.prepareJob(jr.job)
	if c.failedBefore(r, jr) {
		return false
	}
	h, _, ok := c.jobs.lookup(class)
	if !ok {
		c.unhandled(r, jr)
		return false
	}
	h = c.withJobFeatures(jr, h)

	c.emit(Event{Kind: EventProcessing, Queue: jr.queue, Job: jr.job})
	if e := c.alreadyExceeded(jr); e != nil {
		// Usually a job that timed out before (its attempt was counted but it never
		// finished): PHP fails it before running it again.
		c.fail(r, jr, e, 0)
		c.emit(Event{Kind: EventException, Queue: jr.queue, Job: jr.job, Err: e})
		return false
	}
	if c.debounced(r, jr) {
		return false
	}
	return c.runHandler(r, jr, h)
}

// runHandler runs the handler under the job's timeout, on the job's own goroutine, and
// applies its outcome. When the job's context ends (timeout or hard stop) and the handler
// has not returned abandonWait later, a watchdog takes the job over: it applies the
// timeout rules (or leaves the job reserved at shutdown) and frees the slot, so a
// handler that ignores its context cannot block the worker; whatever that handler
// returns later is only logged. takenOver reports that case.
func (c *Worker) runHandler(r *run, jr *jobRun, h handlerFunc) (takenOver bool) {
	timeout := c.s.Timeout
	if t := jr.job.Payload.Timeout; t != nil {
		// PHP arms pcntl_alarm(max(timeout, 0)); alarm 0 means none.
		timeout = time.Duration(*t) * time.Second
		if *t <= 0 || *t > int64(365*24*time.Hour/time.Second) {
			timeout = -1
		}
	}
	var hctx context.Context
	var cancel context.CancelFunc
	if timeout > 0 {
		hctx, cancel = context.WithTimeout(r.hardCtx, timeout)
	} else {
		hctx, cancel = context.WithCancel(r.hardCtx)
	}
	defer cancel()

	const (
		running = iota
		returned
		abandoned
	)
	var state atomic.Int32
	start := time.Now()
	stopWatch := context.AfterFunc(hctx, func() {
		time.AfterFunc(abandonWait, func() {
			if !state.CompareAndSwap(running, abandoned) {
				return
			}
			c.abandoned.Add(1)
			if errors.Is(hctx.Err(), context.DeadlineExceeded) {
				c.timedOut(r, jr, timeout, time.Since(start))
			} else {
				c.log.Warn("job still running at shutdown; it stays reserved until retry_after",
					"job", jr.job.Name, "id", jr.job.ID, "queue", jr.queue)
			}
			c.finish(r)
		})
	})
	err := c.callHolding(hctx, jr, h)
	stopWatch()
	if !state.CompareAndSwap(running, returned) {
		c.abandoned.Add(-1)
		c.log.Warn("abandoned handler returned", "job", jr.job.Name, "id", jr.job.ID, "err", err)
		return true
	}
	c.applyOutcome(r, jr, err, time.Since(start), timeout, errors.Is(hctx.Err(), context.DeadlineExceeded))
	return false
}

// applyOutcome does what the handler's return value asks (see Outcome), as
// CallQueuedHandler and Worker::process do: acknowledge, release or fail, then the event.
func (c *Worker) applyOutcome(r *run, jr *jobRun, err error, runtime, timeout time.Duration, timedOut bool) {
	outcome, delay := OutcomeOf(err)
	switch {
	case timedOut && outcome == OutcomeRetry:
		c.timedOut(r, jr, timeout, runtime)
		return
	case r.hardCtx.Err() != nil && outcome == OutcomeRetry:
		// Interrupted by the hard stop rather than failed: make it available again at once.
		c.log.Info("job interrupted by shutdown; released", "job", jr.job.Name, "id", jr.job.ID, "err", err)
		c.release(r, jr, 0, false, 0)
		return
	}

	switch outcome {
	case OutcomeDone:
		// CallQueuedHandler releases the unique lock, dispatches the next job of the
		// chain, records the batch's success, then deletes this one.
		c.uniqueAfterRun(r, jr, "after processing")
		if err := c.continueChain(r, jr); err != nil {
			c.handleException(r, jr, err, runtime)
			return
		}
		c.batchJobSucceeded(r, jr)
		c.deleteReserved(r, jr)
		c.emit(Event{Kind: EventProcessed, Queue: jr.queue, Job: jr.job, Runtime: runtime})
	case OutcomeDelete:
		// $this->delete() removed the job during handle(); CallQueuedHandler checks only
		// "failed" and "released" before continuing the chain, so a deleted job continues it.
		c.deleteReserved(r, jr)
		c.uniqueAfterRun(r, jr, "after processing")
		if err := c.continueChain(r, jr); err != nil {
			c.handleException(r, jr, err, runtime)
			return
		}
		c.batchJobSucceeded(r, jr)
		c.emit(Event{Kind: EventProcessed, Queue: jr.queue, Job: jr.job, Runtime: runtime})
	case OutcomeRelease:
		c.release(r, jr, delay, false, 0)
		c.emit(Event{Kind: EventProcessed, Queue: jr.queue, Job: jr.job, Runtime: runtime})
	case OutcomeMissingModel:
		c.missingModel(r, jr, err, runtime)
	case OutcomeFail:
		c.fail(r, jr, err, runtime)
		var de *DecodeError
		if !errors.As(err, &de) {
			// $this->fail() inside handle() returns normally, so PHP's worker fires
			// JobProcessed after JobFailed. A command PHP cannot unserialize throws instead.
			c.emit(Event{Kind: EventProcessed, Queue: jr.queue, Job: jr.job, Runtime: runtime})
		}
	default:
		c.handleException(r, jr, err, runtime)
	}
}

// handleException is Worker::handleJobException: fail the job when this was its last
// try or its maxExceptions is reached, else release it with its backoff.
func (c *Worker) handleException(r *run, jr *jobRun, err error, runtime time.Duration) {
	c.log.Warn("job failed with an error", "job", jr.job.Name, "id", jr.job.ID, "attempt", jr.job.Attempt, "err", err)
	if !jr.failed {
		if c.willExceed(jr) {
			c.fail(r, jr, err, runtime)
		}
		c.countException(r, jr, err, runtime)
	}
	c.emit(Event{Kind: EventException, Queue: jr.queue, Job: jr.job, Err: err, Runtime: runtime})
	if !jr.deleted && !jr.released && !jr.failed {
		c.release(r, jr, c.backoff(jr), true, runtime)
	}
}

// timedOut applies what PHP's SIGALRM handler does, then leaves the job reserved
// (or releases it with TimeoutReleases).
func (c *Worker) timedOut(r *run, jr *jobRun, timeout, runtime time.Duration) {
	e := c.timeoutError(jr)
	c.emit(Event{Kind: EventTimedOut, Queue: jr.queue, Job: jr.job, Runtime: runtime,
		Err: fmt.Errorf("%s timed out after %s", jr.job.Name, timeout)})
	if c.willExceed(jr) {
		c.fail(r, jr, e, runtime)
	}
	if c.s.release.AtLeast(8, 0, 0) { // 7.x counts only thrown exceptions towards maxExceptions
		c.countException(r, jr, e, runtime)
	}
	if jr.job.Payload.FailOnTimeout {
		c.fail(r, jr, e, runtime)
	}
	switch {
	case jr.failed:
	case c.s.TimeoutReleases:
		c.release(r, jr, c.backoff(jr), true, runtime)
	default:
		c.log.Warn("job timed out; it stays reserved until retry_after, as with PHP",
			"job", jr.job.Name, "id", jr.job.ID, "timeout", timeout, "retry_after", c.conn.retryAfter())
	}
}

// unhandled applies the Unhandled policy.
func (c *Worker) unhandled(r *run, jr *jobRun) {
	class := jr.job.Class
	switch c.s.Unhandled.Action {
	case ReleaseUnhandled:
		c.log.Warn("no handler for job; released", "class", class, "id", jr.job.ID, "delay", c.s.unhandledDelay)
		c.release(r, jr, c.s.unhandledDelay, false, 0)
	case HandBackUnhandled:
		var back bool
		_, err := c.retry(r, jr, "handing a job back", func(ctx context.Context) (err error) {
			back, err = c.rdb.Unreserve(ctx, jr.queue, jr.popped.Job, jr.popped.Reserved)
			return err
		})
		if err != nil {
			c.log.Error("handing a job back failed; it stays reserved until retry_after", "class", class, "id", jr.job.ID, "err", err)
			return
		}
		if !back {
			c.log.Warn("reservation was gone when handing a job back", "class", class, "id", jr.job.ID)
		}
		c.horizonHandedBack(r, jr, back)
		r.mu.Lock()
		r.handBackTill[jr.queue] = time.Now().Add(c.s.unhandledDelay)
		r.mu.Unlock()
		c.log.Info("no handler for job; handed back to the queue", "class", class, "id", jr.job.ID,
			"queue", jr.queue, "queue_left_alone_for", c.s.unhandledDelay)
		c.emit(Event{Kind: EventHandedBack, Queue: jr.queue, Job: jr.job, Delay: c.s.unhandledDelay})
	default:
		c.emit(Event{Kind: EventProcessing, Queue: jr.queue, Job: jr.job})
		c.fail(r, jr, &UnhandledError{Class: class}, 0)
	}
}

// deleteReserved removes the job's exact reserved copy (RedisQueue::deleteReserved).
func (c *Worker) deleteReserved(r *run, jr *jobRun) {
	jr.deleted = true
	var deleted bool
	lost, err := c.retry(r, jr, "deleting a finished job", func(ctx context.Context) (err error) {
		deleted, err = c.acks.delete(ctx, jr.queue, jr.popped.Reserved, jr.hz)
		return err
	})
	switch {
	case err != nil:
		c.log.Error("deleting a finished job failed; it will run again after retry_after",
			"queue", jr.queue, "id", c.jobID(jr), "err", err)
	case !deleted:
		c.reservationGone(jr, lost, "deleting a finished job",
			"job was no longer reserved when it finished (it ran longer than retry_after); another worker may run it again")
	}
}

// reservationGone reports an acknowledgement that found the reservation gone, and
// whether an earlier copy of the same call did the work. Before the reservation's
// expiry no worker migrates it back, so what removed it is a copy of this call whose
// reply was lost: an earlier attempt (lost reports one) or a copy go-redis re-sent on
// another connection after a timeout, which the caller never sees. Only past the
// expiry may the job have been moved back to run again.
func (c *Worker) reservationGone(jr *jobRun, lost bool, what, warning string) (doneEarlier bool) {
	switch {
	case time.Now().Before(jr.expiry()):
		c.log.Debug(what+": an earlier copy of the call, whose reply was lost, had done it", "queue", jr.queue, "id", c.jobID(jr))
		return true
	case lost:
		c.log.Warn(what+": the reservation is gone, either removed by an earlier attempt whose reply was lost or expired and moved back to the queue (then the job runs again)",
			"queue", jr.queue, "id", c.jobID(jr), "retry_after", c.conn.retryAfter())
	default:
		c.log.Warn(warning, "queue", jr.queue, "id", c.jobID(jr), "retry_after", c.conn.retryAfter())
	}
	return false
}

// release moves the reserved copy to the delayed set, available after delay.
// afterException says the attempt threw or timed out (it ran for runtime), as opposed
// to a release the handler asked for, of a job without handler, or at a hard stop.
func (c *Worker) release(r *run, jr *jobRun, delay time.Duration, afterException bool, runtime time.Duration) {
	jr.released = true
	availableAt := c.s.Now().Unix() + ceilSeconds(delay)
	var released bool
	lost, err := c.retry(r, jr, "releasing a job", func(ctx context.Context) (err error) {
		released, err = c.rdb.Release(ctx, jr.queue, jr.popped.Reserved, availableAt)
		return err
	})
	switch {
	case err != nil:
		c.log.Error("releasing a job failed; it will run again after retry_after", "queue", jr.queue, "id", c.jobID(jr), "err", err)
		return
	case !released:
		if !c.reservationGone(jr, lost, "releasing a job",
			"job was no longer reserved when released (it ran longer than retry_after); it is already back in the queue") {
			return
		}
	}
	c.horizonReleased(r, jr)
	c.emit(Event{Kind: EventReleased, Queue: jr.queue, Job: jr.job, Delay: time.Duration(ceilSeconds(delay)) * time.Second,
		AfterException: afterException, Runtime: runtime})
}

// fail is Job::fail: record the payload as popped in the failed store, then delete the
// reserved copy, then emit EventFailed. A job is failed once; a deleted job is not
// recorded (as in PHP).
//
// PHP deletes first and logs the failed row after; a row that cannot be written then
// loses the job. Here the reserved copy stays, and its reservation is held (see hold),
// until the row is written: while the database is down the job stays in Redis. When
// the worker must stop first, the job is left reserved and comes back after
// retry_after, to be failed again by the next worker.
func (c *Worker) fail(r *run, jr *jobRun, cause error, runtime time.Duration) {
	if jr.failed {
		return
	}
	jr.failed = true
	if jr.deleted {
		return
	}
	text := exceptionText(cause)
	c.horizonFailing(jr, text)
	err := c.hold(r, jr, func() error {
		first := true
		_, err := c.retry(r, jr, "writing a failed job", func(ctx context.Context) error {
			// An attempt that failed may have written the row all the same (the database
			// went away after the insert, before its answer): then it is not written twice.
			if !first && c.failedRowWritten(ctx, jr) {
				return nil
			}
			first = false
			_, err := c.s.failed.Log(ctx, c.s.connection, jr.queue, jr.popped.Job, text)
			return err
		})
		return err
	})
	var de *DecodeError
	switch {
	case err != nil:
		c.log.Error("writing a failed job failed; the job stays reserved and comes back after retry_after",
			"queue", jr.queue, "id", c.jobID(jr), "err", err,
			"payload_base64", base64.StdEncoding.EncodeToString(jr.popped.Job), "exception", text)
		return
	case c.s.nullStore && (jr.job == nil || errors.As(cause, &de)):
		// A job this worker could not read, and no store keeps failures: log its bytes.
		c.log.Error("job failed and no failed-job store is configured; the job is only in this log now",
			"queue", jr.queue, "id", c.jobID(jr), "err", cause,
			"payload_base64", base64.StdEncoding.EncodeToString(jr.popped.Job))
	default:
		c.log.Warn("job failed", "queue", jr.queue, "id", c.jobID(jr), "err", cause)
	}
	c.deleteReserved(r, jr)
	c.jobFailed(r, jr, cause) // CallQueuedHandler::failed(): unique lock, batch
	e := Event{Kind: EventFailed, Queue: jr.queue, Job: jr.job, Err: cause, Runtime: runtime}
	if jr.job == nil {
		e.Payload = jr.popped.Job
	}
	c.emit(e)
}

// failedRowWritten reports whether the failed store holds the row of this attempt: the
// job's uuid, on its queue, with the very bytes popped. A store without uuids (the legacy
// database driver) cannot tell, nor can a job without one: false.
func (c *Worker) failedRowWritten(ctx context.Context, jr *jobRun) bool {
	if jr.job == nil || jr.job.UUID == "" {
		return false
	}
	row, err := c.s.failed.Find(ctx, jr.job.UUID)
	return err == nil && row != nil && row.UUID == jr.job.UUID && row.Queue == jr.queue &&
		bytes.Equal(row.Payload, jr.popped.Job)
}

func (c *Worker) jobID(jr *jobRun) string {
	if jr.job != nil {
		return jr.job.ID
	}
	return ""
}

// retryDelay is the wait before retry n (1-based) of a failing Redis or database call.
func retryDelay(n int) time.Duration {
	d := retryMin
	for i := 1; i < n && d < retryMax; i++ {
		d *= 2
	}
	return min(d, retryMax)
}

// retry runs op, one step of handling job jr, until it succeeds, the worker's
// acknowledgement context ends (at the end of the shutdown grace), or jr's reservation
// has expired (then no step of it is worth doing: another worker may have the job), or
// Redis refuses the credentials (nothing changes that but an operator). It backs off
// between attempts and logs each failure. lost reports that an attempt failed: it may
// have run on the server without its reply arriving.
func (c *Worker) retry(r *run, jr *jobRun, what string, op func(context.Context) error) (lost bool, err error) {
	return c.retryCtx(r.ackCtx, jr, what, op)
}

// retryCtx is retry under ctx instead of the run's acknowledgement context.
func (c *Worker) retryCtx(ctx context.Context, jr *jobRun, what string, op func(context.Context) error) (lost bool, err error) {
	for n := 1; ; n++ {
		if err = op(ctx); err == nil {
			return lost, nil
		}
		lost = true
		// As the expiry nears the attempts come closer together, so that one lands
		// soon after Redis answers again, before another worker may take the job.
		d := min(retryDelay(n), max(time.Until(jr.expiry())/4, retryMin))
		if ctx.Err() != nil || isAuthError(err) || !time.Now().Add(d).Before(jr.expiry().Add(retryMax)) {
			return lost, err
		}
		c.log.Warn(what+" failed; retrying", "err", err, "retry_in", d, "attempt", n)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return lost, err
		case <-t.C:
		}
	}
}

// emit hands an event to WorkerConfig.OnEvent.
func (c *Worker) emit(e Event) {
	if c.s.OnEvent == nil {
		return
	}
	if e.Time.IsZero() {
		e.Time = c.s.Now()
	}
	if e.Connection == "" {
		e.Connection = c.s.connection
	}
	c.s.OnEvent(e)
}
