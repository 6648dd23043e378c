package laraq

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/phpser"
)

// Missing models. A PHP worker restores a SerializesModels job's Eloquent models while it
// unserializes the command, before handle(); a model that is gone throws
// ModelNotFoundException there, and CallQueuedHandler::handleModelNotFound deletes the job
// (deleteWhenMissingModels) or fails it at once, without retry and without continuing
// its chain. A Go worker does not load models (phpser.ModelIdentifier carries class and
// key): the handler does, and tells the worker a model is missing by returning a
// *ModelNotFound (MissingModel). The worker then decides as the application's release
// does:
//
//   - 13.0+: the payload's top-level deleteWhenMissingModels flag, written at dispatch
//     from the class's property or #[DeleteWhenMissingModels] attribute;
//   - 12.x: the default of the command class's deleteWhenMissingModels property (or, from
//     11.3, the attribute), which laraq reads from the registered Go type's php tag
//     (`php:"deleteWhenMissingModels,default=true"`; declare it there for the attribute
//     too);
//   - up to 11.x: the same, but PHP reflects the class named by the payload's displayName,
//     so a job with a displayName() of its own is never deleted.
//
// Without a typed registration (HandleFunc, Fallback) there is no class default to read
// and the job is failed, as PHP does for a class without the property.

// ModelNotFoundClass is Eloquent's exception for a model that could not be loaded.
const ModelNotFoundClass = `Illuminate\Database\Eloquent\ModelNotFoundException`

// ModelNotFound is Eloquent's ModelNotFoundException: a handler returns it (or an error
// wrapping it) when a model of its command no longer exists. Its message is Laravel's,
// "No query results for model [App\Models\User]." or, with IDs, "... [App\Models\User] 1, 2".
type ModelNotFound struct {
	Model string // the model class, e.g. App\Models\User
	IDs   []any  // the keys looked for; SerializesModels' restore names none
}

// ErrModelNotFound matches every *ModelNotFound with errors.Is. Returned as is, it fails
// or deletes the job like a ModelNotFound naming no model.
var ErrModelNotFound error = &ModelNotFound{}

// MissingModel is the error a handler returns when the model m stands for no longer
// exists, as SerializesModels' restore throws it (firstOrFail: the class, no keys).
func MissingModel(m phpser.ModelIdentifier) *ModelNotFound { return &ModelNotFound{Model: m.Class} }

// Error is ModelNotFoundException::setModel's message.
func (e *ModelNotFound) Error() string {
	msg := "No query results for model [" + e.Model + "]"
	if len(e.IDs) == 0 {
		return msg + "."
	}
	ids := make([]string, len(e.IDs))
	for i, id := range e.IDs {
		ids[i] = phpKeyString(id)
	}
	return msg + " " + strings.Join(ids, ", ")
}

// Is makes errors.Is(err, ErrModelNotFound) true for any *ModelNotFound.
func (e *ModelNotFound) Is(target error) bool { return target == ErrModelNotFound }

// PHPClass names the exception in failed_jobs rows.
func (e *ModelNotFound) PHPClass() string { return ModelNotFoundClass }

// phpKeyString is PHP's string conversion of a model key, as implode() writes it.
func phpKeyString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case bool:
		if x {
			return "1"
		}
		return ""
	case float64:
		return php.FloatString(x)
	case float32:
		return php.FloatString(float64(x))
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// missingModel is CallQueuedHandler::handleModelNotFound for a handler that returned a
// *ModelNotFound: delete the job or fail it with the exception, then JobProcessed (the
// handler returned normally in PHP's terms: call() caught the exception). Neither retries
// nor continues the chain.
func (c *Worker) missingModel(r *run, jr *jobRun, err error, runtime time.Duration) {
	del, cause := c.deleteWhenMissingModels(jr)
	if del {
		c.log.Info("a model of the job is missing; deleted (deleteWhenMissingModels)", "job", jr.job.Name, "id", jr.job.ID, "err", err)
		c.deleteReserved(r, jr)
	} else {
		if cause == nil {
			cause = modelNotFoundCause(err)
		}
		c.fail(r, jr, cause, runtime)
	}
	c.emit(Event{Kind: EventProcessed, Queue: jr.queue, Job: jr.job, Runtime: runtime})
}

// modelNotFoundCause is what the failed row records: the exception PHP fails the job with
// (the ModelNotFoundException itself, not whatever wraps it in Go), located at the
// handler.
func modelNotFoundCause(err error) error {
	var mnf *ModelNotFound
	if !errors.As(err, &mnf) {
		return err
	}
	var he *handlerError
	if errors.As(err, &he) {
		return &handlerError{err: mnf, at: he.at}
	}
	return mnf
}

// ReflectionExceptionClass is PHP's exception for a class that cannot be reflected.
const ReflectionExceptionClass = "ReflectionException"

// deleteWhenMissingModels decides as handleModelNotFound does in the worker's release.
// cause, when not nil, replaces the handler's error in the failed row.
func (c *Worker) deleteWhenMissingModels(jr *jobRun) (del bool, cause error) {
	env := jr.job.Payload
	rel := c.s.release
	if rel.missingModelsFromPayload() {
		raw, ok := env.Get("deleteWhenMissingModels")
		return ok && jsonTruthy(raw), nil
	}
	class := jr.job.Class
	if !rel.missingModelsByCommandClass() && jr.job.Name != class {
		// ReflectionClass(resolveName()) of a display name that is no class throws; the
		// job is failed, up to 10.0.0 with the ReflectionException itself (the catch
		// reused $e), with PHP 8's message.
		if !rel.AtLeast(10, 0, 1) {
			return false, failed.New(ReflectionExceptionClass, `Class "`+jr.job.Name+`" does not exist`, 0)
		}
		return false, nil
	}
	t := c.jobs.commandType(class)
	if t == nil {
		return false, nil
	}
	def, ok := classDefault(t, "deleteWhenMissingModels")
	return ok && def.Truthy(), nil
}

// classDefault is the declared default of a public property of the registered command
// type (its php tag's default=), what ReflectionClass::getDefaultProperties() gives.
func classDefault(t reflect.Type, name string) (*phpser.Value, bool) {
	defs, err := phpser.Defaults(reflect.New(t).Interface())
	if err != nil {
		return nil, false
	}
	return publicValue(defs, name)
}

// publicValue is a public property of a command object, null counting as absent: what
// `$command->name ?? …` finds from outside the class.
func publicValue(cmd *phpser.Value, name string) (*phpser.Value, bool) {
	for _, e := range cmd.Entries() {
		if e.Key.IsInt() {
			continue
		}
		n, vis, _ := e.Key.Name()
		if n != name || vis != phpser.Public {
			continue
		}
		v := e.Value.Deref()
		if v == nil || v.IsNull() {
			return nil, false
		}
		return v, true
	}
	return nil, false
}

// jsonTruthy is PHP's truthiness of a value of json_decode($payload, true): null, false,
// 0, 0.0, "", "0" and an empty array or object are false.
func jsonTruthy(raw []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return false
	}
	switch x := v.(type) {
	case nil:
		return false
	case bool:
		return x
	case string:
		return x != "" && x != "0"
	case json.Number:
		f, err := x.Float64()
		return err != nil || f != 0
	case []any:
		return len(x) > 0
	case map[string]any:
		return len(x) > 0
	}
	return true
}

// missingModelsFromPayload: from 13.0 handleModelNotFound reads the payload's
// deleteWhenMissingModels flag instead of the class.
func (r Release) missingModelsFromPayload() bool { return r.AtLeast(13, 0, 0) }

// missingModelsByCommandClass: 12.0 reflects the queued class (Job::resolveQueuedJobClass,
// data.commandName); before, the class named by the display name.
func (r Release) missingModelsByCommandClass() bool { return r.AtLeast(12, 0, 0) }

// commandType returns the command type registered for class (following aliases), nil for
// an untyped registration (HandleFunc, Fallback) or a type that is no struct.
func (j *Jobs) commandType(class string) reflect.Type {
	if _, _, ok := j.lookup(class); !ok {
		return nil
	}
	return j.typeOf(class)
}
