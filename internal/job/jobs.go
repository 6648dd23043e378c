package job

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"sync"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/phpser"
)

// HandlerFunc runs one attempt of a job; the error it returns decides the outcome (see
// Outcome: nil deletes, Release/Fail/Delete decide, others retry).
type HandlerFunc func(ctx context.Context, job *JobInfo) error

// maxAliasHops bounds how many renames a lookup follows (old → newer → newest).
const maxAliasHops = 8

// FallbackClass is the class a fallback handler is reported under.
const FallbackClass = "*"

// Jobs routes jobs to Go handlers by their PHP class, exact match only: data.commandName
// for object jobs, the whole job string ("App\Jobs\Report@build") for string jobs (see
// ClassOf). It is safe for concurrent use; register handlers at program start, before a
// worker runs.
//
// Registering a class twice, an empty class or a nil function is a programming error and
// panics, as http.ServeMux does.
type Jobs struct {
	mu       sync.RWMutex
	handlers map[string]HandlerFunc
	aliases  map[string]string
	fallback HandlerFunc
	// types are the Go types standing for PHP classes (Handle, HandleClass, Declare):
	// their tags give the class defaults a 9.4+ payload leaves out.
	types map[string]reflect.Type
	// unknownNext are the classes a chain continued into without a Go type, logged once.
	unknownNext sync.Map
	traits      map[string]*Traits // what each class's Go type says
	// middleware are the registrations' own middleware (WithMiddleware), by the class
	// they were registered under (FallbackClass for the fallback).
	middleware map[string][]Middleware
}

// HandleOption configures one registration (Handle, HandleClass, HandleFunc, Fallback).
type HandleOption func(*handleOptions)

type handleOptions struct {
	middleware []Middleware
}

// WithMiddleware runs ms around the handler of this registration, in order, after the
// worker's middleware and before the command type's own (MiddlewareMethod) and those
// ->through() put in the payload.
func WithMiddleware(ms ...Middleware) HandleOption {
	return func(o *handleOptions) { o.middleware = append(o.middleware, ms...) }
}

// setOptions records a registration's options under the class it is registered as.
func (j *Jobs) setOptions(class string, opts []HandleOption) {
	if len(opts) == 0 {
		return
	}
	var o handleOptions
	for _, opt := range opts {
		if opt != nil {
			opt(&o)
		}
	}
	for _, m := range o.middleware {
		if m == nil {
			panic("laraq: a nil middleware for " + class)
		}
	}
	if len(o.middleware) == 0 {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.middleware == nil {
		j.middleware = map[string][]Middleware{}
	}
	if _, dup := j.middleware[class]; !dup { // a second registration panics in add
		j.middleware[class] = o.middleware
	}
}

// NewJobs returns an empty set of handlers.
func NewJobs() *Jobs {
	return &Jobs{handlers: map[string]HandlerFunc{}, aliases: map[string]string{}, types: map[string]reflect.Type{}}
}

// Handle registers fn for the jobs of T's PHP class (T's PHPClass). Before each attempt
// the command is decoded into a fresh T (see JobInfo.Bind), each property the payload
// leaves out at the default its field declares (`php:"tries,default=3"`: Laravel 9.4+
// SerializesModels writes only what differs from the class defaults); a command that does
// not decode fails the job at once with a *DecodeError. T is also declared as the class's
// Go type (see Declare).
//
//	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[SendInvoice]) error {
//		return billing.Send(ctx, job.Command.InvoiceID)
//	})
func Handle[T Command](jobs *Jobs, fn func(ctx context.Context, job *Job[T]) error, opts ...HandleOption) {
	var zero T
	HandleClass(jobs, zero.PHPClass(), fn, opts...)
}

// Declare tells jobs that T stands for the PHP class T.PHPClass() without handling its
// jobs here, so that what laraq derives from the class is right even for a class PHP
// workers run: a Go worker continuing a chain into that class takes the next job's
// metadata (tries, backoff, timeout, ...) from T's class defaults (`php:"tries,default=3"`,
// which a 9.4+ SerializesModels payload leaves out) and its TriesMethod, BackoffMethod,
// RetryUntilMethod and AttributedJob methods, as PHP's dispatch would; and
// JobInfo.Unserialized fills in T's defaults. Handle and HandleClass declare their type
// themselves. Declaring a class twice with different types panics.
func Declare[T Command](jobs *Jobs) {
	var zero T
	jobs.declare(zero.PHPClass(), reflect.TypeFor[T](), true)
}

// declare records t as the Go type of class: a struct (or pointer to one), with a
// PHPClass method for Declare (strict). Other types (string jobs' data, *phpser.Value)
// are not recorded.
func (j *Jobs) declare(class string, t reflect.Type, strict bool) {
	st := t
	for st.Kind() == reflect.Pointer {
		st = st.Elem()
	}
	hasClass := st.Implements(commandType) || reflect.PointerTo(st).Implements(commandType)
	if class == "" || strings.Contains(class, "@") || st.Kind() != reflect.Struct || st == valueType || strict && !hasClass {
		if strict {
			panic("laraq: Declare needs a struct type with a PHPClass method, not " + t.String())
		}
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if old, ok := j.types[class]; ok && old != st {
		if strict {
			panic(fmt.Sprintf("laraq: %s is already declared as %v", class, old))
		}
		return
	}
	j.types[class] = st
}

var (
	commandType = reflect.TypeFor[Command]()
	valueType   = reflect.TypeFor[phpser.Value]()
)

// typeOf returns the Go type declared for class, following aliases, or nil.
func (j *Jobs) typeOf(class string) reflect.Type {
	if j == nil {
		return nil
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	for n := 0; n <= maxAliasHops; n++ {
		if t, ok := j.types[class]; ok {
			return t
		}
		next, ok := j.aliases[class]
		if !ok {
			break
		}
		class = next
	}
	return nil
}

// HandleClass registers fn for the jobs of class, a PHP class name or a string job's
// "Class@method", with the command (or a string job's JSON data) decoded into T: for
// types without a PHPClass method, for string jobs, or T = *phpser.Value for the command
// as PHP values. A T with a PHPClass method is declared as class's Go type (see Declare).
func HandleClass[T any](jobs *Jobs, class string, fn func(ctx context.Context, job *Job[T]) error, opts ...HandleOption) {
	if fn == nil {
		panic("laraq: HandleClass(" + class + ") with a nil function")
	}
	at := funcFrame(fn)
	jobs.declare(class, reflect.TypeFor[T](), false)
	defer jobs.noteTraits(class, traitsOf[T]())
	defer jobs.setOptions(class, opts)
	jobs.add(class, func(ctx context.Context, info *JobInfo) error {
		info.jobs = jobs
		job := &Job[T]{JobInfo: info}
		if err := bindCommand(info, &job.Command); err != nil {
			return err
		}
		if err := fn(ctx, job); err != nil {
			return &HandlerError{Err: err, At: at}
		}
		return nil
	})
}

// HandlerError is an error a handler returned, with the handler's location: Go errors
// carry none, and the failed_jobs row should point at the handler, not at laraq.
type HandlerError struct {
	Err error
	At  failed.Frame
}

func (e *HandlerError) Error() string { return e.Err.Error() }
func (e *HandlerError) Unwrap() error { return e.Err }

// funcFrame is where fn is defined: its file, first line and name.
func funcFrame(fn any) failed.Frame {
	f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer())
	if f == nil {
		return failed.Frame{}
	}
	file, line := f.FileLine(f.Entry())
	return failed.Frame{File: file, Line: line, Function: f.Name()}
}

// bindCommand decodes the command into dst; a *phpser.Value destination takes the decoded
// value itself.
func bindCommand[T any](info *JobInfo, dst *T) error {
	if v, ok := any(dst).(**phpser.Value); ok && info.IsObjectJob() {
		var err error
		*v, err = info.Value()
		return err
	}
	return info.Bind(dst)
}

func (j *Jobs) add(class string, h HandlerFunc) {
	if class == "" {
		panic("laraq: a handler for an empty class name (does PHPClass return a constant?)")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, dup := j.handlers[class]; dup {
		panic("laraq: a handler for " + class + " is already registered")
	}
	if _, dup := j.aliases[class]; dup {
		panic("laraq: " + class + " is already an alias")
	}
	j.handlers[class] = h
}

// HandleFunc registers fn for the jobs of class as they are, without decoding their
// command: read it with job.Value or job.Bind, or forward job.Raw.
func (j *Jobs) HandleFunc(class string, fn func(ctx context.Context, job *JobInfo) error, opts ...HandleOption) {
	if fn == nil {
		panic("laraq: HandleFunc(" + class + ") with a nil function")
	}
	at := funcFrame(fn)
	defer j.setOptions(class, opts)
	j.add(class, func(ctx context.Context, info *JobInfo) error {
		info.jobs = j
		if err := fn(ctx, info); err != nil {
			return &HandlerError{Err: err, At: at}
		}
		return nil
	})
}

// Alias routes jobs of oldClass to the handler of newClass, for PHP classes renamed
// while jobs with the old name are still queued. Aliases may chain (a → b → c); the
// target needs no handler yet.
func (j *Jobs) Alias(oldClass, newClass string) {
	if oldClass == "" || newClass == "" {
		panic("laraq: Alias with an empty class name")
	}
	if oldClass == newClass {
		panic("laraq: Alias of " + oldClass + " to itself")
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, dup := j.handlers[oldClass]; dup {
		panic("laraq: " + oldClass + " already has a handler; it cannot be an alias")
	}
	if _, dup := j.aliases[oldClass]; dup {
		panic("laraq: " + oldClass + " is already an alias")
	}
	for c, n := newClass, 0; n <= maxAliasHops; n++ {
		next, ok := j.aliases[c]
		if !ok {
			break
		}
		if next == oldClass {
			panic(fmt.Sprintf("laraq: Alias(%s, %s) would make a cycle", oldClass, newClass))
		}
		c = next
	}
	j.aliases[oldClass] = newClass
}

// Fallback handles every job whose class has no handler of its own, the way
// `laraq work --forward` sends every job to an HTTP service; without one, such jobs follow
// the worker's Unhandled policy. Exact registrations always win.
func (j *Jobs) Fallback(fn func(ctx context.Context, job *JobInfo) error, opts ...HandleOption) {
	if fn == nil {
		panic("laraq: Fallback with a nil function")
	}
	defer j.setOptions(FallbackClass, opts)
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.fallback != nil {
		panic("laraq: a fallback handler is already set")
	}
	j.fallback = func(ctx context.Context, info *JobInfo) error {
		info.jobs = j
		return fn(ctx, info)
	}
}

// Lookup returns the handler of class in j, following aliases, and the class it was
// registered under (FallbackClass for the fallback).
func Lookup(j *Jobs, class string) (h HandlerFunc, registeredAs string, ok bool) {
	if j == nil {
		return nil, "", false
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	return j.lookup(class)
}

// LookupWithMiddleware is Lookup with the registration's own middleware (WithMiddleware),
// under one read lock: what a worker asks for every job.
func LookupWithMiddleware(j *Jobs, class string) (h HandlerFunc, middleware []Middleware, ok bool) {
	if j == nil {
		return nil, nil, false
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	h, as, ok := j.lookup(class)
	return h, j.middleware[as], ok
}

// lookup is Lookup under j.mu.
func (j *Jobs) lookup(class string) (h HandlerFunc, registeredAs string, ok bool) {
	for n := 0; n <= maxAliasHops; n++ {
		if h, ok := j.handlers[class]; ok {
			return h, class, true
		}
		next, ok := j.aliases[class]
		if !ok {
			break
		}
		class = next
	}
	if j.fallback != nil {
		return j.fallback, FallbackClass, true
	}
	return nil, "", false
}

// Handles reports whether a job of class would reach a handler (its own, through
// aliases, or the fallback), and the class it was registered under.
func (j *Jobs) Handles(class string) (registeredAs string, ok bool) {
	_, registeredAs, ok = Lookup(j, class)
	return registeredAs, ok
}

// Classes returns the registered class names (not aliases), sorted.
func (j *Jobs) Classes() []string {
	if j == nil {
		return nil
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	out := make([]string, 0, len(j.handlers))
	for c := range j.handlers {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}

// Len returns the number of registered handlers.
func (j *Jobs) Len() int {
	if j == nil {
		return 0
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	return len(j.handlers)
}

// Run runs the handler of job's class as a worker does (following aliases, the fallback
// last; a panic becomes a *PanicError) and returns the class it was registered under and
// what the handler returned. Without a handler it returns an *UnhandledError. Package
// laraqtest runs handlers through it.
func (j *Jobs) Run(ctx context.Context, job *JobInfo) (registeredAs string, err error) {
	h, as, ok := Lookup(j, job.Class)
	if !ok {
		return "", &UnhandledError{Class: job.Class}
	}
	return as, Call(ctx, h, job)
}

// Traits is what a registered class's Go type says about the PHP class beyond its
// properties: ShouldBeUnique, ShouldBeUniqueUntilProcessing, SkipIfBatchCancelled, a
// middleware() method.
// Decode turns a job's command into a fresh value of the type (a pointer, whose method
// set holds the methods of both receivers).
type Traits struct {
	Unique, UntilProcessing, SkipIfBatchCancelled bool
	// Middleware: the type has a Middleware() method (MiddlewareMethod).
	Middleware bool
	Decode     func(*JobInfo) (any, error)
}

// traitsOf reads the traits of T, whose value or pointer may implement them.
func traitsOf[T any]() *Traits {
	var zero T
	is := func(f func(any) bool) bool { return f(zero) || f(&zero) }
	t := &Traits{
		Unique:               is(func(v any) bool { _, ok := v.(UniqueJob); return ok }),
		UntilProcessing:      is(func(v any) bool { _, ok := v.(UniqueUntilProcessing); return ok }),
		SkipIfBatchCancelled: is(func(v any) bool { _, ok := v.(SkipsCancelledBatch); return ok }),
		Middleware:           is(func(v any) bool { _, ok := v.(MiddlewareMethod); return ok }),
	}
	if !t.Unique && !t.SkipIfBatchCancelled && !t.Middleware {
		return nil
	}
	t.Decode = func(info *JobInfo) (any, error) {
		// A pointer: its method set holds the methods of both receivers.
		p := new(T)
		if err := bindCommand(info, p); err != nil {
			return nil, err
		}
		return p, nil
	}
	return t
}

// noteTraits records a class's traits when its Go type has any.
func (j *Jobs) noteTraits(class string, t *Traits) {
	if t == nil {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.traits == nil {
		j.traits = map[string]*Traits{}
	}
	j.traits[class] = t
}

// TraitsOf returns the traits of the class a job is routed to in j (aliases followed);
// nil when its Go type has none.
func TraitsOf(j *Jobs, class string) *Traits {
	_, as, ok := Lookup(j, class)
	if !ok {
		return nil
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	return j.traits[as]
}

// CommandType returns the command type registered in j for class (following aliases),
// nil for an untyped registration (HandleFunc, Fallback) or a type that is no struct.
func CommandType(j *Jobs, class string) reflect.Type {
	if _, _, ok := Lookup(j, class); !ok {
		return nil
	}
	return j.typeOf(class)
}

// TypeOf returns the Go type declared in j for class (Handle, HandleClass, Declare),
// following aliases, or nil.
func TypeOf(j *Jobs, class string) reflect.Type { return j.typeOf(class) }

// FirstUnknownNext reports whether a chain continued into class, which has no Go type,
// for the first time in j: the worker says so once per class.
func FirstUnknownNext(j *Jobs, class string) bool {
	_, seen := j.unknownNext.LoadOrStore(class, true)
	return !seen
}

// Types returns the Go type declared for each PHP class (by Handle, HandleClass with a
// struct type, or Declare), by class name: what a start-up check compares with the
// classes' facts (phpclass.CheckTypes). The map is a copy.
func (j *Jobs) Types() map[string]reflect.Type {
	if j == nil {
		return nil
	}
	j.mu.RLock()
	defer j.mu.RUnlock()
	out := make(map[string]reflect.Type, len(j.types))
	for c, t := range j.types {
		out[c] = t
	}
	return out
}
