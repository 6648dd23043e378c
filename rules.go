package laraq

// Laravel's worker rules (Illuminate\Queue\Worker), as each release applies them: tries,
// retryUntil, maxExceptions, backoff, and the exceptions failed jobs are recorded with.

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/payload"
)

func (c *Worker) maxTries(jr *jobRun) int64 {
	if t := jr.job.Payload.MaxTries; t != nil {
		return *t
	}
	return int64(c.s.tries)
}

// retryUntil is Job::retryUntil(), 0 when unset (PHP tests it for truthiness): the
// payload's retryUntil, falling back to the timeoutAt of 5.x–7.x payloads up to 9.25 only.
func (c *Worker) retryUntil(env *payload.Envelope) int64 {
	if env.RetryUntil == nil {
		return 0
	}
	if !c.s.release.readsTimeoutAt() {
		// env.RetryUntil is retryUntil ?? timeoutAt: with retryUntil null or absent it
		// came from timeoutAt, which 9.26+ no longer reads.
		if raw, ok := env.Get("retryUntil"); !ok || string(bytes.TrimSpace(raw)) == "null" {
			return 0
		}
	}
	return *env.RetryUntil
}

// readsTimeoutAt: Job::retryUntil() fell back to the pre-8.0 timeoutAt key until 9.26.0.
func (r Release) readsTimeoutAt() bool { return !r.AtLeast(9, 26, 0) }

// alreadyExceeded is markJobAsFailedIfAlreadyExceedsMaxAttempts: nil when the job may
// run, else the exception to fail it with.
func (c *Worker) alreadyExceeded(jr *jobRun) error {
	until := c.retryUntil(jr.job.Payload)
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
func (c *Worker) unlimitedTries(jr *jobRun) bool {
	env := jr.job.Payload
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

// willExceed is markJobAsFailedIfWillExceedMaxAttempts' condition (note >=). From 8.15 a
// retryUntil replaces the tries check; before, both apply (an expiry ahead does not
// spare the last try).
func (c *Worker) willExceed(jr *jobRun) bool {
	until := c.retryUntil(jr.job.Payload)
	if until != 0 && until <= c.s.Now().Unix() {
		return true
	}
	if until != 0 && c.s.release.AtLeast(8, 15, 0) {
		return false
	}
	maxTries := c.maxTries(jr)
	return maxTries > 0 && int64(jr.job.Attempt) >= maxTries
}

// TimeoutExceededClass is the exception Laravel 10.10+ fails timed-out jobs with (a
// subclass of MaxAttemptsExceededException); earlier releases use
// MaxAttemptsExceededException for timeouts too.
const TimeoutExceededClass = `Illuminate\Queue\TimeoutExceededException`

// maxAttemptsError is Worker::maxAttemptsExceededException in the configured release.
func (c *Worker) maxAttemptsError(jr *jobRun) error {
	msg := failed.MaxAttemptsExceededMessage(jr.job.Name)
	if c.s.release.separateTimeoutException() {
		msg = jr.job.Name + " has been attempted too many times."
	}
	return failed.New(failed.MaxAttemptsExceededClass, msg, 1)
}

// timeoutError is the exception PHP's timeout handler uses: the max-attempts one up to
// Laravel 10.9, TimeoutExceededException ("<Name> has timed out.") from 10.10.
func (c *Worker) timeoutError(jr *jobRun) error {
	if c.s.release.separateTimeoutException() {
		return failed.New(TimeoutExceededClass, jr.job.Name+" has timed out.", 1)
	}
	return c.maxAttemptsError(jr)
}

// countException is markJobAsFailedIfWillExceedMaxExceptions, on the counter PHP
// workers share (job-exceptions:<uuid> in the cache).
func (c *Worker) countException(r *run, jr *jobRun, cause error, runtime time.Duration) {
	env := jr.job.Payload
	if c.s.cacheDisabled || !hasUUID(env) || env.MaxExceptions == nil {
		return
	}
	var exceeded bool
	_, err := c.retry(r, jr, "counting a job exception", func(ctx context.Context) (err error) {
		_, exceeded, err = c.cache.CountJobException(ctx, env.UUID, *env.MaxExceptions)
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
// split on commas, element attempt-1 or the last one, read as PHP's (int) cast does; a
// negative delay releases at once, as a past availableAt does.
func (c *Worker) backoff(jr *jobRun) time.Duration {
	spec := jr.job.Payload.BackoffSpec()
	if spec == "" {
		spec = c.s.backoffSpec
	}
	parts := strings.Split(spec, ",")
	i := jr.job.Attempt - 1
	if i < 0 || i >= len(parts) {
		i = len(parts) - 1
	}
	return time.Duration(max(php.Intval(parts[i]), 0)) * time.Second
}

// exceptionText renders a failure in PHP's Throwable string form for failed_jobs. An
// error a handler returned is located at the handler (Go errors carry no location).
func exceptionText(err error) string {
	var at *failed.Frame
	var he *handlerError
	if errors.As(err, &he) {
		at, err = &he.at, he.err
	}
	var fe *FailError
	if errors.As(err, &fe) {
		if fe.Err == nil {
			if at != nil && at.File != "" {
				return failed.NewAt(failed.ManuallyFailedClass, "", *at).String()
			}
			return failed.New(failed.ManuallyFailedClass, "", 1).String()
		}
		err = fe.Err
	}
	var pe *PanicError
	if errors.As(err, &pe) && pe.Exception != nil {
		return pe.Exception.String()
	}
	var ex *failed.Exception
	if errors.As(err, &ex) && error(ex) == err {
		return ex.String()
	}
	if at != nil && at.File != "" {
		return failed.CaptureAt(err, *at).String()
	}
	return failed.Capture(err, 1).String()
}

// ceilSeconds rounds a duration up to whole seconds, as Redis scores are Unix seconds.
func ceilSeconds(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	s := int64(d / time.Second)
	if d%time.Second != 0 {
		s++
	}
	return s
}
