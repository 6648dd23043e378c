package consumer

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/handlers"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/payload"
)

// jobRun is one job being worked, with the flags PHP's Job object keeps so that a job
// is deleted, released or failed at most once.
type jobRun struct {
	queue    string
	popped   rdb.PoppedJob
	job      *handlers.Job // nil when the payload could not be parsed
	deleted  bool
	released bool
	failed   bool
}

// work runs one popped job and then frees its slot, unless a handler that outlived its
// context was taken over (see runHandler): the takeover frees the slot then.
func (c *Consumer) work(r *run, queue string, p rdb.PoppedJob) {
	if c.process(r, &jobRun{queue: queue, popped: p}) {
		return
	}
	c.finish(r)
}

// finish frees a job's slot (after Rest) and marks the job done for Run.
func (c *Consumer) finish(r *run) {
	if c.s.Rest > 0 {
		c.sleep(r.ctx, c.s.Rest)
	}
	r.slots <- struct{}{}
	r.wg.Done()
}

// process follows Worker::process for one job. It reports whether the job was taken
// over by runHandler's watchdog.
func (c *Consumer) process(r *run, jr *jobRun) (takenOver bool) {
	p := jr.popped
	if p.Invalid != nil {
		c.log.Error("payload cannot be reserved; moved to the invalid list (a PHP worker would have lost it)",
			"queue", jr.queue, "key", p.Invalid.Key, "reason", p.Invalid.Reason)
		c.emit(Event{Kind: EventInvalid, Queue: jr.queue, Err: p.Invalid, Payload: p.Job})
		return false
	}
	env, err := payload.Parse(p.Job)
	if err == nil {
		err = env.Runnable()
	}
	if err != nil {
		// Nothing to run and nothing a retry could change: keep it as a failed job.
		c.fail(r, jr, fmt.Errorf("unreadable job payload: %w", err), 0)
		return false
	}
	class := handlers.ClassOf(env)
	jr.job = &handlers.Job{
		ID:         env.ID,
		UUID:       env.UUID,
		Attempt:    int(env.Attempts) + 1,
		Queue:      jr.queue,
		Connection: c.s.Connection,
		Name:       env.Name(),
		Class:      class,
		Envelope:   env,
		Raw:        p.Job,
		Reserved:   p.Reserved,
	}
	h, _, ok := c.s.Registry.Lookup(class)
	if !ok {
		c.unhandled(r, jr)
		return false
	}

	c.emit(Event{Kind: EventProcessing, Queue: jr.queue, Job: jr.job})
	if e := c.alreadyExceeded(jr); e != nil {
		// Usually a job that timed out before (its attempt was counted but it never
		// finished): PHP fails it before running it again.
		c.fail(r, jr, e, 0)
		c.emit(Event{Kind: EventException, Queue: jr.queue, Job: jr.job, Err: e})
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
func (c *Consumer) runHandler(r *run, jr *jobRun, h handlers.Handler) (takenOver bool) {
	timeout := c.s.Timeout
	if t := jr.job.Envelope.Timeout; t != nil {
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
	err := handlers.Call(hctx, h, jr.job)
	stopWatch()
	if !state.CompareAndSwap(running, returned) {
		c.abandoned.Add(-1)
		c.log.Warn("abandoned handler returned", "job", jr.job.Name, "id", jr.job.ID, "err", err)
		return true
	}
	runtime := time.Since(start)
	timedOut := errors.Is(hctx.Err(), context.DeadlineExceeded)
	stopping := r.hardCtx.Err() != nil

	outcome, delay := handlers.OutcomeOf(err)
	switch {
	case timedOut && outcome == handlers.OutcomeRetry:
		c.timedOut(r, jr, timeout, runtime)
		return false
	case stopping && outcome == handlers.OutcomeRetry:
		// Interrupted by the hard stop rather than failed: make it available again at once.
		c.log.Info("job interrupted by shutdown; released", "job", jr.job.Name, "id", jr.job.ID, "err", err)
		c.release(r, jr, 0, false, 0)
		return false
	}

	switch outcome {
	case handlers.OutcomeDone:
		// CallQueuedHandler dispatches the next job of the chain, then deletes this one.
		if err := c.continueChain(r, jr); err != nil {
			c.handleException(r, jr, err, runtime)
			return false
		}
		c.deleteReserved(r, jr)
		c.emit(Event{Kind: EventProcessed, Queue: jr.queue, Job: jr.job, Runtime: runtime})
	case handlers.OutcomeDelete:
		// $this->delete() removed the job during handle(); CallQueuedHandler checks only
		// "failed" and "released" before continuing the chain, so a deleted job continues it.
		c.deleteReserved(r, jr)
		if err := c.continueChain(r, jr); err != nil {
			c.handleException(r, jr, err, runtime)
			return false
		}
		c.emit(Event{Kind: EventProcessed, Queue: jr.queue, Job: jr.job, Runtime: runtime})
	case handlers.OutcomeRelease:
		c.release(r, jr, delay, false, 0)
		c.emit(Event{Kind: EventProcessed, Queue: jr.queue, Job: jr.job, Runtime: runtime})
	case handlers.OutcomeFail:
		c.fail(r, jr, err, runtime)
		var de *handlers.DecodeError
		if !errors.As(err, &de) {
			// $this->fail() inside handle() returns normally, so PHP's worker fires
			// JobProcessed after JobFailed. A command PHP cannot unserialize throws instead.
			c.emit(Event{Kind: EventProcessed, Queue: jr.queue, Job: jr.job, Runtime: runtime})
		}
	default:
		c.handleException(r, jr, err, runtime)
	}
	return false
}

// handleException is Worker::handleJobException: fail the job when this was its last
// try or its maxExceptions is reached, else release it with its backoff.
func (c *Consumer) handleException(r *run, jr *jobRun, err error, runtime time.Duration) {
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
func (c *Consumer) timedOut(r *run, jr *jobRun, timeout, runtime time.Duration) {
	e := c.timeoutError(jr)
	c.emit(Event{Kind: EventTimedOut, Queue: jr.queue, Job: jr.job, Runtime: runtime,
		Err: fmt.Errorf("%s timed out after %s", jr.job.Name, timeout)})
	if c.willExceed(jr) {
		c.fail(r, jr, e, runtime)
	}
	c.countException(r, jr, e, runtime)
	if jr.job.Envelope.FailOnTimeout {
		c.fail(r, jr, e, runtime)
	}
	switch {
	case jr.failed:
	case c.s.TimeoutReleases:
		c.release(r, jr, c.backoff(jr), true, runtime)
	default:
		c.log.Warn("job timed out; it stays reserved until retry_after, as with PHP",
			"job", jr.job.Name, "id", jr.job.ID, "timeout", timeout, "retry_after", c.s.RetryAfter)
	}
}

// unhandled applies the Unhandled policy.
func (c *Consumer) unhandled(r *run, jr *jobRun) {
	class := jr.job.Class
	switch c.s.Unhandled.Action {
	case ReleaseUnhandled:
		c.log.Warn("no handler for job; released", "class", class, "id", jr.job.ID, "delay", c.s.unhandledDelay)
		c.release(r, jr, c.s.unhandledDelay, false, 0)
	case HandBackUnhandled:
		var back bool
		err := c.retry(r.ackCtx, "handing a job back", func(ctx context.Context) (err error) {
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
		r.mu.Lock()
		r.handBackTill[jr.queue] = time.Now().Add(c.s.unhandledDelay)
		r.mu.Unlock()
		c.log.Info("no handler for job; handed back to the queue", "class", class, "id", jr.job.ID,
			"queue", jr.queue, "queue_left_alone_for", c.s.unhandledDelay)
		c.emit(Event{Kind: EventHandedBack, Queue: jr.queue, Job: jr.job, Delay: c.s.unhandledDelay})
	default:
		c.emit(Event{Kind: EventProcessing, Queue: jr.queue, Job: jr.job})
		c.fail(r, jr, &handlers.UnhandledError{Class: class}, 0)
	}
}

func (c *Consumer) maxTries(jr *jobRun) int64 {
	if t := jr.job.Envelope.MaxTries; t != nil {
		return *t
	}
	return int64(c.s.tries)
}

// retryUntil is the payload's retryUntil, 0 when unset (PHP tests it for truthiness).
func retryUntil(env *payload.Envelope) int64 {
	if env.RetryUntil != nil {
		return *env.RetryUntil
	}
	return 0
}

// alreadyExceeded is markJobAsFailedIfAlreadyExceedsMaxAttempts: nil when the job may
// run, else the exception to fail it with.
func (c *Consumer) alreadyExceeded(jr *jobRun) error {
	until := retryUntil(jr.job.Envelope)
	maxTries := c.maxTries(jr)
	if until != 0 && c.s.Now().Unix() <= until {
		return nil
	}
	if until == 0 && (c.unlimitedTries(jr) || int64(jr.job.Attempt) <= maxTries) {
		return nil
	}
	return c.maxAttemptsError(jr)
}

// unlimitedTries is PHP's `$maxTries === 0`: strict, so a payload maxTries written as
// "0" or 0.0 is not "unlimited" (and, being no more than 0, fails the job before it runs).
func (c *Consumer) unlimitedTries(jr *jobRun) bool {
	env := jr.job.Envelope
	if env.MaxTries == nil {
		return c.s.tries == 0
	}
	if *env.MaxTries != 0 {
		return false
	}
	raw, _ := env.Get("maxTries")
	return isIntLiteral(raw)
}

// isIntLiteral reports whether a JSON value is an integer literal, which json_decode
// turns into a PHP int.
func isIntLiteral(raw []byte) bool {
	s := strings.TrimSpace(string(raw))
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// willExceed is markJobAsFailedIfWillExceedMaxAttempts' condition (note >=).
func (c *Consumer) willExceed(jr *jobRun) bool {
	until := retryUntil(jr.job.Envelope)
	if until != 0 {
		return until <= c.s.Now().Unix()
	}
	maxTries := c.maxTries(jr)
	return maxTries > 0 && int64(jr.job.Attempt) >= maxTries
}

// TimeoutExceededClass is the exception Laravel 10.10+ fails timed-out jobs with (a
// subclass of MaxAttemptsExceededException); earlier releases use
// MaxAttemptsExceededException for timeouts too.
const TimeoutExceededClass = `Illuminate\Queue\TimeoutExceededException`

// laravelAtLeast reports whether the configured release is major.minor or later.
func (c *Consumer) laravelAtLeast(major, minor int) bool {
	l := c.s.Laravel
	return l.Major > major || l.Major == major && l.Minor >= minor
}

// maxAttemptsError is Worker::maxAttemptsExceededException in the configured release.
func (c *Consumer) maxAttemptsError(jr *jobRun) error {
	msg := failed.MaxAttemptsExceededMessage(jr.job.Name)
	if c.laravelAtLeast(10, 10) {
		msg = jr.job.Name + " has been attempted too many times."
	}
	return failed.New(failed.MaxAttemptsExceededClass, msg, 1)
}

// timeoutError is the exception PHP's timeout handler uses: the max-attempts one up to
// Laravel 10.9, TimeoutExceededException ("<Name> has timed out.") from 10.10.
func (c *Consumer) timeoutError(jr *jobRun) error {
	if c.laravelAtLeast(10, 10) {
		return failed.New(TimeoutExceededClass, jr.job.Name+" has timed out.", 1)
	}
	return c.maxAttemptsError(jr)
}

// countException is markJobAsFailedIfWillExceedMaxExceptions, on the counter PHP
// workers share (job-exceptions:<uuid> in the cache).
func (c *Consumer) countException(r *run, jr *jobRun, cause error, runtime time.Duration) {
	env := jr.job.Envelope
	if c.s.Cache.Disabled || !hasUUID(env) || env.MaxExceptions == nil {
		return
	}
	var exceeded bool
	err := c.retry(r.ackCtx, "counting a job exception", func(ctx context.Context) (err error) {
		_, exceeded, err = c.rdb.Cache().CountJobException(ctx, env.UUID, *env.MaxExceptions)
		return err
	})
	if err != nil {
		c.log.Error("counting a job exception failed", "job", jr.job.Name, "id", jr.job.ID, "err", err)
		return
	}
	if exceeded {
		c.fail(r, jr, cause, runtime)
	}
}

// hasUUID is PHP's `! is_null($job->uuid())`: an empty string counts as a uuid.
func hasUUID(env *payload.Envelope) bool {
	if env.UUID != "" {
		return true
	}
	raw, ok := env.Get("uuid")
	return ok && len(raw) > 0 && raw[0] == '"'
}

// backoff is calculateBackoff: the payload's backoff (or delay), else the worker's,
// split on commas, element attempt-1 or the last one, read as PHP's (int) cast does.
func (c *Consumer) backoff(jr *jobRun) time.Duration {
	spec := jr.job.Envelope.BackoffSpec()
	if spec == "" {
		spec = c.s.backoffSpec
	}
	parts := strings.Split(spec, ",")
	i := jr.job.Attempt - 1
	if i < 0 || i >= len(parts) {
		i = len(parts) - 1
	}
	return time.Duration(phpIntval(parts[i])) * time.Second
}

// phpIntval reads a string as PHP's (int) cast: leading whitespace, an optional sign
// and the leading digits; anything else gives 0. Negative values count as 0 seconds.
func phpIntval(s string) int64 {
	s = strings.TrimLeft(s, " \t\n\r\v\f")
	neg := false
	if s != "" && (s[0] == '+' || s[0] == '-') {
		neg = s[0] == '-'
		s = s[1:]
	}
	var n int64
	for i := 0; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if n > (1<<62)/10 {
			break
		}
		n = n*10 + int64(s[i]-'0')
	}
	if neg {
		return 0
	}
	return n
}

// deleteReserved removes the job's exact reserved copy (RedisQueue::deleteReserved).
func (c *Consumer) deleteReserved(r *run, jr *jobRun) {
	jr.deleted = true
	var deleted bool
	err := c.retry(r.ackCtx, "deleting a finished job", func(ctx context.Context) (err error) {
		deleted, err = c.acks.delete(ctx, jr.queue, jr.popped.Reserved)
		return err
	})
	switch {
	case err != nil:
		c.log.Error("deleting a finished job failed; it will run again after retry_after",
			"queue", jr.queue, "id", c.jobID(jr), "err", err)
	case !deleted:
		c.log.Warn("job was no longer reserved when it finished (it ran longer than retry_after); another worker may run it again",
			"queue", jr.queue, "id", c.jobID(jr), "retry_after", c.s.RetryAfter)
	}
}

// release moves the reserved copy to the delayed set, available after delay.
// afterException says the attempt threw or timed out (it ran for runtime), as opposed
// to a release the handler asked for, of a job without handler, or at a hard stop.
func (c *Consumer) release(r *run, jr *jobRun, delay time.Duration, afterException bool, runtime time.Duration) {
	jr.released = true
	availableAt := c.s.Now().Unix() + ceilSeconds(delay)
	var released bool
	err := c.retry(r.ackCtx, "releasing a job", func(ctx context.Context) (err error) {
		released, err = c.rdb.Release(ctx, jr.queue, jr.popped.Reserved, availableAt)
		return err
	})
	switch {
	case err != nil:
		c.log.Error("releasing a job failed; it will run again after retry_after", "queue", jr.queue, "id", c.jobID(jr), "err", err)
		return
	case !released:
		c.log.Warn("job was no longer reserved when released (it ran longer than retry_after); it is already back in the queue",
			"queue", jr.queue, "id", c.jobID(jr))
		return
	}
	c.emit(Event{Kind: EventReleased, Queue: jr.queue, Job: jr.job, Delay: time.Duration(ceilSeconds(delay)) * time.Second,
		AfterException: afterException, Runtime: runtime})
}

// fail is Job::fail: delete the reserved copy, then record the payload as popped in the
// failed store, then emit EventFailed. A job is failed once; a deleted job is not
// recorded (as in PHP).
func (c *Consumer) fail(r *run, jr *jobRun, cause error, runtime time.Duration) {
	if jr.failed {
		return
	}
	jr.failed = true
	if jr.deleted {
		return
	}
	c.deleteReserved(r, jr)
	text := exceptionText(cause)
	err := c.retry(r.ackCtx, "writing a failed job", func(ctx context.Context) error {
		_, err := c.s.Failed.Log(ctx, c.s.Connection, jr.queue, jr.popped.Job, text)
		return err
	})
	var de *handlers.DecodeError
	switch {
	case err != nil:
		// The reserved copy is gone; the log is the last place this job exists.
		c.log.Error("writing a failed job failed; the job is only in this log now",
			"queue", jr.queue, "id", c.jobID(jr), "err", err,
			"payload_base64", base64.StdEncoding.EncodeToString(jr.popped.Job), "exception", text)
	case c.nullStore && (jr.job == nil || errors.As(cause, &de)):
		// A job this worker could not read, and no store keeps failures: log its bytes.
		c.log.Error("job failed and no failed-job store is configured; the job is only in this log now",
			"queue", jr.queue, "id", c.jobID(jr), "err", cause,
			"payload_base64", base64.StdEncoding.EncodeToString(jr.popped.Job))
	default:
		c.log.Warn("job failed", "queue", jr.queue, "id", c.jobID(jr), "err", cause)
	}
	e := Event{Kind: EventFailed, Queue: jr.queue, Job: jr.job, Err: cause, Runtime: runtime}
	if jr.job == nil {
		e.Payload = jr.popped.Job
	}
	c.emit(e)
}

func (c *Consumer) jobID(jr *jobRun) string {
	if jr.job != nil {
		return jr.job.ID
	}
	return ""
}

// exceptionText renders a failure in PHP's Throwable string form for failed_jobs.
func exceptionText(err error) string {
	var fe *handlers.FailError
	if errors.As(err, &fe) {
		if fe.Err == nil {
			return failed.New(failed.ManuallyFailedClass, "", 1).String()
		}
		err = fe.Err
	}
	var pe *handlers.PanicError
	if errors.As(err, &pe) && pe.Exception != nil {
		return pe.Exception.String()
	}
	var ex *failed.Exception
	if errors.As(err, &ex) && error(ex) == err {
		return ex.String()
	}
	return failed.Capture(err, 1).String()
}
