package worker

import (
	"context"
	"reflect"
	"strings"
	"sync"

	"github.com/laraq/laraq/internal/dispatch"
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/phpclass"
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
// Go type (UniqueJob), from that hidden Context, or from its class's facts
// (Config.Classes: 8.x to 11.38 payloads name no lock), and releases its lock when PHP's
// CallQueuedHandler would.

// uniques releases the locks of unique jobs.
type uniques struct {
	base
	jobs *job.Jobs
	// unique are the ShouldBeUnique classes of Config.Classes by name, as given and
	// lower-cased (PHP class names are case-insensitive): looked up for every job.
	unique map[string]*phpclass.Class
	// noID are the classes whose lock a job finished without naming (a uniqueId() method
	// no handler gave the answer of), each said once; bounded by the class facts.
	noID sync.Map
}

// uniqueLock is one job's lock as the worker releases it.
type uniqueLock struct {
	key, owner      string
	untilProcessing bool
}

func newUniques(b base, jobs *job.Jobs) *uniques {
	u := &uniques{base: b, jobs: jobs, unique: map[string]*phpclass.Class{}}
	if m := b.cfg.Classes; m != nil {
		for i := range m.Classes {
			if c := &m.Classes[i]; c.Unique() {
				u.unique[c.Name] = c
				u.unique[strings.ToLower(c.Name)] = c
			}
		}
	}
	return u
}

// uniqueClass is the ShouldBeUnique class of the facts named class, or nil.
func (u *uniques) uniqueClass(class string) *phpclass.Class {
	if len(u.unique) == 0 {
		return nil
	}
	if c, ok := u.unique[class]; ok {
		return c
	}
	return u.unique[strings.ToLower(class)]
}

// lockOf finds the job's lock: the key from its hidden Context (what PHP computed at
// dispatch), else from its Go type, else from its class's facts (Config.Classes); the
// owner from the Context or the command's uniqueLockOwner. ok is false for a job that
// is not unique as far as Go can tell, or whose id is not known (yet: see classLock).
func (u *uniques) lockOf(a *attempt) (l uniqueLock, ok bool) {
	info := a.job
	if key, owner, found := dispatch.HiddenUniqueLock(info.Payload); found {
		l.key, l.owner, ok = key, owner, true
	}
	cmd, traits := a.command(u.jobs)
	uj, typed := cmd.(job.UniqueJob)
	switch {
	case typed && traits != nil:
		if !ok {
			_, hasDisplay := cmd.(job.DisplayNamer)
			display := ""
			if d, isD := cmd.(job.DisplayNamer); isD {
				display = d.DisplayName()
			}
			l.key, ok = u.cfg.Release.UniqueLockKey(info.Class, hasDisplay, display, uj.UniqueID()), true
		}
		_, l.untilProcessing = cmd.(job.UniqueUntilProcessing)
	default:
		if c := u.uniqueClass(info.Class); c != nil {
			l.untilProcessing = c.UniqueUntilProcessing()
			if !ok {
				l.key, ok = u.classLock(a, c)
			}
		}
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

// classLock is the key of a ShouldBeUnique class's lock as UniqueLock::getKey() names it,
// from the class's facts: the displayName the payload carries when the class has
// displayName(), the id from its uniqueId property (the class default when PHP left it
// out), or, for a uniqueId() method, what the handler said it returns
// (JobInfo.SetUniqueID); ok is false until that is known.
func (u *uniques) classLock(a *attempt, c *phpclass.Class) (key string, ok bool) {
	info := a.job
	var id string
	if c.Method("uniqueId") != nil {
		if id, ok = job.GivenUniqueID(info); !ok {
			return "", false
		}
	} else {
		v, err := info.Value()
		if err == nil {
			id, err = dispatch.UniqueIDProperty(c, v.Deref())
		}
		if err != nil {
			u.log.Warn("the unique job's id cannot be read; its lock is held until uniqueFor runs out",
				"job", info.Name, "id", info.ID, "err", err)
			return "", false
		}
	}
	hasDisplay := c.Method("displayName") != nil
	return u.cfg.Release.UniqueLockKey(info.Class, hasDisplay, info.Payload.DisplayName, id), true
}

// lockUnnamed says, once per class, that a job of a unique class finished without its
// lock's id: a uniqueId() method whose answer no handler gave.
func (u *uniques) lockUnnamed(a *attempt) {
	c := u.uniqueClass(a.job.Class)
	if c == nil || c.Method("uniqueId") == nil {
		return
	}
	if _, said := u.noID.LoadOrStore(c.Name, true); said {
		return
	}
	u.log.Warn("a unique job ran without its handler giving its uniqueId(): its lock is held until uniqueFor runs out (the handler calls JobInfo.SetUniqueID; a --forward service answers with an X-Laraq-Unique-Id header)",
		"class", c.Name, "id", a.job.ID)
}

// unnamedLocks are the unique classes whose lock id comes from a uniqueId() method that
// jobs handles without a Go type saying UniqueJob: their locks are released only when
// the handler gives the id, on releases whose payloads do not name the lock (before
// 11.39). New names them once at start.
func unnamedLocks(cfg *Config, jobs *job.Jobs) []string {
	if cfg.Classes == nil || (!cfg.JobRelease.IsZero() && cfg.JobRelease.AtLeast(11, 39, 0)) { // 11.39+ payloads name their lock
		return nil
	}
	uniqueJob := reflect.TypeFor[job.UniqueJob]()
	var out []string
	for i := range cfg.Classes.Classes {
		c := &cfg.Classes.Classes[i]
		if !c.Unique() || c.Method("uniqueId") == nil {
			continue
		}
		if _, _, handled := job.Lookup(jobs, c.Name); !handled {
			continue
		}
		if t := job.CommandType(jobs, c.Name); t != nil && (t.Implements(uniqueJob) || reflect.PointerTo(t).Implements(uniqueJob)) {
			continue
		}
		out = append(out, c.Name)
	}
	return out
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
// before its handler runs (CallQueuedHandler::dispatchThroughMiddleware).
func (u *uniques) beforeHandle(ctx context.Context, a *attempt) {
	u.releaseUntilProcessing(ctx, a, "before processing")
}

// afterHandler releases the lock of a ShouldBeUniqueUntilProcessing job whose id was not
// known before the handler ran (a uniqueId() method whose answer the handler gave with
// JobInfo.SetUniqueID): PHP released it before handle(), this is the nearest the worker
// can come.
func (u *uniques) afterHandler(ctx context.Context, a *attempt) {
	if a.uniqueReleased {
		return
	}
	if _, given := job.GivenUniqueID(a.job); !given {
		if c := u.uniqueClass(a.job.Class); c != nil && c.UniqueUntilProcessing() {
			u.lockUnnamed(a)
		}
		return
	}
	u.releaseUntilProcessing(ctx, a, "after the handler named it")
}

// releaseUntilProcessing releases a ShouldBeUniqueUntilProcessing job's lock once. From
// 13.24 a retried attempt whose command carries no owner keeps it: another dispatch may
// hold the lock by now.
func (u *uniques) releaseUntilProcessing(ctx context.Context, a *attempt, when string) {
	l, ok := u.lockOf(a)
	if !ok || !l.untilProcessing {
		return
	}
	a.uniqueReleased = true // released now, or kept for good by this attempt
	if dispatch.WritesLockOwner(u.cfg.Release) && a.job.Attempt > 1 && l.owner == "" {
		return
	}
	u.release(context.WithoutCancel(ctx), a, l, when)
}

// afterRun releases the lock after the handler returned without a release
// (CallQueuedHandler::call), or when the job failed (CallQueuedHandler::failed), except
// for ShouldBeUniqueUntilProcessing, whose lock was released before.
func (u *uniques) afterRun(ctx context.Context, a *attempt, when string) {
	if a.job == nil || a.uniqueReleased {
		return
	}
	l, ok := u.lockOf(a)
	if l.untilProcessing {
		return // released before the handler, or after it (afterHandler)
	}
	if !ok {
		u.lockUnnamed(a)
		return
	}
	a.uniqueReleased = true
	u.release(ctx, a, l, when)
}
