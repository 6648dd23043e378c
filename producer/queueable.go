package producer

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/laraq/laraq/payload"
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
//		producer.Queueable
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
// Laravel.QueueableProps); PHP unserializes properties by name, so the order only
// matters for byte-for-byte equality with a newer PHP producer.
type Queueable struct {
	InteractsWithQueue
	BusQueueable
}

// Laravel is a Laravel release, for the shapes laraq writes: the payload envelope
// (PayloadVersion) and the properties the queue traits add (QueueableProps).
type Laravel struct {
	Major, Minor, Patch int
}

// Laravel8 is the release the default shapes come from (Debian's 8.83 peer).
var Laravel8 = Laravel{8, 83, 0}

// ParseLaravel reads a version such as "8", "8.83", "12.51.0" or "v13.6".
func ParseLaravel(s string) (Laravel, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.Split(t, ".")
	if t == "" || len(parts) > 3 {
		return Laravel{}, fmt.Errorf("laravel version %q: want MAJOR[.MINOR[.PATCH]]", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Laravel{}, fmt.Errorf("laravel version %q: %q is not a number", s, p)
		}
		n[i] = v
	}
	l := Laravel{n[0], n[1], n[2]}
	if len(parts) == 1 {
		// A bare major means its latest release.
		l.Minor, l.Patch = 1<<30, 0
	}
	if l.Major < 8 {
		return Laravel{}, fmt.Errorf("laravel version %q: laraq writes the shapes of Laravel 8 and later", s)
	}
	return l, nil
}

func (l Laravel) atLeast(major, minor, patch int) bool {
	if l.Major != major {
		return l.Major > major
	}
	if l.Minor != minor {
		return l.Minor > minor
	}
	return l.Patch >= patch
}

func (l Laravel) String() string {
	if l.Minor >= 1<<30 {
		return strconv.Itoa(l.Major) + ".x"
	}
	return fmt.Sprintf("%d.%d.%d", l.Major, l.Minor, l.Patch)
}

// PayloadVersion is the envelope shape the release writes. Releases before 8.43 (no
// failOnTimeout key) get the 8.43 shape; their workers ignore the extra key.
func (l Laravel) PayloadVersion() payload.Version {
	switch {
	case l.Major >= 13:
		return payload.Laravel13
	case l.atLeast(12, 51, 0):
		return payload.Laravel1251
	case l.atLeast(12, 11, 0):
		return payload.Laravel1211
	}
	return payload.Laravel8
}

// QueueableProps returns the properties `use InteractsWithQueue, Queueable;` adds to a
// job class in this release, in PHP's order, with their defaults:
//   - 8.0–11.1: job, connection, queue, chainConnection, chainQueue, chainCatchCallbacks,
//     delay, afterCommit, middleware [], chained [];
//   - 11.2+: job, connection, queue, delay, afterCommit, middleware, chained,
//     chainConnection, chainQueue, chainCatchCallbacks;
//   - 12.27 adds group after queue (renamed messageGroup in 12.28.1), 12.32 deduplicator
//     after it, 13.6 debounceOwner "" and 13.24 uniqueLockOwner "" after those.
//
// Laravel 9.4+ SerializesModels leaves out properties that still hold their default,
// so a job using it on those releases serializes fewer of them.
func (l Laravel) QueueableProps() []phpser.Entry {
	null := phpser.Null
	p := []phpser.Entry{phpser.PublicProp("job", null()), phpser.PublicProp("connection", null()), phpser.PublicProp("queue", null())}
	if !l.atLeast(11, 2, 0) {
		return append(p,
			phpser.PublicProp("chainConnection", null()),
			phpser.PublicProp("chainQueue", null()),
			phpser.PublicProp("chainCatchCallbacks", null()),
			phpser.PublicProp("delay", null()),
			phpser.PublicProp("afterCommit", null()),
			phpser.PublicProp("middleware", phpser.NewArray()),
			phpser.PublicProp("chained", phpser.NewArray()),
		)
	}
	switch {
	case l.atLeast(12, 28, 1):
		p = append(p, phpser.PublicProp("messageGroup", null()))
	case l.atLeast(12, 27, 0):
		p = append(p, phpser.PublicProp("group", null()))
	}
	if l.atLeast(12, 32, 0) {
		p = append(p, phpser.PublicProp("deduplicator", null()))
	}
	if l.atLeast(13, 6, 0) {
		p = append(p, phpser.PublicProp("debounceOwner", phpser.String("")))
	}
	if l.atLeast(13, 24, 0) {
		p = append(p, phpser.PublicProp("uniqueLockOwner", phpser.String("")))
	}
	return append(p,
		phpser.PublicProp("delay", null()),
		phpser.PublicProp("afterCommit", null()),
		phpser.PublicProp("middleware", phpser.NewArray()),
		phpser.PublicProp("chained", phpser.NewArray()),
		phpser.PublicProp("chainConnection", null()),
		phpser.PublicProp("chainQueue", null()),
		phpser.PublicProp("chainCatchCallbacks", null()),
	)
}

// CompleteQueueable returns the properties of a command with the trait properties
// (traits, from QueueableProps) it lacks added where PHP would have them:
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
