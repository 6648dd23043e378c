package laraq

import (
	"time"

	"github.com/laraq/laraq/phpser"
)

// A PHP job class can compute its metadata in methods instead of properties, and on
// Laravel 13 declare it in class attributes. Queue::createObjectPayload reads them when
// the job is queued, so a Go type standing for such a class says the same through
// these optional methods; the Dispatcher, and a worker continuing a chain whose next
// class has a Go type registered (Handle, HandleClass, Declare), use them as the
// connection's release does:
//
//   - backoff() and retryUntil(): every release, when the public property is null
//     (`$job->backoff ?? $job->backoff()`); 13.x lets backoff() win over the property.
//   - tries(): from 10.39 when the public $tries is null; 13.x lets it win.
//   - retryAfter(): 5.8–7.x only, when the public $retryAfter is null (8.0 renamed it
//     backoff); there retryUntil() stands for a null public $timeoutAt.
//   - #[Tries], #[Backoff], #[Timeout], #[MaxExceptions], #[FailOnTimeout] and
//     #[DeleteWhenMissingModels]: 13.x only, where they win over a public property that
//     still holds its class default (a php tag's default=).
//
// A type cannot have a method and a field of the same name: a class with both $tries and
// tries() names its field differently (`TriesProp int \`php:"tries"\``).

// TriesMethod is a command type whose PHP class has a tries() method.
type TriesMethod interface {
	Tries() int
}

// BackoffMethod is a command type whose PHP class has a backoff() method. A nil slice
// is PHP's null (no backoff); one element is written like an int.
type BackoffMethod interface {
	Backoff() []int
}

// RetryAfterMethod is a command type whose PHP class has the retryAfter() method of
// Laravel 5.8–7.x (the job's retry delay in seconds; 8.0 renamed it backoff()).
type RetryAfterMethod interface {
	RetryAfter() int
}

// RetryUntilMethod is a command type whose PHP class has a retryUntil() method
// returning a date. The zero time is PHP's null.
type RetryUntilMethod interface {
	RetryUntil() time.Time
}

// Attributes are the queue attributes of a Laravel 13 job class
// (Illuminate\Queue\Attributes). Nil and false fields are attributes the class lacks.
type Attributes struct {
	Tries                   *int  // #[Tries(n)]
	Backoff                 []int // #[Backoff(a, b, ...)]; one value is written like an int
	Timeout                 *int  // #[Timeout(n)]
	MaxExceptions           *int  // #[MaxExceptions(n)]
	FailOnTimeout           bool  // #[FailOnTimeout]
	DeleteWhenMissingModels bool  // #[DeleteWhenMissingModels]
}

// AttributedJob is a command type whose PHP class carries queue attributes. Releases
// before 13.0 do not read them, and neither does laraq for those releases.
type AttributedJob interface {
	PHPAttributes() Attributes
}

// jobMethods is what a command's class computes beside its properties: its methods,
// its attributes, and the declared defaults of its properties (plain name → value),
// which 13.x compares a property with before preferring an attribute.
type jobMethods struct {
	tries      func() *phpser.Value
	backoff    func() *phpser.Value
	retryAfter func() *phpser.Value
	retryUntil func() *phpser.Value
	attrs      map[string]*phpser.Value // "tries", "backoff", ... → the attribute's value
	defaults   map[string]*phpser.Value
}

// methodsOf collects the optional methods of a Go command value.
func methodsOf(job any, defaults map[string]*phpser.Value) jobMethods {
	m := jobMethods{defaults: defaults}
	if j, ok := job.(TriesMethod); ok {
		m.tries = func() *phpser.Value { return phpser.Int(int64(j.Tries())) }
	}
	if j, ok := job.(BackoffMethod); ok {
		m.backoff = func() *phpser.Value { return intsValue(j.Backoff()) }
	}
	if j, ok := job.(RetryAfterMethod); ok {
		m.retryAfter = func() *phpser.Value { return phpser.Int(int64(j.RetryAfter())) }
	}
	if j, ok := job.(RetryUntilMethod); ok {
		m.retryUntil = func() *phpser.Value {
			t := j.RetryUntil()
			if t.IsZero() {
				return phpser.Null()
			}
			return phpser.Int(t.Unix())
		}
	}
	if j, ok := job.(AttributedJob); ok {
		a := j.PHPAttributes()
		m.attrs = map[string]*phpser.Value{}
		if a.Tries != nil {
			m.attrs["tries"] = phpser.Int(int64(*a.Tries))
		}
		if a.Backoff != nil {
			m.attrs["backoff"] = intsValue(a.Backoff)
		}
		if a.Timeout != nil {
			m.attrs["timeout"] = phpser.Int(int64(*a.Timeout))
		}
		if a.MaxExceptions != nil {
			m.attrs["maxExceptions"] = phpser.Int(int64(*a.MaxExceptions))
		}
		// An attribute without arguments reads as true (extractAttributeValue).
		if a.FailOnTimeout {
			m.attrs["failOnTimeout"] = phpser.Bool(true)
		}
		if a.DeleteWhenMissingModels {
			m.attrs["deleteWhenMissingModels"] = phpser.Bool(true)
		}
	}
	return m
}

// intsValue is a Go []int as PHP's method or attribute returns it: nil is null, one
// element an int, more a list.
func intsValue(xs []int) *phpser.Value {
	switch {
	case xs == nil:
		return phpser.Null()
	case len(xs) == 1:
		return phpser.Int(int64(xs[0]))
	}
	items := make([]*phpser.Value, len(xs))
	for i, x := range xs {
		items[i] = phpser.Int(int64(x))
	}
	return phpser.List(items...)
}
