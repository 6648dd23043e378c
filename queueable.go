package laraq

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
// class: the public `job` (protected before Laravel 7.7).
type InteractsWithQueue struct {
	Job RuntimeJob `php:"job"`
}

// BusQueueable holds the properties of Illuminate\Bus\Queueable in the order Laravel
// 8.0–11.1 declares them, with their PHP defaults as zero values (nil is null, nil
// slices are empty arrays). Dispatch options set Queue (Queue), Delay (Delay, At) and
// Connection (Connection); ChainQueue/ChainConnection are the allOnQueue/allOnConnection
// values a PHP chain carries along.
type BusQueueable struct {
	Connection          *string  `php:"connection"`
	Queue               *string  `php:"queue"`
	ChainConnection     *string  `php:"chainConnection"`
	ChainQueue          *string  `php:"chainQueue"`
	ChainCatchCallbacks any      `php:"chainCatchCallbacks"` // null; PHP puts serialized closures here
	Delay               any      `php:"delay"`               // nil, seconds (int) or a time.Time (Carbon)
	AfterCommit         *bool    `php:"afterCommit"`
	Middleware          []any    `php:"middleware"`
	Chained             []string `php:"chained"` // serialize() of each following job; see Chain
}

// Queueable is what `use InteractsWithQueue, Queueable;` gives a PHP job class, the
// order of Laravel's make:job stub: the runtime `job` property, then Bus\Queueable's.
// Embed it after the job's own fields:
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
//		use InteractsWithQueue, Queueable;
//		public $userId;
//	}
//
// PHP puts trait properties after the class' own, in the order of the use statement,
// so a class written `use Queueable, InteractsWithQueue;` has `job` last: embed
// BusQueueable then InteractsWithQueue for it. SerializesModels and Dispatchable add
// no properties; Batchable adds a public batchId (a field of your own, before
// Queueable when the class lists Batchable first, as the make:job stub does).
//
// The field order is that of Laravel 8.0–11.1. Laravel 11.2 reordered the trait (see
// Release.QueueableProps); PHP unserializes properties by name, so the order only
// matters for byte-for-byte equality with a newer PHP producer.
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
	nameOf := func(e phpser.Entry) string { n, _, _ := e.Key.Name(); return n }
	present := map[string]bool{}
	for _, t := range traits {
		present[nameOf(t)] = false
	}
	any := false
	for _, e := range props {
		if e.Key.IsInt() {
			continue
		}
		if _, ok := present[nameOf(e)]; ok {
			present[nameOf(e)] = true
			any = true
		}
	}
	out := append([]phpser.Entry(nil), props...)
	if !any {
		return append(out, traits...)
	}
	indexOf := func(name string) int {
		for i, e := range out {
			if !e.Key.IsInt() && nameOf(e) == name {
				return i
			}
		}
		return -1
	}
	for ti, t := range traits {
		name := nameOf(t)
		if present[name] {
			continue
		}
		at := -1
		for j := ti - 1; j >= 0; j-- {
			if i := indexOf(nameOf(traits[j])); i >= 0 {
				at = i + 1
				break
			}
		}
		if at < 0 {
			for j := ti + 1; j < len(traits); j++ {
				if i := indexOf(nameOf(traits[j])); i >= 0 && present[nameOf(traits[j])] {
					at = i
					break
				}
			}
		}
		if at < 0 {
			at = len(out)
		}
		out = append(out[:at], append([]phpser.Entry{t}, out[at:]...)...)
		present[name] = true
	}
	return out
}
