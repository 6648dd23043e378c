package worker

import (
	"context"
	"reflect"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/phpser"
)

// Debounced jobs (Laravel 13.6+). A job class with #[DebounceFor(seconds)] is delayed on
// dispatch, and each dispatch puts a fresh random owner token in the cache under
// laravel_debounced_job:{name}:{debounceId} (DebounceLock), copying it into the job's
// debounceOwner property. When a job runs, CallQueuedHandler compares the two: a job
// whose token is no longer the cached one was superseded by a later dispatch and is
// deleted without running (JobDebounced, then JobProcessed). A missing token (evicted,
// expired) lets the job run. The name is the command class, or xxh128 of its
// displayName() when the class has that method; the id is its debounceId() method, else
// its public debounceId property, else "".
//
// A laraq worker of 13.6+ does the same before calling the handler. What it cannot see
// of the PHP class it reads from the payload (the displayName) or from the registered Go
// type: a type whose PHP class has a debounceId() method implements DebounceIDer, and a
// debounceId property left out of the payload because it holds its declared default
// needs that default in the type's php tag. A class with debounceVia() (another cache
// store) is not supported: the connection's cache store is read.

// debouncer finds the jobs a later dispatch of their debounce group superseded.
type debouncer struct {
	base
	jobs *job.Jobs
}

// debounceOwnerMarker opens a debounceOwner property in serialize() output. A command
// whose every occurrence of it holds the empty string (Queueable's default, which
// SerializesModels also leaves out) is not debounced, which spares decoding the commands
// of handlers that never look at them.
const debounceOwnerMarker = `s:13:"debounceOwner";`

func mayBeDebounced(command string) bool { return job.MayHold(command, debounceOwnerMarker, `s:0:"";`) }

// debounces: CallQueuedHandler checks debounceOwner from 13.6.0.
func debounces(r job.Release) bool { return r.AtLeast(13, 6, 0) }

// superseded is CallQueuedHandler's commandShouldBeDebounced: it reports whether a later
// dispatch of the job's debounce group superseded it (PHP then deletes it unrun). An
// error is a cache that could not be read, which PHP's worker handles as the job's
// exception.
func (c *debouncer) superseded(ctx context.Context, a *attempt) (bool, error) {
	if !debounces(c.cfg.Release) || c.cfg.CacheDisabled || !a.job.IsObjectJob() || !mayBeDebounced(a.job.Payload.Command) {
		return false, nil
	}
	cmd, err := a.job.Value()
	if err != nil {
		return false, nil // the handler reports the decode error
	}
	owner, ok := cmd.Visible("debounceOwner")
	if !ok || !owner.Truthy() { // empty($owner)
		return false, nil
	}
	id := c.debounceID(a, cmd)
	var current rdb.DebounceValue
	_, err = c.retry(ctx, a, "reading a debounce owner", func(ctx context.Context) error {
		current = rdb.DebounceValue{}
		for _, name := range debounceNames(a, cmd) {
			v, err := c.cfg.Signals.DebounceOwner(ctx, name, id)
			if err != nil {
				return err
			}
			if v.Set {
				current = v
				return nil
			}
		}
		return nil
	})
	if err != nil {
		return false, err
	}
	// Fail-open: a token that is gone lets the job run; otherwise `$currentOwner !== $owner`.
	if !current.Set || owner.Kind() == phpser.KindString && current.IsString && current.Str == owner.Str() {
		return false, nil
	}
	c.log.Info("job superseded by a later dispatch of its debounce group; deleted unrun",
		"job", a.job.Name, "id", a.job.ID, "debounce_id", id)
	return true, nil
}

// debounceNames are the job names DebounceLock::getKey may have used: xxh128 of the
// payload's displayName when it differs from the class (the class has displayName());
// otherwise the class, then, in case displayName() returns the class name itself, its
// hash. Only one of them can ever hold a token for a given class.
func debounceNames(a *attempt, cmd *phpser.Value) []string {
	class := cmd.Class()
	if class == "" {
		class = a.job.Class
	}
	display := a.job.Payload.DisplayName
	if display != "" && display != class {
		return []string{php.XXH128(display)}
	}
	return []string{class, php.XXH128(class)}
}

// debounceID is the debounce id as PHP's getKey builds it into the key.
func (c *debouncer) debounceID(a *attempt, cmd *phpser.Value) string {
	t := job.CommandType(c.jobs, a.job.Class)
	if t != nil && reflect.PointerTo(t).Implements(reflect.TypeFor[job.DebounceIDer]()) {
		v := reflect.New(t)
		if err := a.job.Bind(v.Interface()); err == nil {
			return v.Interface().(job.DebounceIDer).DebounceID()
		}
	}
	v, ok := cmd.Visible("debounceId")
	if !ok && t != nil {
		v, ok = classDefault(t, "debounceId")
	}
	if !ok {
		return ""
	}
	s, _ := v.StringCast() // an array is "Array", as concatenation makes it
	return s
}
