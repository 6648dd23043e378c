package laraq

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/payload"
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
// Go type (UniqueJob) or, failing that, from that hidden Context.

// UniqueJob is implemented by job types whose PHP class implements ShouldBeUnique. A Go
// worker releases the job's lock when PHP's would; a Go dispatcher takes it first and
// queues nothing while it is held (ErrUniqueLocked).
//
//	func (j ReindexShop) UniqueID() string           { return strconv.Itoa(j.ShopID) } // uniqueId()
//	func (ReindexShop) UniqueFor() time.Duration    { return time.Hour }             // $uniqueFor
type UniqueJob interface {
	// UniqueID is the class's uniqueId() (or its uniqueId property); "" for none.
	UniqueID() string
	// UniqueFor is $uniqueFor (or uniqueFor()): how long the lock lives; 0 until released.
	UniqueFor() time.Duration
}

// UniqueUntilProcessing is implemented by job types whose PHP class implements
// ShouldBeUniqueUntilProcessing: the lock is released just before the handler runs.
type UniqueUntilProcessing interface {
	UniqueJob
	ShouldBeUniqueUntilProcessing()
}

// ErrUniqueLocked is Dispatch's error for a UniqueJob whose lock is held by an earlier
// dispatch: as with PendingDispatch (UniqueJobSkipped), nothing was queued.
var ErrUniqueLocked = errors.New("laraq: a job with the same unique lock is queued or running; not dispatched")

// Hidden Context keys of a unique job's lock (11.x+ PendingDispatch).
const (
	ctxUniqueStore = "laravel_unique_job_cache_store"
	ctxUniqueKey   = "laravel_unique_job_key"
	ctxUniqueOwner = "laravel_unique_job_lock_owner"
	contextKey     = "illuminate:log:context"
)

// UniqueLockKey is the cache key (before the cache store's prefix) under which this
// release locks a unique job of class: UniqueLock::getKey(). display is the class's
// displayName() when it has that method (hasDisplayName), uniqueID its uniqueId().
func (r Release) UniqueLockKey(class string, hasDisplayName bool, display, uniqueID string) string {
	r = r.orLatest()
	if !r.AtLeast(11, 0, 0) {
		return "laravel_unique_job:" + class + uniqueID
	}
	name := class
	switch {
	case hasDisplayName && r.AtLeast(12, 54, 0):
		name = php.XXH128(display)
	case hasDisplayName && r.AtLeast(12, 41, 0):
		name = display
	}
	return "laravel_unique_job:" + name + ":" + uniqueID
}

// writesLockOwner says whether UniqueLock::acquire() records the owner in the command's
// uniqueLockOwner and release() compares it (13.24+).
func (r Release) writesLockOwner() bool { return r.AtLeast(13, 24, 0) }

// writesUniqueContext says whether PendingDispatch puts the lock into hidden Context.
func (r Release) writesUniqueContext() bool { return r.AtLeast(11, 39, 0) }

// locks are the connection's cache locks: CacheStore.LockClient (else the queue's
// client), under the cache key scheme.
func (c *Connection) locks() (uniqueLocks, error) {
	if c.Cache.Store != nil {
		return storeLocks{c.Cache.Store}, nil
	}
	client := c.Cache.LockClient
	if client == nil {
		client = c.Client
	}
	return rdb.NewLocks(client, c.CacheScheme().keys())
}

// uniqueLock is one job's lock as the worker releases it.
type uniqueLock struct {
	key, owner      string
	untilProcessing bool
}

// uniqueLockOf finds the job's lock: the key from its hidden Context (what PHP computed
// at dispatch), else from its Go type; the owner from the Context or the command's
// uniqueLockOwner. ok is false for a job that is not unique as far as Go can tell.
func (c *Worker) uniqueLockOf(jr *jobRun) (l uniqueLock, ok bool) {
	job := jr.job
	if key, owner, found := hiddenUniqueLock(job.Payload); found {
		l.key, l.owner, ok = key, owner, true
	}
	cmd, traits := c.commandOf(job)
	if u, isUnique := cmd.(UniqueJob); isUnique && traits != nil {
		if !ok {
			_, hasDisplay := cmd.(DisplayNamer)
			display := ""
			if d, isD := cmd.(DisplayNamer); isD {
				display = d.DisplayName()
			}
			l.key, ok = c.s.release.UniqueLockKey(job.Class, hasDisplay, display, u.UniqueID()), true
		}
		_, l.untilProcessing = cmd.(UniqueUntilProcessing)
	}
	if ok && l.owner == "" && c.s.release.writesLockOwner() {
		if v, err := job.Value(); err == nil {
			if o, found := publicValue(v, "uniqueLockOwner"); found && o.Kind() == phpser.KindString {
				l.owner = o.Str()
			}
		}
	}
	return l, ok
}

// hiddenUniqueLock reads the lock key and owner PendingDispatch put into the payload's
// hidden Context (serialized PHP strings).
func hiddenUniqueLock(env *payload.Envelope) (key, owner string, ok bool) {
	raw, found := env.Get(contextKey)
	if !found {
		return "", "", false
	}
	doc, err := payload.DecodeValue(raw)
	if err != nil {
		return "", "", false
	}
	hidden := doc.Get("hidden")
	str := func(name string) string {
		v := hidden.Get(name)
		if v == nil || v.Kind != payload.KindString {
			return ""
		}
		s, err := phpser.DecodeString(v.Str)
		if err != nil || s.Kind() != phpser.KindString {
			return ""
		}
		return s.Str()
	}
	key = str(ctxUniqueKey)
	return key, str(ctxUniqueOwner), key != ""
}

// releaseUnique releases the job's lock as UniqueLock::release() does: compare-and-delete
// with its owner (13.24+), else forceRelease. Failures are logged: the lock then
// expires after uniqueFor, as it would after a PHP worker died.
func (c *Worker) releaseUnique(ctx context.Context, jr *jobRun, l uniqueLock, when string) {
	locks, err := c.conn.locks()
	if err == nil {
		var released bool
		_, err = c.retryCtx(ctx, jr, "releasing a unique job's lock", func(ctx context.Context) (err error) {
			if l.owner != "" {
				released, err = locks.Release(ctx, l.key, l.owner)
			} else {
				released, err = locks.ForceRelease(ctx, l.key)
			}
			return err
		})
		if err == nil {
			c.log.Debug("unique job lock released", "job", jr.job.Name, "id", jr.job.ID, "key", locks.Key(l.key), "when", when, "was_held", released)
			return
		}
	}
	c.log.Error("releasing a unique job's lock failed; it is held until uniqueFor runs out",
		"job", jr.job.Name, "id", jr.job.ID, "key", l.key, "err", err)
}

// uniqueBeforeHandle releases the lock of a ShouldBeUniqueUntilProcessing job just
// before its handler runs (CallQueuedHandler::dispatchThroughMiddleware). From 13.24 a
// retried attempt whose command carries no owner keeps it: another dispatch may hold
// the lock by now.
func (c *Worker) uniqueBeforeHandle(ctx context.Context, jr *jobRun) {
	l, ok := c.uniqueLockOf(jr)
	if !ok || !l.untilProcessing {
		return
	}
	if c.s.release.writesLockOwner() && jr.job.Attempt > 1 && l.owner == "" {
		return
	}
	jr.job.ext.uniqueReleased = true
	c.releaseUnique(context.WithoutCancel(ctx), jr, l, "before processing")
}

// uniqueAfterRun releases the lock after the handler returned without a release
// (CallQueuedHandler::call), or when the job failed (CallQueuedHandler::failed), except
// for ShouldBeUniqueUntilProcessing, whose lock was released before.
func (c *Worker) uniqueAfterRun(r *run, jr *jobRun, when string) {
	if jr.job == nil || jr.job.ext == nil || jr.job.ext.uniqueReleased {
		return
	}
	l, ok := c.uniqueLockOf(jr)
	if !ok || l.untilProcessing {
		return
	}
	jr.job.ext.uniqueReleased = true
	c.releaseUnique(r.ackCtx, jr, l, when)
}

// uniqueDispatch is a unique job's lock taken by Dispatch.
type uniqueDispatch struct {
	key, owner string
	locks      uniqueLocks
}

// acquireUnique takes a UniqueJob's lock as PendingDispatch::shouldDispatch() does, with
// an owner as RedisLock makes one (Str::random(16)). It returns nil for other jobs.
func (p *Dispatcher) acquireUnique(ctx context.Context, job any) (*uniqueDispatch, error) {
	u, ok := job.(UniqueJob)
	if !ok {
		return nil, nil
	}
	if rel := p.release(); !rel.AtLeast(8, 0, 0) {
		// No release before 8.0 knows ShouldBeUnique: its workers would never release
		// the lock, and every later dispatch would be refused until it expired.
		return nil, fmt.Errorf("laraq: %T is a UniqueJob, but Laravel %s has no unique jobs (ShouldBeUnique is 8.x)", job, rel)
	}
	class := ""
	if c, isCmd := job.(Command); isCmd {
		class = c.PHPClass()
	}
	if class == "" {
		return nil, fmt.Errorf("laraq: a %T UniqueJob needs a PHPClass to name its lock", job)
	}
	display := ""
	d, hasDisplay := job.(DisplayNamer)
	if hasDisplay {
		display = d.DisplayName()
	}
	locks, err := p.conn.locks()
	if err != nil {
		return nil, fmt.Errorf("laraq: %w", err)
	}
	ud := &uniqueDispatch{key: p.release().UniqueLockKey(class, hasDisplay, display, u.UniqueID()), owner: randomString(16), locks: locks}
	got, err := locks.Acquire(ctx, ud.key, ud.owner, ceilSeconds(u.UniqueFor()))
	if err != nil {
		return nil, fmt.Errorf("laraq: %w", err)
	}
	if !got {
		return nil, fmt.Errorf("%w (%s)", ErrUniqueLocked, locks.Key(ud.key))
	}
	return ud, nil
}

// option carries the lock into the payload: the command's uniqueLockOwner (13.24+) and
// the hidden Context (11.39+).
func (ud *uniqueDispatch) option() DispatchOption {
	return func(o *options) error { o.unique = ud; return nil }
}

// undo releases a lock whose job could not be queued.
func (ud *uniqueDispatch) undo(ctx context.Context) {
	if ud != nil {
		_, _ = ud.locks.Release(context.WithoutCancel(ctx), ud.key, ud.owner)
	}
}

// uniqueContext adds the hidden Context PendingDispatch writes for a unique job (11.39+)
// to a built payload, where Queue::createPayloadArray's hooks put it: after the
// envelope's own keys, before RedisQueue's id and attempts.
func (p *Dispatcher) uniqueContext(raw []byte, o *options) ([]byte, error) {
	rel := p.release()
	if o.unique == nil || !rel.writesUniqueContext() {
		return raw, nil
	}
	doc, err := payload.DecodeValue(raw)
	if err != nil {
		return nil, err
	}
	ser := func(s string) payload.Value {
		b, _ := phpser.Encode(phpser.String(s))
		return payload.Value{Kind: payload.KindString, Str: string(b)}
	}
	hidden := payload.Value{Kind: payload.KindArray, Items: []payload.Item{
		{Key: ctxUniqueStore, Value: ser("redis")},
		{Key: ctxUniqueKey, Value: ser(o.unique.key)},
	}}
	if rel.writesLockOwner() {
		hidden.Items = append(hidden.Items, payload.Item{Key: ctxUniqueOwner, Value: ser(o.unique.owner)})
	}
	ctxVal := payload.Value{Kind: payload.KindArray, Items: []payload.Item{
		{Key: "data", Value: payload.Value{Kind: payload.KindArray}},
		{Key: "hidden", Value: hidden},
	}}
	at := len(doc.Items)
	for i, it := range doc.Items {
		if it.Key == "id" {
			at = i
			break
		}
	}
	doc.Items = append(doc.Items[:at], append([]payload.Item{{Key: contextKey, Value: ctxVal}}, doc.Items[at:]...)...)
	return doc.AppendJSON(nil, payload.JSONUnescapedUnicode)
}

// randomString is Str::random(n): n characters of [A-Za-z0-9].
func randomString(n int) string {
	for {
		id := payload.NewID()
		if n <= len(id) {
			return id[:n]
		}
	}
}
