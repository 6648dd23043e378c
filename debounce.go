package laraq

import (
	"context"
	"reflect"
	"strings"

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

// DebounceIDer is implemented by a command type whose PHP class computes its debounce id in
// a debounceId() method, which the Go method mirrors from the same properties.
type DebounceIDer interface {
	DebounceID() string
}

// debounceOwnerMarker opens a debounceOwner property in serialize() output. A command
// whose every occurrence of it holds the empty string (Queueable's default, which
// SerializesModels also leaves out) is not debounced, which spares decoding the commands
// of handlers that never look at them.
const debounceOwnerMarker = `s:13:"debounceOwner";`

func mayBeDebounced(command string) bool {
	for rest := command; ; {
		i := strings.Index(rest, debounceOwnerMarker)
		if i < 0 {
			return false
		}
		rest = rest[i+len(debounceOwnerMarker):]
		if !strings.HasPrefix(rest, `s:0:"";`) {
			return true
		}
	}
}

// debounces: CallQueuedHandler checks debounceOwner from 13.6.0.
func (r Release) debounces() bool { return r.AtLeast(13, 6, 0) }

// debounced is CallQueuedHandler's commandShouldBeDebounced + deleteDebouncedJob: it
// reports whether it dealt with the job (deleted it as superseded, or, when the cache
// could not be read, handled that as the job's exception, as PHP's worker would).
func (c *Worker) debounced(r *run, jr *jobRun) bool {
	if !c.s.release.debounces() || c.s.cacheDisabled || !jr.job.IsObjectJob() || !mayBeDebounced(jr.job.Payload.Command) {
		return false
	}
	cmd, err := jr.job.Value()
	if err != nil {
		return false // the handler reports the decode error
	}
	owner, ok := publicValue(cmd, "debounceOwner")
	if !ok || !owner.Truthy() { // empty($owner)
		return false
	}
	id := c.debounceID(jr, cmd)
	var current rdb.DebounceValue
	_, err = c.retry(r, jr, "reading a debounce owner", func(ctx context.Context) error {
		current = rdb.DebounceValue{}
		for _, name := range debounceNames(jr, cmd) {
			v, err := c.cache.DebounceOwner(ctx, name, id)
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
		c.handleException(r, jr, err, 0)
		return true
	}
	// Fail-open: a token that is gone lets the job run; otherwise `$currentOwner !== $owner`.
	if !current.Set || owner.Kind() == phpser.KindString && current.IsString && current.Str == owner.Str() {
		return false
	}
	c.log.Info("job superseded by a later dispatch of its debounce group; deleted unrun",
		"job", jr.job.Name, "id", jr.job.ID, "debounce_id", id)
	c.deleteReserved(r, jr)
	c.emit(Event{Kind: EventProcessed, Queue: jr.queue, Job: jr.job})
	return true
}

// debounceNames are the job names DebounceLock::getKey may have used: xxh128 of the
// payload's displayName when it differs from the class (the class has displayName());
// otherwise the class, then, in case displayName() returns the class name itself, its
// hash. Only one of them can ever hold a token for a given class.
func debounceNames(jr *jobRun, cmd *phpser.Value) []string {
	class := cmd.Class()
	if class == "" {
		class = jr.job.Class
	}
	display := jr.job.Payload.DisplayName
	if display != "" && display != class {
		return []string{php.XXH128(display)}
	}
	return []string{class, php.XXH128(class)}
}

// debounceID is the debounce id as PHP's getKey builds it into the key.
func (c *Worker) debounceID(jr *jobRun, cmd *phpser.Value) string {
	t := c.jobs.commandType(jr.job.Class)
	if t != nil && reflect.PointerTo(t).Implements(reflect.TypeFor[DebounceIDer]()) {
		v := reflect.New(t)
		if err := jr.job.Bind(v.Interface()); err == nil {
			return v.Interface().(DebounceIDer).DebounceID()
		}
	}
	v, ok := publicValue(cmd, "debounceId")
	if !ok && t != nil {
		v, ok = classDefault(t, "debounceId")
	}
	if !ok {
		return ""
	}
	s, _ := v.StringCast() // an array is "Array", as concatenation makes it
	return s
}
