package worker

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
)

// The settle stage: what becomes of a job once its fate is known (the handler returned,
// it timed out, it has no handler, it failed before, a later dispatch superseded it).
// It acknowledges, releases or fails the job as Laravel's Worker and CallQueuedHandler
// do, and calls the features' hooks at the points PHP does: the unique lock, the next
// job of a chain, the batch. Nothing here calls back into the stages before it.

// settler applies a job's outcome.
type settler struct {
	base
	rules   rules
	acks    *acks
	books   *bookkeeping
	holder  *holder
	uniques *uniques
	chains  *chains
	batches *batches
	models  *models
}

// applyOutcome does what the handler's return value asks (see Outcome), as
// CallQueuedHandler and Worker::process do: acknowledge, release or fail, then the event.
func (s *settler) applyOutcome(r *run, a *attempt, err error, runtime, timeout time.Duration, timedOut bool) {
	outcome, delay := job.OutcomeOf(err)
	if by, d := job.DecisionOf(err); by != "" {
		s.decided(a, by, d, delay)
	}
	switch {
	case timedOut && outcome == job.OutcomeRetry:
		s.timedOut(r, a, timeout, runtime)
		return
	case r.hardCtx.Err() != nil && outcome == job.OutcomeRetry:
		// Interrupted by the hard stop rather than failed: make it available again at once.
		s.log.Info("job interrupted by shutdown; released", "job", a.job.Name, "id", a.job.ID, "err", err)
		s.release(r, a, 0, false, 0)
		return
	}

	switch outcome {
	case job.OutcomeDone:
		// CallQueuedHandler releases the unique lock, dispatches the next job of the
		// chain, records the batch's success, then deletes this one.
		s.uniques.afterRun(r.ackCtx, a, "after processing")
		if err := s.chains.continueChain(r.ackCtx, a); err != nil {
			s.handleException(r, a, err, runtime)
			return
		}
		s.batches.succeeded(r.ackCtx, a)
		// The deletion is the job's last step in Redis: its slot may be freed as soon
		// as the deletion is queued (acks.riding).
		a.ack.slots = r.slots
		s.deleteReserved(r, a)
		s.emit(job.Event{Kind: job.EventProcessed, Queue: a.queue, Job: a.job, Runtime: runtime})
	case job.OutcomeDelete:
		// $this->delete() removed the job during handle(); CallQueuedHandler checks only
		// "failed" and "released" before continuing the chain, so a deleted job continues it.
		s.deleteReserved(r, a)
		s.uniques.afterRun(r.ackCtx, a, "after processing")
		if err := s.chains.continueChain(r.ackCtx, a); err != nil {
			s.handleException(r, a, err, runtime)
			return
		}
		s.batches.succeeded(r.ackCtx, a)
		s.emit(job.Event{Kind: job.EventProcessed, Queue: a.queue, Job: a.job, Runtime: runtime})
	case job.OutcomeRelease:
		s.release(r, a, delay, false, 0)
		s.emit(job.Event{Kind: job.EventProcessed, Queue: a.queue, Job: a.job, Runtime: runtime})
	case job.OutcomeMissingModel:
		s.missingModel(r, a, err, runtime)
	case job.OutcomeFail:
		s.fail(r, a, err, runtime)
		var de *job.DecodeError
		var md *job.MiddlewareDecision
		switch {
		case errors.As(err, &md) && md.Rethrown:
			// FailOnException fails the job, then rethrows: Worker::handleJobException
			// sees a failed job, so it only fires JobExceptionOccurred.
			s.emit(job.Event{Kind: job.EventException, Queue: a.queue, Job: a.job, Err: err, Runtime: runtime})
		case !errors.As(err, &de):
			// $this->fail() inside handle() returns normally, so PHP's worker fires
			// JobProcessed after JobFailed. A command PHP cannot unserialize throws instead.
			s.emit(job.Event{Kind: job.EventProcessed, Queue: a.queue, Job: a.job, Runtime: runtime})
		}
	default:
		s.handleException(r, a, err, runtime)
	}
}

// decided records the middleware that decided the attempt's outcome, for its events. Its
// own function: the log call's arguments stay out of applyOutcome's frame, which every
// job's stack holds.
func (s *settler) decided(a *attempt, by string, d job.Decision, delay time.Duration) {
	job.Decide(a.job, by, d)
	s.log.Debug("job middleware decided", "middleware", by, "decision", d, "job", a.job.Name, "id", a.job.ID, "delay", delay)
}

// middlewareDecided says a middleware decided the attempt's outcome.
func middlewareDecided(a *attempt) bool {
	by, _ := job.Decided(a.job)
	return by != ""
}

// failedByMiddleware logs a failure a middleware decided.
func (s *settler) failedByMiddleware(a *attempt, cause error) {
	by, _ := job.Decided(a.job)
	s.log.Warn("job failed by middleware", "queue", a.queue, "id", a.id(), "middleware", by, "err", cause)
}

// handleException is Worker::handleJobException: fail the job when this was its last
// try or its maxExceptions is reached, else release it with its backoff.
func (s *settler) handleException(r *run, a *attempt, err error, runtime time.Duration) {
	s.log.Warn("job failed with an error", "job", a.job.Name, "id", a.job.ID, "attempt", a.job.Attempt, "err", err)
	if !a.failed {
		if s.rules.willExceed(a) {
			s.fail(r, a, err, runtime)
		}
		s.countException(r, a, err, runtime)
	}
	s.emit(job.Event{Kind: job.EventException, Queue: a.queue, Job: a.job, Err: err, Runtime: runtime})
	if !a.deleted && !a.released && !a.failed {
		s.release(r, a, s.rules.backoff(a), true, runtime)
	}
}

// timedOut applies what PHP's SIGALRM handler does, then leaves the job reserved
// (or releases it with TimeoutReleases).
func (s *settler) timedOut(r *run, a *attempt, timeout, runtime time.Duration) {
	e := s.rules.timeoutError(a)
	s.emit(job.Event{Kind: job.EventTimedOut, Queue: a.queue, Job: a.job, Runtime: runtime,
		Err: fmt.Errorf("%s timed out after %s", a.job.Name, timeout)})
	if s.rules.willExceed(a) {
		s.fail(r, a, e, runtime)
	}
	if s.cfg.Release.AtLeast(8, 0, 0) { // 7.x counts only thrown exceptions towards maxExceptions
		s.countException(r, a, e, runtime)
	}
	if a.job.Payload.FailOnTimeout {
		s.fail(r, a, e, runtime)
	}
	switch {
	case a.failed:
	case s.cfg.TimeoutReleases:
		s.release(r, a, s.rules.backoff(a), true, runtime)
	default:
		s.log.Warn("job timed out; it stays reserved until retry_after, as with PHP",
			"job", a.job.Name, "id", a.job.ID, "timeout", timeout, "retry_after", s.reservation())
	}
}

// unhandled applies the Unhandled policy.
func (s *settler) unhandled(r *run, a *attempt) {
	class := a.job.Class
	switch s.cfg.Unhandled {
	case ReleaseUnhandled:
		s.log.Warn("no handler for job; released", "class", class, "id", a.job.ID, "delay", s.cfg.UnhandledDelay)
		s.release(r, a, s.cfg.UnhandledDelay, false, 0)
	case HandBackUnhandled:
		var back bool
		_, err := s.retry(r.ackCtx, a, "handing a job back", func(ctx context.Context) (err error) {
			back, err = s.cfg.RDB.Unreserve(ctx, a.queue, a.popped.Job, a.popped.Reserved)
			return err
		})
		if err != nil {
			s.log.Error("handing a job back failed; it stays reserved until retry_after", "class", class, "id", a.job.ID, "err", err)
			return
		}
		if !back {
			s.log.Warn("reservation was gone when handing a job back", "class", class, "id", a.job.ID)
		}
		s.books.jobHandedBack(r.ackCtx, a, back)
		r.leaveAlone(a.queue, time.Now().Add(s.cfg.UnhandledDelay))
		s.log.Info("no handler for job; handed back to the queue", "class", class, "id", a.job.ID,
			"queue", a.queue, "queue_left_alone_for", s.cfg.UnhandledDelay)
		s.emit(job.Event{Kind: job.EventHandedBack, Queue: a.queue, Job: a.job, Delay: s.cfg.UnhandledDelay})
	default:
		s.emit(job.Event{Kind: job.EventProcessing, Queue: a.queue, Job: a.job})
		s.fail(r, a, &job.UnhandledError{Class: class}, 0)
	}
}

// deleteReserved removes the job's exact reserved copy (RedisQueue::deleteReserved).
func (s *settler) deleteReserved(r *run, a *attempt) {
	a.deleted = true
	var deleted bool
	lost, err := s.retry(r.ackCtx, a, "deleting a finished job", func(ctx context.Context) (err error) {
		a.ack.job = rdb.Finished{Queue: a.queue, Reserved: a.popped.Reserved}
		a.ack.hz = a.hz
		deleted, err = s.acks.delete(ctx, &a.ack)
		return err
	})
	switch {
	case err != nil:
		s.log.Error("deleting a finished job failed; it will run again after retry_after",
			"queue", a.queue, "id", a.id(), "err", err)
	case !deleted:
		s.reservationGone(a, lost, "deleting a finished job",
			"job was no longer reserved when it finished (it ran longer than retry_after); another worker may run it again")
	}
}

// reservationGone reports an acknowledgement that found the reservation gone, and
// whether an earlier copy of the same call did the work. Before the reservation's
// expiry no worker migrates it back, so what removed it is a copy of this call whose
// reply was lost: an earlier attempt (lost reports one) or a copy go-redis re-sent on
// another connection after a timeout, which the caller never sees. Only past the
// expiry may the job have been moved back to run again.
func (s *settler) reservationGone(a *attempt, lost bool, what, warning string) (doneEarlier bool) {
	switch {
	case time.Now().Before(a.expiry()):
		s.log.Debug(what+": an earlier copy of the call, whose reply was lost, had done it", "queue", a.queue, "id", a.id())
		return true
	case lost:
		s.log.Warn(what+": the reservation is gone, either removed by an earlier attempt whose reply was lost or expired and moved back to the queue (then the job runs again)",
			"queue", a.queue, "id", a.id(), "retry_after", s.reservation())
	default:
		s.log.Warn(warning, "queue", a.queue, "id", a.id(), "retry_after", s.reservation())
	}
	return false
}

// release moves the reserved copy to the delayed set, available after delay.
// afterException says the attempt threw or timed out (it ran for runtime), as opposed
// to a release the handler asked for, of a job without handler, or at a hard stop.
func (s *settler) release(r *run, a *attempt, delay time.Duration, afterException bool, runtime time.Duration) {
	a.released = true
	availableAt := s.cfg.Now().Unix() + rdb.Seconds(delay)
	var released bool
	lost, err := s.retry(r.ackCtx, a, "releasing a job", func(ctx context.Context) (err error) {
		released, err = s.cfg.RDB.Release(ctx, a.queue, a.popped.Reserved, availableAt)
		return err
	})
	switch {
	case err != nil:
		s.log.Error("releasing a job failed; it will run again after retry_after", "queue", a.queue, "id", a.id(), "err", err)
		return
	case !released:
		if !s.reservationGone(a, lost, "releasing a job",
			"job was no longer reserved when released (it ran longer than retry_after); it is already back in the queue") {
			return
		}
	}
	s.books.jobReleased(r.ackCtx, a)
	s.emit(job.Event{Kind: job.EventReleased, Queue: a.queue, Job: a.job, Delay: time.Duration(rdb.Seconds(delay)) * time.Second,
		AfterException: afterException, Runtime: runtime})
}

// fail is Job::fail: record the payload as popped in the failed store, then delete the
// reserved copy, then emit job.EventFailed. A job is failed once; a deleted job is not
// recorded (as in PHP).
//
// PHP deletes first and logs the failed row after; a row that cannot be written then
// loses the job. Here the reserved copy stays, and its reservation is held (see hold),
// until the row is written: while the database is down the job stays in Redis. When
// the worker must stop first, the job is left reserved and comes back after
// retry_after, to be failed again by the next worker.
func (s *settler) fail(r *run, a *attempt, cause error, runtime time.Duration) {
	if a.failed {
		return
	}
	a.failed = true
	if a.deleted {
		return
	}
	text := exceptionText(cause)
	s.books.jobFailing(a, text)
	err := s.holder.during(r.ackCtx, a, func() error {
		first := true
		_, err := s.retry(r.ackCtx, a, "writing a failed job", func(ctx context.Context) error {
			// An attempt that failed may have written the row all the same (the database
			// went away after the insert, before its answer): then it is not written twice.
			if !first && s.failedRowWritten(ctx, a) {
				return nil
			}
			first = false
			_, err := s.cfg.Failed.Log(ctx, s.cfg.Connection, a.queue, a.popped.Job, text)
			return err
		})
		return err
	})
	var de *job.DecodeError
	switch {
	case err != nil:
		s.log.Error("writing a failed job failed; the job stays reserved and comes back after retry_after",
			"queue", a.queue, "id", a.id(), "err", err,
			"payload_base64", base64.StdEncoding.EncodeToString(a.popped.Job), "exception", text)
		return
	case s.cfg.NullStore && (a.job == nil || errors.As(cause, &de)):
		// A job this worker could not read, and no store keeps failures: log its bytes.
		s.log.Error("job failed and no failed-job store is configured; the job is only in this log now",
			"queue", a.queue, "id", a.id(), "err", cause,
			"payload_base64", base64.StdEncoding.EncodeToString(a.popped.Job))
	case middlewareDecided(a):
		s.failedByMiddleware(a, cause)
	default:
		s.log.Warn("job failed", "queue", a.queue, "id", a.id(), "err", cause)
	}
	s.deleteReserved(r, a)
	s.jobFailed(r, a) // CallQueuedHandler::failed(): unique lock, batch
	e := job.Event{Kind: job.EventFailed, Queue: a.queue, Job: a.job, Err: cause, Runtime: runtime}
	if a.job == nil {
		e.Payload = a.popped.Job
	}
	s.emit(e)
}

// failedRowWritten reports whether the failed store holds the row of this attempt: the
// job's uuid, on its queue, with the very bytes popped. A store without uuids (the legacy
// database driver) cannot tell, nor can a job without one: false.
func (s *settler) failedRowWritten(ctx context.Context, a *attempt) bool {
	if a.job == nil || a.job.UUID == "" {
		return false
	}
	row, err := s.cfg.Failed.Find(ctx, a.job.UUID)
	return err == nil && row != nil && row.UUID == a.job.UUID && row.Queue == a.queue &&
		bytes.Equal(row.Payload, a.popped.Job)
}

// countException is markJobAsFailedIfWillExceedMaxExceptions, on the counter PHP
// workers share (job-exceptions:<uuid> in the cache).
func (s *settler) countException(r *run, a *attempt, cause error, runtime time.Duration) {
	env := a.job.Payload
	if s.cfg.CacheDisabled || !hasUUID(env) || env.MaxExceptions == nil {
		return
	}
	var exceeded bool
	_, err := s.retry(r.ackCtx, a, "counting a job exception", func(ctx context.Context) (err error) {
		_, exceeded, err = s.cfg.Signals.CountJobException(ctx, env.UUID, *env.MaxExceptions)
		return err
	})
	if err != nil {
		s.log.Error("counting a job exception failed", "job", a.job.Name, "id", a.job.ID, "err", err)
		return
	}
	if exceeded {
		s.fail(r, a, cause, runtime)
	}
}

// missingModel is CallQueuedHandler::handleModelNotFound for a handler that returned a
// *ModelNotFound: delete the job or fail it with the exception, then JobProcessed (the
// handler returned normally in PHP's terms: call() caught the exception). Neither retries
// nor continues the chain.
func (s *settler) missingModel(r *run, a *attempt, err error, runtime time.Duration) {
	del, cause := s.models.deleteWhenMissing(a)
	if del {
		s.log.Info("a model of the job is missing; deleted (deleteWhenMissingModels)", "job", a.job.Name, "id", a.job.ID, "err", err)
		s.deleteReserved(r, a)
	} else {
		if cause == nil {
			cause = modelNotFoundCause(err)
		}
		s.fail(r, a, cause, runtime)
	}
	s.emit(job.Event{Kind: job.EventProcessed, Queue: a.queue, Job: a.job, Runtime: runtime})
}

// jobFailed is what CallQueuedHandler::failed() does besides the command's failed()
// method, which Go cannot run: release the unique lock (except
// ShouldBeUniqueUntilProcessing), then record the failure in the job's batch.
func (s *settler) jobFailed(r *run, a *attempt) {
	s.uniques.afterRun(r.ackCtx, a, "on failure")
	s.batches.failed(r.ackCtx, a)
}

// alreadyFailed finishes a job that was failed before and came back (see
// decider.failedBefore): its failed row, row, is written; PHP would not run it again, so
// it is deleted, the failure's hooks run (unique lock, batch), and it counts as failed.
func (s *settler) alreadyFailed(r *run, a *attempt, row *failed.Record) {
	s.log.Warn("job came back after its failed row was written (its worker stopped before deleting it); deleting it without running it again",
		"queue", a.queue, "id", a.job.ID, "failed_row", row.ID)
	a.failed = true
	cause := errors.New(headline(row.Exception))
	s.books.jobFailing(a, row.Exception)
	s.deleteReserved(r, a)
	s.jobFailed(r, a)
	s.emit(job.Event{Kind: job.EventFailed, Queue: a.queue, Job: a.job, Err: cause})
}

// headline is the first line of an exception text.
func headline(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// superseded deletes a job a later dispatch of its debounce group superseded
// (CallQueuedHandler::deleteDebouncedJob: JobDebounced, then JobProcessed).
func (s *settler) superseded(r *run, a *attempt) {
	s.deleteReserved(r, a)
	s.emit(job.Event{Kind: job.EventProcessed, Queue: a.queue, Job: a.job})
}

// invalid reports a payload the pop moved to the invalid list.
func (s *settler) invalid(a *attempt) {
	logInvalid(s.log, a.queue, a.popped.Invalid)
	s.emit(job.Event{Kind: job.EventInvalid, Queue: a.queue, Err: a.popped.Invalid, Payload: a.popped.Job})
}
