package laraq

import (
	"errors"
	"fmt"
	"time"

	"github.com/laraq/laraq/phpser"
)

// DispatchOption adjusts one dispatch, like the methods of Laravel's PendingDispatch.
type DispatchOption func(*options) error

type delaySpec struct {
	prop *phpser.Value // the value PHP's delay() stores: int seconds or a Carbon
}

type options struct {
	queue, pushOn, connection *string
	delay, later              *delaySpec
	chain                     []any
	anyConnection             bool
	horizon                   horizonHints    // Tags, Silence
	encrypt                   bool            // ShouldBeEncrypted (see encrypted.go)
	unique                    *uniqueDispatch // the lock Dispatch took (see unique.go)
}

func collect(opts []DispatchOption) (*options, error) {
	o := &options{}
	for _, opt := range opts {
		if opt == nil {
			continue
		}
		if err := opt(o); err != nil {
			return nil, fmt.Errorf("laraq: %w", err)
		}
	}
	return o, nil
}

// OnQueue is onQueue(name): it sets the job's queue property and the job goes to
// queues:NAME. A job without a queue property (no Queueable) still goes there.
func OnQueue(name string) DispatchOption {
	return func(o *options) error { o.queue = &name; return nil }
}

// PushOn sends the job to queues:NAME without touching its queue property, as
// Queue::pushOn does. It wins over OnQueue and the property for the choice of queue.
func PushOn(name string) DispatchOption {
	return func(o *options) error { o.pushOn = &name; return nil }
}

// OnConnection is onConnection(name): it sets the job's connection property. It must
// name the dispatcher's own connection (Connection.Name); Laravel would push a job for
// another connection elsewhere.
func OnConnection(name string) DispatchOption {
	return func(o *options) error { o.connection = &name; return nil }
}

// Delay is delay(seconds): it sets the job's delay property to d in whole seconds
// (rounded up, so a job never becomes ready early) and the job goes to :delayed with
// score now + seconds. Laravel stores int seconds; a delay of 0 still goes through
// :delayed, as PHP's isset($job->delay) sends it to later().
func Delay(d time.Duration) DispatchOption {
	return func(o *options) error {
		if d < 0 {
			return errors.New("negative delay")
		}
		secs := int64((d + time.Second - 1) / time.Second)
		o.delay = &delaySpec{prop: phpser.Int(secs)}
		return nil
	}
}

// At is delay(a date): the job's delay property becomes t as an
// Illuminate\Support\Carbon, and the job becomes ready at t (score t's Unix second).
func At(t time.Time) DispatchOption {
	return func(o *options) error {
		o.delay = &delaySpec{prop: phpser.NewTime(t, phpser.CarbonClass)}
		return nil
	}
}

// Later sends the job to :delayed, ready after d (whole seconds, rounded up), without
// touching its delay property, as Queue::later does. It wins over Delay, At and the
// property for the choice of the ready time.
func Later(d time.Duration) DispatchOption {
	return func(o *options) error {
		if d < 0 {
			return errors.New("negative delay")
		}
		o.later = &delaySpec{prop: phpser.Int(int64((d + time.Second - 1) / time.Second))}
		return nil
	}
}

// Chain sets the jobs to run after this one succeeds, as Bus::chain() / ->chain()
// does: the chained property becomes the list of serialize($next). A PHP worker
// dispatches the next one when the job succeeds, so each must be a class PHP knows;
// a laraq worker does the same. The job must have a chained property (Queueable).
func Chain(next ...any) DispatchOption {
	return func(o *options) error {
		if len(next) == 0 {
			return errors.New("empty chain")
		}
		o.chain = next
		return nil
	}
}

// AnyConnection lets a job whose connection property names another queue connection
// than the dispatcher's through, instead of refusing it, and pushes it to this
// dispatcher's connection with the property left as it is. Laravel's queue keys carry no
// connection name: a second Redis queue connection on the same Redis database (say one
// with a longer retry_after) reads the very keys this dispatcher writes. A laraq worker
// continuing a chain uses it, since it knows a single connection.
func AnyConnection() DispatchOption {
	return func(o *options) error { o.anyConnection = true; return nil }
}
