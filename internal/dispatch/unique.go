package dispatch

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/laraq/laraq/internal/job"
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

// ErrUniqueLocked is Dispatch's error for a UniqueJob whose lock is held by an earlier
// dispatch: as with PendingDispatch (UniqueJobSkipped), nothing was queued.
var ErrUniqueLocked = errors.New("laraq: a job with the same unique lock is queued or running; not dispatched")

// Hidden Context keys of a unique job's lock (11.x+ PendingDispatch).
const (
	ctxUniqueStore = "laravel_unique_job_cache_store"
	ctxUniqueKey   = "laravel_unique_job_key"
	ctxUniqueOwner = "laravel_unique_job_lock_owner"
)

// WritesLockOwner says whether UniqueLock::acquire() records the owner in the command's
// uniqueLockOwner and release() compares it (13.24+).
func WritesLockOwner(r job.Release) bool { return r.AtLeast(13, 24, 0) }

// writesUniqueContext says whether PendingDispatch puts the lock into hidden Context.
func writesUniqueContext(r job.Release) bool { return r.AtLeast(11, 39, 0) }

// uniqueDispatch is a unique job's lock taken by Dispatch.
type uniqueDispatch struct {
	key, owner string
	locks      rdb.UniqueLocks
}

// uniqueSpec is what UniqueLock::acquire() reads of a unique job: its class (get_class),
// whether it has displayName() and what that returns, its uniqueId, and its uniqueFor.
type uniqueSpec struct {
	class      string
	hasDisplay bool
	display    string
	id         string
	uniqueFor  time.Duration
}

// uniqueOf is the lock a job takes as PendingDispatch::shouldDispatch() does: a Go
// UniqueJob's, or, with the classes' facts, a ShouldBeUnique class's given as a
// *phpser.Value (see classUnique); nil for other jobs. The UniqueID and UniqueFor options
// stand for methods PHP would call; given for a job that does not need them, they are
// an error rather than a lock under another name than PHP's.
func (p *Dispatcher) uniqueOf(v any, o *Options) (*uniqueSpec, error) {
	if val, ok := v.(*phpser.Value); ok && p.cfg.Classes != nil {
		return p.classUnique(val, o)
	}
	u, ok := v.(job.UniqueJob)
	if !ok {
		if o.UniqueID != nil || o.UniqueFor != nil {
			return nil, fmt.Errorf("laraq: UniqueID or UniqueFor given for %s, which is not a unique job", jobClass(v))
		}
		return nil, nil
	}
	if o.UniqueID != nil || o.UniqueFor != nil {
		return nil, fmt.Errorf("laraq: UniqueID or UniqueFor given for %s, whose Go type's UniqueID and UniqueFor name its lock", jobClass(v))
	}
	class := ""
	if c, isCmd := v.(job.Command); isCmd {
		class = c.PHPClass()
	}
	if class == "" {
		return nil, fmt.Errorf("laraq: a %T UniqueJob needs a PHPClass to name its lock", v)
	}
	s := &uniqueSpec{class: class, id: u.UniqueID(), uniqueFor: u.UniqueFor()}
	if d, hasDisplay := v.(job.DisplayNamer); hasDisplay {
		s.hasDisplay, s.display = true, d.DisplayName()
	}
	return s, nil
}

// acquireUnique takes a unique job's lock as UniqueLock::acquire() does, with an owner as
// RedisLock makes one (Str::random(16)): the key the release names for the class, its
// displayName (when it has that method) and its uniqueId, for uniqueFor (0: until
// released). It returns nil for a nil spec.
func (p *Dispatcher) acquireUnique(ctx context.Context, s *uniqueSpec) (*uniqueDispatch, error) {
	if s == nil {
		return nil, nil
	}
	if rel := p.release(); !rel.AtLeast(8, 0, 0) {
		// No release before 8.0 knows ShouldBeUnique: its workers would never release
		// the lock, and every later dispatch would be refused until it expired.
		return nil, fmt.Errorf("laraq: %s is a unique job, but Laravel %s has no unique jobs (ShouldBeUnique is 8.x)", s.class, rel)
	}
	locks, err := p.cfg.Locks()
	if err != nil {
		return nil, fmt.Errorf("laraq: %w", err)
	}
	ud := &uniqueDispatch{key: p.release().UniqueLockKey(s.class, s.hasDisplay, s.display, s.id), owner: randomString(16), locks: locks}
	got, err := locks.Acquire(ctx, ud.key, ud.owner, rdb.Seconds(s.uniqueFor))
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
func (ud *uniqueDispatch) option() Option {
	return func(o *Options) error { o.unique = ud; return nil }
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
func (p *Dispatcher) uniqueContext(raw []byte, o *Options) ([]byte, error) {
	rel := p.release()
	if o.unique == nil || !writesUniqueContext(rel) {
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
	if WritesLockOwner(rel) {
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
	doc.Items = append(doc.Items[:at], append([]payload.Item{{Key: job.LogContextKey, Value: ctxVal}}, doc.Items[at:]...)...)
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

// HiddenUniqueLock reads the lock key and owner PendingDispatch put into the payload's
// hidden Context (serialized PHP strings).
func HiddenUniqueLock(env *payload.Envelope) (key, owner string, ok bool) {
	raw, found := env.Get(job.LogContextKey)
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
