package job

import (
	"github.com/laraq/laraq/phpser"
)

// RuntimeJob is InteractsWithQueue's `job` property. PHP fills it with the RedisJob while
// the command runs and it is always serialized as null (N;) in a payload.
type RuntimeJob struct{}

// MarshalPHP writes null, whatever the field holds.
func (RuntimeJob) MarshalPHP() (*phpser.Value, error) { return phpser.Null(), nil }

// UnmarshalPHP accepts whatever the payload holds: the property carries no data.
func (*RuntimeJob) UnmarshalPHP(*phpser.Value) error { return nil }

// InteractsWithQueue is the property Illuminate\Queue\InteractsWithQueue adds to a job
// class: the public `job` (protected before Laravel 7.7), null by default.
type InteractsWithQueue struct {
	Job RuntimeJob `php:"job,default=null"`
}

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
type BusQueueable struct {
	Connection          *string  `php:"connection,default=null"`
	Queue               *string  `php:"queue,default=null"`
	ChainConnection     *string  `php:"chainConnection,default=null"`
	ChainQueue          *string  `php:"chainQueue,default=null"`
	ChainCatchCallbacks any      `php:"chainCatchCallbacks,default=null"` // null; PHP puts serialized closures here
	Delay               any      `php:"delay,default=null"`               // nil, seconds (int) or a time.Time (Carbon)
	AfterCommit         *bool    `php:"afterCommit,default=null"`
	Middleware          []any    `php:"middleware,default=[]"`
	Chained             []string `php:"chained,default=[]"` // serialize() of each following job; see Chain

	MessageGroup    *string `php:"messageGroup,omitempty,default=null"`    // 12.28.1+ (12.27: group); onGroup()
	Deduplicator    any     `php:"deduplicator,omitempty,default=null"`    // 12.32+; a serialized closure
	DebounceOwner   string  `php:"debounceOwner,omitempty,default=\"\""`   // 13.6+
	UniqueLockOwner string  `php:"uniqueLockOwner,omitempty,default=\"\""` // 13.24+
}

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
type Queueable struct {
	InteractsWithQueue
	BusQueueable
}

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
	defaults := map[string]*phpser.Value{}
	for i := range traits {
		defaults[PropName(&traits[i])] = &traits[i].Value
	}
	out := FillDefaults(phpser.NewObject("", props...), phpser.NewObject("", traits...), defaults)
	return append([]phpser.Entry(nil), out.Entries()...)
}
