package worker

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/rdb"
)

// What the fetch stage does when Redis refuses it. A refusal no retry heals
// (rdb.ConfigError: a replica, a Cluster slot clash, an ACL user denied a command, a
// command or script the server lacks) stops the worker at first sight with one line
// naming the server and the fix, as refused credentials do. READONLY after a pop has
// succeeded, or through Sentinel, is a failover in progress: retried for ReadOnlyGrace
// first. A key of one
// queue holding the wrong type skips that queue: the others go on, it is tried again
// every SkippedQueueRetry and resumes by itself once the key is repaired. Out of memory
// and every other error are retried with backoff, as before.

// ErrQueuesUnavailable is wrapped by the error Run returns when a StopWhenEmpty worker
// cannot tell that its queues are empty: a queue is skipped, or no pop succeeded for
// unavailablePatience. The EventLoop heartbeat carries it too while every queue is
// skipped.
var ErrQueuesUnavailable = errors.New("laraq: the queues could not be worked")

// unavailablePatience is how long a StopWhenEmpty worker retries Redis errors before it
// gives up: a restart or a dropped connection passes within it, and a batch run does not
// wait forever for a Redis that is down or full.
const unavailablePatience = 10 * time.Second

// refusals is what the fetch loop remembers of Redis' refusals in one Run.
type refusals struct {
	skipped       map[string]*skippedQueue
	popped        bool      // a pop succeeded: a READONLY after it is a failover in progress
	readOnlySince time.Time // the first READONLY since the last pop that succeeded
	failingSince  time.Time // the first failed round since the last that succeeded
}

// skippedQueue is a queue one of whose keys holds the wrong type.
type skippedQueue struct {
	err   *rdb.ConfigError
	retry time.Time // when it is tried again (wall clock)
}

// skipping reports whether queue q is skipped and not due for another try at wall.
func (l *fetchRun) skipping(q string, wall time.Time) bool {
	s := l.skipped[q]
	return s != nil && wall.Before(s.retry)
}

// skip makes queue q skipped when err says that a key of it holds the wrong type, and
// reports whether it did. Nothing of the queue changed: every script that writes its
// keys checks their types before its first write.
func (f *fetcher) skip(l *fetchRun, q string, err error) bool {
	var ce *rdb.ConfigError
	if !errors.As(err, &ce) || ce.Reason != rdb.ErrWrongType {
		return false
	}
	s := l.skipped[q]
	switch {
	case s == nil:
		f.log.Error("queue skipped: a key of it holds the wrong type; the other queues go on, nothing is deleted",
			"queue", q, "key", ce.Key, "type", ce.Type, "want", ce.Want, "retry_in", f.cfg.SkippedQueueRetry, "err", ce)
		f.emit(job.Event{Kind: job.EventQueueSkipped, Queue: q, Err: ce})
		s = &skippedQueue{}
		l.skipped[q] = s
	case s.err.Key != ce.Key || s.err.Type != ce.Type:
		f.log.Error("queue still skipped: another key of it holds the wrong type",
			"queue", q, "key", ce.Key, "type", ce.Type, "want", ce.Want, "err", ce)
		f.emit(job.Event{Kind: job.EventQueueSkipped, Queue: q, Err: ce})
	default:
		f.log.Debug("queue still skipped", "queue", q, "key", ce.Key, "type", ce.Type)
	}
	s.err, s.retry = ce, time.Now().Add(f.cfg.SkippedQueueRetry)
	return true
}

// resume takes queue q again after an operation on it succeeded while it was skipped.
func (f *fetcher) resume(l *fetchRun, q string) {
	if l.skipped[q] == nil {
		return
	}
	delete(l.skipped, q)
	f.log.Info("queue resumed: its keys hold their types again", "queue", q)
	f.emit(job.Event{Kind: job.EventQueueResumed, Queue: q})
}

// skippedError is the error of a run with skipped queues, wrapping ErrQueuesUnavailable
// and each queue's *rdb.ConfigError; nil when none is skipped.
func (f *fetcher) skippedError(l *fetchRun) error {
	if len(l.skipped) == 0 {
		return nil
	}
	args := []any{ErrQueuesUnavailable}
	var names []string
	for _, q := range f.cfg.Queues {
		if s := l.skipped[q]; s != nil {
			args = append(args, s.err)
			names = append(names, "%w")
		}
	}
	what := "some queues are skipped, so they are not known to be empty"
	if len(l.skipped) == len(f.cfg.Queues) {
		what = "every queue is skipped"
	}
	return fmt.Errorf("%w: "+what+": "+strings.Join(names, "; "), args...)
}

// unworkable is the error the heartbeat carries while every queue is skipped: the worker
// cannot take a job although Redis answers.
func (f *fetcher) unworkable(l *fetchRun) error {
	if len(l.skipped) < len(f.cfg.Queues) {
		return nil
	}
	return f.skippedError(l)
}

// popSucceeded records a pop Redis answered: a READONLY from now on is a failover.
func (l *fetchRun) popSucceeded() {
	l.popped, l.readOnlySince = true, time.Time{}
}

// refused decides what a Redis error of the loop means: the error Run stops with, or
// nil to retry it.
func (f *fetcher) refused(l *fetchRun, err error) error {
	if rdb.IsAuthError(err) {
		// A wrong password does not get better by retrying: stop, naming the server.
		return rdb.AuthErrorOf(f.cfg.Client, err)
	}
	var ce *rdb.ConfigError
	if errors.As(err, &ce) {
		switch {
		case ce.Reason == rdb.ErrWrongType:
			// A queue's key: the queue is skipped where it was seen. This one came from
			// asking again for a lost pop, which is retried.
		case ce.Reason == rdb.ErrReadOnly && (l.popped || rdb.ViaSentinel(f.cfg.Client)) && f.cfg.ReadOnlyGrace > 0:
			// The master this worker popped from became a replica, or the one the
			// Sentinels named is one: a failover is under way, and Sentinel's clients
			// find the new master once it is promoted. A replica before any pop, not
			// named by Sentinels, is where the worker was pointed: stop at once.
			if l.readOnlySince.IsZero() {
				l.readOnlySince = time.Now()
				f.log.Warn("redis became a read-only replica, as in a failover; retrying until the grace ends",
					"grace", f.cfg.ReadOnlyGrace, "err", ce)
			}
			if time.Since(l.readOnlySince) < f.cfg.ReadOnlyGrace {
				return nil
			}
			return ce
		default:
			return ce
		}
	}
	if f.cfg.StopWhenEmpty {
		if l.failingSince.IsZero() {
			l.failingSince = time.Now()
		}
		if time.Since(l.failingSince) >= unavailablePatience {
			return fmt.Errorf("%w: no pop succeeded for %v: %w", ErrQueuesUnavailable, unavailablePatience, err)
		}
	}
	return nil
}

// refusedSignal is the error Run stops with when reading the restart or pause signals
// met a refusal no retry heals (an ACL user denied GET or MGET); nil otherwise. A
// signal key of the wrong type is only warned about, as any other read error.
func refusedSignal(err error) error {
	var ce *rdb.ConfigError
	if errors.As(err, &ce) && ce.Reason != rdb.ErrWrongType {
		return ce
	}
	return nil
}
