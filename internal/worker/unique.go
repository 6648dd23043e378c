package worker

import (
	"context"

	"github.com/laraq/laraq/internal/dispatch"
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/phpser"
)

// A ShouldBeUnique job holds a lock in the application's cache store from dispatch
// (PendingDispatch takes it, and queues nothing while someone holds it) until
// CallQueuedHandler releases it: after handle() returns (unless the job was released),
// in failed(), or, for ShouldBeUniqueUntilProcessing, just before handle() runs. The
// lock is a RedisLock on the store's lock_connection (the skeleton's 'default', the
// queue's own Redis connection) named by the cache store's key scheme:
//
//	laravel_unique_job:CLASS.UNIQUEID               8.x–10.x (no separator)
//	laravel_unique_job:CLASS:UNIQUEID               11.0+
//	laravel_unique_job:DISPLAYNAME:UNIQUEID         12.41–12.53, classes with displayName()
//	laravel_unique_job:XXH128(DISPLAYNAME):UNIQUEID 12.54+ and 13.x, classes with displayName()
//
// From 11.x PendingDispatch also puts the key and the store in the payload's hidden
// Context (laravel_unique_job_key, laravel_unique_job_cache_store) and from 13.24 the
// lock's owner (laravel_unique_job_lock_owner, also the command's uniqueLockOwner), which
// 13.24's release compares before deleting. A Go worker knows a job is unique from its
// Go type (UniqueJob) or, failing that, from that hidden Context, and releases its lock
// when PHP's CallQueuedHandler would.

// uniques releases the locks of unique jobs.
type uniques struct {
	base
	jobs *job.Jobs
}

// uniqueLock is one job's lock as the worker releases it.
type uniqueLock struct {
	key, owner      string
	untilProcessing bool
}

// lockOf finds the job's lock: the key from its hidden Context (what PHP computed
// at dispatch), else from its Go type; the owner from the Context or the command's
// uniqueLockOwner. ok is false for a job that is not unique as far as Go can tell.
func (u *uniques) lockOf(a *attempt) (l uniqueLock, ok bool) {
	info := a.job
	if key, owner, found := dispatch.HiddenUniqueLock(info.Payload); found {
		l.key, l.owner, ok = key, owner, true
	}
	cmd, traits := a.command(u.jobs)
	if uj, isUnique := cmd.(job.UniqueJob); isUnique && traits != nil {
		if !ok {
			_, hasDisplay := cmd.(job.DisplayNamer)
			display := ""
			if d, isD := cmd.(job.DisplayNamer); isD {
				display = d.DisplayName()
			}
			l.key, ok = u.cfg.Release.UniqueLockKey(info.Class, hasDisplay, display, uj.UniqueID()), true
		}
		_, l.untilProcessing = cmd.(job.UniqueUntilProcessing)
	}
	if ok && l.owner == "" && dispatch.WritesLockOwner(u.cfg.Release) {
		if v, err := info.Value(); err == nil {
			if o, found := v.Visible("uniqueLockOwner"); found && o.Kind() == phpser.KindString {
				l.owner = o.Str()
			}
		}
	}
	return l, ok
}

// release releases the job's lock as UniqueLock::release() does: compare-and-delete
// with its owner (13.24+), else forceRelease. Failures are logged: the lock then
// expires after uniqueFor, as it would after a PHP worker died.
func (u *uniques) release(ctx context.Context, a *attempt, l uniqueLock, when string) {
	locks, err := u.cfg.Locks()
	if err == nil {
		var released bool
		_, err = u.retry(ctx, a, "releasing a unique job's lock", func(ctx context.Context) (err error) {
			if l.owner != "" {
				released, err = locks.Release(ctx, l.key, l.owner)
			} else {
				released, err = locks.ForceRelease(ctx, l.key)
			}
			return err
		})
		if err == nil {
			u.log.Debug("unique job lock released", "job", a.job.Name, "id", a.job.ID, "key", locks.Key(l.key), "when", when, "was_held", released)
			return
		}
	}
	u.log.Error("releasing a unique job's lock failed; it is held until uniqueFor runs out",
		"job", a.job.Name, "id", a.job.ID, "key", l.key, "err", err)
}

// beforeHandle releases the lock of a ShouldBeUniqueUntilProcessing job just
// before its handler runs (CallQueuedHandler::dispatchThroughMiddleware). From 13.24 a
// retried attempt whose command carries no owner keeps it: another dispatch may hold
// the lock by now.
func (u *uniques) beforeHandle(ctx context.Context, a *attempt) {
	l, ok := u.lockOf(a)
	if !ok || !l.untilProcessing {
		return
	}
	if dispatch.WritesLockOwner(u.cfg.Release) && a.job.Attempt > 1 && l.owner == "" {
		return
	}
	a.uniqueReleased = true
	u.release(context.WithoutCancel(ctx), a, l, "before processing")
}

// afterRun releases the lock after the handler returned without a release
// (CallQueuedHandler::call), or when the job failed (CallQueuedHandler::failed), except
// for ShouldBeUniqueUntilProcessing, whose lock was released before.
func (u *uniques) afterRun(ctx context.Context, a *attempt, when string) {
	if a.job == nil || a.uniqueReleased {
		return
	}
	l, ok := u.lockOf(a)
	if !ok || l.untilProcessing {
		return
	}
	a.uniqueReleased = true
	u.release(ctx, a, l, when)
}
