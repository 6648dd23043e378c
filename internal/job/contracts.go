package job

import "time"

// The interfaces a Go type standing for a PHP job class may implement, each saying what
// the PHP class says beyond its properties: its interfaces (ShouldBeUnique,
// ShouldBeEncrypted, Horizon's Silenced) and the methods PHP calls on it (tries(),
// backoff(), uniqueId(), displayName(), tags() ...). Go cannot run the PHP method, so the
// Go method returns what it returns.

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

// SkipsCancelledBatch is implemented by job types whose PHP class runs through the
// SkipIfBatchCancelled middleware (or starts handle() with `if
// ($this->batch()->cancelled()) return;`): a Go worker then does not call the handler
// for a job of a cancelled batch, and the job counts as done, as in PHP.
//
//	func (ImportRow) SkipIfBatchCancelled() {}
type SkipsCancelledBatch interface {
	SkipIfBatchCancelled()
}

// MiddlewareMethod is implemented by a command type whose PHP class has a middleware()
// method: a Go worker runs what it returns around the handler, computed from the
// decoded command as PHP computes it from the unserialized one, after the worker's and
// the registration's middleware and before those ->through() put in the payload
// (CallQueuedHandler::dispatchThroughMiddleware). Package middleware has Laravel's.
//
//	func (j SyncOrder) Middleware() []laraq.Middleware {
//		return []laraq.Middleware{middleware.WithoutOverlapping(strconv.Itoa(j.OrderID)).ReleaseAfter(10 * time.Second)}
//	}
//
// A type embedding Queueable can have this method: it shadows the promoted Middleware
// field (the payload's middleware property), which stays reachable as
// j.Queueable.Middleware.
type MiddlewareMethod interface {
	Middleware() []Middleware
}

// DebounceIDer is implemented by a command type whose PHP class computes its debounce id in
// a debounceId() method, which the Go method mirrors from the same properties.
type DebounceIDer interface {
	DebounceID() string
}

// ShouldBeEncrypted is implemented by job types whose PHP class implements
// Illuminate\Contracts\Queue\ShouldBeEncrypted: Dispatch encrypts their command with
// Connection.Encrypter, as Laravel does. Workers need no marker: they decrypt whatever
// command is encrypted.
//
//	func (ChargeCard) ShouldBeEncrypted() {}
type ShouldBeEncrypted interface {
	ShouldBeEncrypted()
}

// DisplayNamer is implemented by jobs whose PHP class has a displayName() method: the
// payload's displayName comes from it instead of the class name.
type DisplayNamer interface {
	DisplayName() string
}

// Tagger is implemented by a job whose PHP class has a tags() method: Horizon lists the
// job under these tags instead of its automatic ones (Class:key of each Eloquent model
// the job holds). Go cannot run the PHP method; the Go type says what it returns.
type Tagger interface {
	Tags() []string
}

// Silenced is implemented by a job whose PHP class implements Horizon's
// Laravel\Horizon\Contracts\Silenced: when Silenced returns true, Horizon lists its
// completed runs as silenced instead of completed. horizon.silenced
// (HorizonOptions.Silenced) silences classes by name without it.
type Silenced interface {
	Silenced() bool
}
