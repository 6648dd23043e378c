package worker

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/job"
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

// modelNotFoundCause is what the failed row records: the exception PHP fails the job with
// (the ModelNotFoundException itself, not whatever wraps it in Go), located at the
// handler.
func modelNotFoundCause(err error) error {
	var mnf *job.ModelNotFound
	if !errors.As(err, &mnf) {
		return err
	}
	var he *job.HandlerError
	if errors.As(err, &he) {
		return &job.HandlerError{Err: mnf, At: he.At}
	}
	return mnf
}

// ReflectionExceptionClass is PHP's exception for a class that cannot be reflected.
const ReflectionExceptionClass = "ReflectionException"

// models decides what becomes of a job one of whose models is missing.
type models struct {
	base
	jobs *job.Jobs
}

// deleteWhenMissing decides as handleModelNotFound does in the worker's release.
// cause, when not nil, replaces the handler's error in the failed row.
func (c *models) deleteWhenMissing(a *attempt) (del bool, cause error) {
	env := a.job.Payload
	rel := c.cfg.Release
	if rel.AtLeast(13, 0, 0) { // from 13.0 handleModelNotFound reads the payload's flag
		raw, ok := env.Get("deleteWhenMissingModels")
		return ok && jsonTruthy(raw), nil
	}
	class := a.job.Class
	// 12.0 reflects the queued class (Job::resolveQueuedJobClass, data.commandName);
	// before, the class named by the display name.
	if !rel.AtLeast(12, 0, 0) && a.job.Name != class {
		// ReflectionClass(resolveName()) of a display name that is no class throws; the
		// job is failed, up to 10.0.0 with the ReflectionException itself (the catch
		// reused $e), with PHP 8's message.
		if !rel.AtLeast(10, 0, 1) {
			return false, failed.New(ReflectionExceptionClass, `Class "`+a.job.Name+`" does not exist`, 0)
		}
		return false, nil
	}
	t := job.CommandType(c.jobs, class)
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
	return defs.Visible(name)
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
