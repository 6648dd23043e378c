package worker

// Laravel's worker rules (Illuminate\Queue\Worker), as each release applies them: tries,
// retryUntil, backoff, and the exceptions failed jobs are recorded with. They decide;
// they touch neither Redis nor the database.

import (
	"bytes"
	"errors"
	"strings"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/payload"
)

// rules are Laravel's worker rules on a worker's settings.
type rules struct{ cfg *Config }

func (l rules) maxTries(a *attempt) int64 {
	if t := a.job.Payload.MaxTries; t != nil {
		return *t
	}
	return int64(l.cfg.Tries)
}

// retryUntil is Job::retryUntil(), 0 when unset (PHP tests it for truthiness): the
// payload's retryUntil, falling back to the timeoutAt of 5.x–7.x payloads up to 9.25 only.
func (l rules) retryUntil(env *payload.Envelope) int64 {
	if env.RetryUntil == nil {
		return 0
	}
	if !readsTimeoutAt(l.cfg.Release) {
		// env.RetryUntil is retryUntil ?? timeoutAt: with retryUntil null or absent it
		// came from timeoutAt, which 9.26+ no longer reads.
		if raw, ok := env.Get("retryUntil"); !ok || string(bytes.TrimSpace(raw)) == "null" {
			return 0
		}
	}
	return *env.RetryUntil
}

// readsTimeoutAt: Job::retryUntil() fell back to the pre-8.0 timeoutAt key until 9.26.0.
func readsTimeoutAt(r job.Release) bool { return !r.AtLeast(9, 26, 0) }

// separateTimeoutException says whether timeouts fail with TimeoutExceededException and
// attempts with the short "has been attempted too many times." (10.10+).
func separateTimeoutException(r job.Release) bool { return r.AtLeast(10, 10, 0) }

// alreadyExceeded is markJobAsFailedIfAlreadyExceedsMaxAttempts: nil when the job may
// run, else the exception to fail it with.
func (l rules) alreadyExceeded(a *attempt) error {
	until := l.retryUntil(a.job.Payload)
	maxTries := l.maxTries(a)
	if until != 0 && l.cfg.Now().Unix() <= until {
		return nil
	}
	if until == 0 && (l.unlimitedTries(a) || int64(a.job.Attempt) <= maxTries) {
		return nil
	}
	return l.maxAttemptsError(a)
}

// unlimitedTries is PHP's `$maxTries === 0`: strict, so a payload maxTries written as
// "0" or 0.0 is not "unlimited" (and, being no more than 0, fails the job before it runs).
func (l rules) unlimitedTries(a *attempt) bool {
	env := a.job.Payload
	if env.MaxTries == nil {
		return l.cfg.Tries == 0
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
func (l rules) willExceed(a *attempt) bool {
	until := l.retryUntil(a.job.Payload)
	if until != 0 && until <= l.cfg.Now().Unix() {
		return true
	}
	if until != 0 && l.cfg.Release.AtLeast(8, 15, 0) {
		return false
	}
	maxTries := l.maxTries(a)
	return maxTries > 0 && int64(a.job.Attempt) >= maxTries
}

// TimeoutExceededClass is the exception Laravel 10.10+ fails timed-out jobs with (a
// subclass of MaxAttemptsExceededException); earlier releases use
// MaxAttemptsExceededException for timeouts too.
const TimeoutExceededClass = `Illuminate\Queue\TimeoutExceededException`

// maxAttemptsError is Worker::maxAttemptsExceededException in the configured release.
func (l rules) maxAttemptsError(a *attempt) error {
	msg := failed.MaxAttemptsExceededMessage(a.job.Name)
	if separateTimeoutException(l.cfg.Release) {
		msg = a.job.Name + " has been attempted too many times."
	}
	return failed.New(failed.MaxAttemptsExceededClass, msg, 1)
}

// timeoutError is the exception PHP's timeout handler uses: the max-attempts one up to
// Laravel 10.9, TimeoutExceededException ("<Name> has timed out.") from 10.10.
func (l rules) timeoutError(a *attempt) error {
	if separateTimeoutException(l.cfg.Release) {
		return failed.New(TimeoutExceededClass, a.job.Name+" has timed out.", 1)
	}
	return l.maxAttemptsError(a)
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
func (l rules) backoff(a *attempt) time.Duration {
	spec := a.job.Payload.BackoffSpec()
	if spec == "" {
		spec = l.cfg.BackoffSpec
	}
	parts := strings.Split(spec, ",")
	i := a.job.Attempt - 1
	if i < 0 || i >= len(parts) {
		i = len(parts) - 1
	}
	return time.Duration(max(php.Intval(parts[i]), 0)) * time.Second
}

// exceptionText renders a failure in PHP's Throwable string form for failed_jobs. An
// error a handler returned is located at the handler (Go errors carry no location).
func exceptionText(err error) string {
	var at *failed.Frame
	var he *job.HandlerError
	if errors.As(err, &he) {
		at, err = &he.At, he.Err
	}
	var fe *job.FailError
	if errors.As(err, &fe) {
		if fe.Err == nil {
			if at != nil && at.File != "" {
				return failed.NewAt(failed.ManuallyFailedClass, "", *at).String()
			}
			return failed.New(failed.ManuallyFailedClass, "", 1).String()
		}
		err = fe.Err
	}
	var pe *job.PanicError
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
