package handlers

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"github.com/laraq/laraq/payload"
)

// Handler runs one job. The error it returns decides what happens to the job (see
// OutcomeOf): nil deletes it, Release, Fail and Delete are explicit decisions, any other
// error is retried by Laravel's rules.
type Handler interface {
	Handle(ctx context.Context, job *Job) error
}

// HandlerFunc adapts a function to Handler.
type HandlerFunc func(ctx context.Context, job *Job) error

// Handle calls f.
func (f HandlerFunc) Handle(ctx context.Context, job *Job) error { return f(ctx, job) }

// maxAliasHops bounds how many renames Lookup follows (old → newer → newest).
const maxAliasHops = 8

// Registry maps PHP job class names to Go handlers, exact match only: the class is
// data.commandName for object jobs and the whole job string ("App\Jobs\Report@build")
// for string jobs (see ClassOf). It is safe for concurrent use; registering is meant for
// program start, before a worker runs.
//
// Registering the same class twice, an empty class or a nil handler is a programming
// error and panics, as http.ServeMux does.
type Registry struct {
	mu       sync.RWMutex
	handlers map[string]Handler
	aliases  map[string]string
	fallback Handler
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{handlers: map[string]Handler{}, aliases: map[string]string{}}
}

// Handle registers h for jobs of class (a PHP class name such as `App\Jobs\SendInvoice`,
// or a string job's `Class@method`).
func (r *Registry) Handle(class string, h Handler) {
	if class == "" {
		panic("handlers: Handle with an empty class name")
	}
	if h == nil {
		panic("handlers: Handle(" + class + ") with a nil handler")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.handlers[class]; dup {
		panic("handlers: a handler for " + class + " is already registered")
	}
	if _, dup := r.aliases[class]; dup {
		panic("handlers: " + class + " is already an alias")
	}
	r.handlers[class] = h
}

// HandleFunc registers f for jobs of class.
func (r *Registry) HandleFunc(class string, f func(ctx context.Context, job *Job) error) {
	if f == nil {
		panic("handlers: HandleFunc(" + class + ") with a nil function")
	}
	r.Handle(class, HandlerFunc(f))
}

// Register registers fn for jobs of class with the command decoded into a fresh *T
// before each call: for object jobs data.command is unserialized into T with phpser
// (fields tagged `php:"name"`, whatever the PHP visibility), for string jobs the JSON
// data is decoded with encoding/json. A command that does not decode fails the job at
// once with a *DecodeError (no retry can fix it).
func Register[T any](r *Registry, class string, fn func(ctx context.Context, cmd *T, job *Job) error) {
	if fn == nil {
		panic("handlers: Register(" + class + ") with a nil function")
	}
	r.Handle(class, HandlerFunc(func(ctx context.Context, job *Job) error {
		cmd := new(T)
		if err := job.Bind(cmd); err != nil {
			return err
		}
		return fn(ctx, cmd, job)
	}))
}

// Alias routes jobs of oldClass to the handler of newClass, for PHP classes that were
// renamed while jobs with the old name are still queued. Aliases may chain
// (a → b → c); the target needs no handler yet when the alias is made.
func (r *Registry) Alias(oldClass, newClass string) {
	if oldClass == "" || newClass == "" {
		panic("handlers: Alias with an empty class name")
	}
	if oldClass == newClass {
		panic("handlers: Alias of " + oldClass + " to itself")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.handlers[oldClass]; dup {
		panic("handlers: " + oldClass + " already has a handler; it cannot be an alias")
	}
	if _, dup := r.aliases[oldClass]; dup {
		panic("handlers: " + oldClass + " is already an alias")
	}
	// Refuse a cycle now rather than loop at lookup time.
	for c, n := newClass, 0; n <= maxAliasHops; n++ {
		next, ok := r.aliases[c]
		if !ok {
			break
		}
		if next == oldClass {
			panic(fmt.Sprintf("handlers: Alias(%s, %s) would make a cycle", oldClass, newClass))
		}
		c = next
	}
	r.aliases[oldClass] = newClass
}

// Fallback sets the handler of every job whose class has no handler of its own, the
// way `laraq work --forward` sends every job to one HTTP service. Without a fallback such
// jobs follow the worker's policy for unhandled jobs. It is not a pattern: exact
// registrations always win.
func (r *Registry) Fallback(h Handler) {
	if h == nil {
		panic("handlers: Fallback with a nil handler")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fallback != nil {
		panic("handlers: a fallback handler is already set")
	}
	r.fallback = h
}

// FallbackClass is the name Lookup reports for the fallback handler.
const FallbackClass = "*"

// Lookup returns the handler for class, following aliases, and the class it was
// registered under (FallbackClass for the fallback handler).
func (r *Registry) Lookup(class string) (h Handler, registeredAs string, ok bool) {
	if r == nil {
		return nil, "", false
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	for n := 0; n <= maxAliasHops; n++ {
		if h, ok := r.handlers[class]; ok {
			return h, class, true
		}
		next, ok := r.aliases[class]
		if !ok {
			break
		}
		class = next
	}
	if r.fallback != nil {
		return r.fallback, FallbackClass, true
	}
	return nil, "", false
}

// Classes returns the registered class names (not aliases), sorted.
func (r *Registry) Classes() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]string, 0, len(r.handlers))
	for c := range r.handlers {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Len returns the number of registered handlers.
func (r *Registry) Len() int {
	if r == nil {
		return 0
	}
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.handlers)
}

// ClassOf returns the name a job is routed by: data.commandName for an object job
// (dispatch(new X)), else the job string as given ("App\Jobs\Report@build"; PHP's
// worker calls method "fire" when there is no "@"). For object jobs whose commandName is
// missing it falls back to the class in the serialized command's `O:n:"Class"` head.
func ClassOf(env *payload.Envelope) string {
	if env.IsObjectJob() {
		if env.CommandName != "" {
			return env.CommandName
		}
		if c := serializedClass(env.Command); c != "" {
			return c
		}
	}
	return env.Job
}

// serializedClass reads the class of an `O:<len>:"<class>":` head without decoding the
// rest, as `queue:failed` does to show a class.
func serializedClass(s string) string {
	if len(s) < 4 || s[0] != 'O' || s[1] != ':' {
		return ""
	}
	i, n := 2, 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<20 {
		n = n*10 + int(s[i]-'0')
		i++
	}
	if i+2+n >= len(s) || s[i] != ':' || s[i+1] != '"' || s[i+2+n] != '"' {
		return ""
	}
	return s[i+2 : i+2+n]
}
