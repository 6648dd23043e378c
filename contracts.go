package laraq

import (
	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/phpser"
)

// The interfaces a Go type standing for a PHP job class may implement, each saying what
// the PHP class says beyond its properties: its interfaces (ShouldBeUnique,
// ShouldBeEncrypted, Horizon's Silenced), the methods PHP calls on it (tries(),
// backoff(), uniqueId(), displayName(), tags() ...) and its 13.x attributes. Go cannot
// run the PHP method, so the Go method returns what it returns. Queueable stands for the
// Queueable traits.

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
type TriesMethod = job.TriesMethod

// BackoffMethod is a command type whose PHP class has a backoff() method. A nil slice
// is PHP's null (no backoff); one element is written like an int.
type BackoffMethod = job.BackoffMethod

// RetryAfterMethod is a command type whose PHP class has the retryAfter() method of
// Laravel 5.8–7.x (the job's retry delay in seconds; 8.0 renamed it backoff()).
type RetryAfterMethod = job.RetryAfterMethod

// RetryUntilMethod is a command type whose PHP class has a retryUntil() method
// returning a date. The zero time is PHP's null.
type RetryUntilMethod = job.RetryUntilMethod

// Attributes are the queue attributes of a Laravel 13 job class
// (Illuminate\Queue\Attributes). Nil and false fields are attributes the class lacks.
type Attributes = job.Attributes

// AttributedJob is a command type whose PHP class carries queue attributes. Releases
// before 13.0 do not read them, and neither does laraq for those releases.
type AttributedJob = job.AttributedJob

// UniqueJob is implemented by job types whose PHP class implements ShouldBeUnique. A Go
// worker releases the job's lock when PHP's would; a Go dispatcher takes it first and
// queues nothing while it is held (ErrUniqueLocked).
//
//	func (j ReindexShop) UniqueID() string           { return strconv.Itoa(j.ShopID) } // uniqueId()
//	func (ReindexShop) UniqueFor() time.Duration    { return time.Hour }             // $uniqueFor
type UniqueJob = job.UniqueJob

// UniqueUntilProcessing is implemented by job types whose PHP class implements
// ShouldBeUniqueUntilProcessing: the lock is released just before the handler runs.
type UniqueUntilProcessing = job.UniqueUntilProcessing

// SkipsCancelledBatch is implemented by job types whose PHP class runs through the
// SkipIfBatchCancelled middleware (or starts handle() with `if
// ($this->batch()->cancelled()) return;`): a Go worker then does not call the handler
// for a job of a cancelled batch, and the job counts as done, as in PHP.
//
//	func (ImportRow) SkipIfBatchCancelled() {}
type SkipsCancelledBatch = job.SkipsCancelledBatch

// MiddlewareMethod is implemented by a command type whose PHP class has a middleware()
// method: a Go worker runs what it returns around the handler, computed from the
// decoded command as PHP computes it from the unserialized one, after the worker's and
// the registration's middleware and before those ->through() put in the payload.
// Package middleware has Laravel's.
//
//	func (j SyncOrder) Middleware() []laraq.Middleware {
//		return []laraq.Middleware{middleware.WithoutOverlapping(strconv.Itoa(j.OrderID)).ReleaseAfter(10 * time.Second)}
//	}
//
// A type embedding Queueable can have this method: it shadows the promoted Middleware
// field (the payload's middleware property), still reachable as j.Queueable.Middleware.
type MiddlewareMethod = job.MiddlewareMethod

// DebounceIDer is implemented by a command type whose PHP class computes its debounce id in
// a debounceId() method, which the Go method mirrors from the same properties.
type DebounceIDer = job.DebounceIDer

// ShouldBeEncrypted is implemented by job types whose PHP class implements
// Illuminate\Contracts\Queue\ShouldBeEncrypted: Dispatch encrypts their command with
// Connection.Encrypter, as Laravel does. Workers need no marker: they decrypt whatever
// command is encrypted.
//
//	func (ChargeCard) ShouldBeEncrypted() {}
type ShouldBeEncrypted = job.ShouldBeEncrypted

// DisplayNamer is implemented by jobs whose PHP class has a displayName() method: the
// payload's displayName comes from it instead of the class name.
type DisplayNamer = job.DisplayNamer

// Tagger is implemented by a job whose PHP class has a tags() method: Horizon lists the
// job under these tags instead of its automatic ones (Class:key of each Eloquent model
// the job holds). Go cannot run the PHP method; the Go type says what it returns.
type Tagger = job.Tagger

// Silenced is implemented by a job whose PHP class implements Horizon's
// Laravel\Horizon\Contracts\Silenced: when Silenced returns true, Horizon lists its
// completed runs as silenced instead of completed. horizon.silenced
// (HorizonOptions.Silenced) silences classes by name without it.
type Silenced = job.Silenced

// RuntimeJob is InteractsWithQueue's `job` property. PHP fills it with the RedisJob while
// the command runs and it is always serialized as null (N;) in a payload.
type RuntimeJob = job.RuntimeJob

// InteractsWithQueue is the property Illuminate\Queue\InteractsWithQueue adds to a job
// class: the public `job` (protected before Laravel 7.7), null by default.
type InteractsWithQueue = job.InteractsWithQueue

// BusQueueable holds the properties of Illuminate\Bus\Queueable with their PHP defaults
// (nil is null, nil slices are empty arrays). Dispatch options set Queue (OnQueue),
// Delay (Delay, At), Connection (OnConnection) and Chained (Chain); ChainQueue and
// ChainConnection are the allOnQueue/allOnConnection values a PHP chain carries along.
//
// The property set and order differ between releases (see Release.QueueableProps): 12.27
// added messageGroup, 12.32 deduplicator, 13.6 debounceOwner and 13.24 uniqueLockOwner,
// and 11.2 moved the chain properties last. A struct embedding BusQueueable stands for
// the trait of whatever release the connection runs: the Dispatcher writes that
// release's properties, in its order, with these fields' values, and refuses a value
// the release has no property for. The fields of the later properties are tagged
// omitempty, so that phpser.Marshal alone still writes the 8.0–11.1 form.
type BusQueueable = job.BusQueueable

// Queueable is what `use InteractsWithQueue, Queueable;` gives a PHP job class, the
// order of Laravel's make:job stub: the runtime `job` property, then Bus\Queueable's
// (Illuminate\Foundation\Queue\Queueable, the 11.x+ stub's single trait, is the same
// plus SerializesModels). Embed it after the job's own fields:
//
//	type SendWelcome struct {
//		UserID int64 `php:"userId"`
//		laraq.Queueable
//	}
//	func (SendWelcome) PHPClass() string { return `App\Jobs\SendWelcome` }
//
// serializes exactly like
//
//	class SendWelcome implements ShouldQueue {
//		use InteractsWithQueue, Queueable, SerializesModels;
//		public $userId;
//	}
//
// PHP puts trait properties after the class' own, in the order of the use statement,
// so a class written `use Queueable, InteractsWithQueue;` has `job` last: embed
// BusQueueable then InteractsWithQueue for it. SerializesModels and Dispatchable add
// no properties (a type says whether its class uses SerializesModels with
// phpser.ModelSerializer; without that method the Dispatcher takes it to, as every
// make:job stub does); Batchable adds a public batchId (a field of your own, before
// Queueable when the class lists Batchable first, as the make:job stub does).
//
// The Dispatcher writes the trait properties of the connection's release in that
// release's order, whatever the struct's field order (see BusQueueable); PHP
// unserializes properties by name, so a worker reads every release's form into it.
type Queueable = job.Queueable

// CompleteQueueable returns the properties of a command with the trait properties
// (traits, from Release.QueueableProps) it lacks added where PHP would have them:
//   - none present: all of them after the given ones, as PHP puts trait properties after
//     the class' own;
//   - some present: the present ones stay where they are with their values, and each
//     missing one goes right after the closest trait property before it in traits'
//     order (or right before the closest one after it), so a partial list comes out in
//     the trait's order around what was given.
//
// Property names are compared by plain name (visibility mangling removed).
func CompleteQueueable(props []phpser.Entry, traits []phpser.Entry) []phpser.Entry {
	return job.CompleteQueueable(props, traits)
}
