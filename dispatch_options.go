package laraq

import (
	"errors"
	"time"

	"github.com/laraq/laraq/internal/dispatch"
	"github.com/laraq/laraq/phpser"
)

// DispatchOption adjusts one dispatch, like the methods of Laravel's PendingDispatch.
type DispatchOption = dispatch.Option

// OnQueue is onQueue(name): it sets the job's queue property and the job goes to
// queues:NAME. A job without a queue property (no Queueable) still goes there.
func OnQueue(name string) DispatchOption {
	return func(o *dispatch.Options) error { o.Queue = &name; return nil }
}

// PushOn sends the job to queues:NAME without touching its queue property, as
// Queue::pushOn does. It wins over OnQueue and the property for the choice of queue.
func PushOn(name string) DispatchOption {
	return func(o *dispatch.Options) error { o.PushOn = &name; return nil }
}

// OnConnection is onConnection(name): it sets the job's connection property. It must
// name the dispatcher's own connection (Connection.Name); Laravel would push a job for
// another connection elsewhere.
func OnConnection(name string) DispatchOption {
	return func(o *dispatch.Options) error { o.Connection = &name; return nil }
}

// Delay is delay(seconds): it sets the job's delay property to d in whole seconds
// (rounded up, so a job never becomes ready early) and the job goes to :delayed with
// score now + seconds. Laravel stores int seconds; a delay of 0 still goes through
// :delayed, as PHP's isset($job->delay) sends it to later().
func Delay(d time.Duration) DispatchOption {
	return func(o *dispatch.Options) error {
		if d < 0 {
			return errors.New("negative delay")
		}
		secs := int64((d + time.Second - 1) / time.Second)
		o.Delay = phpser.Int(secs)
		return nil
	}
}

// At is delay(a date): the job's delay property becomes t as an
// Illuminate\Support\Carbon, and the job becomes ready at t (score t's Unix second).
func At(t time.Time) DispatchOption {
	return func(o *dispatch.Options) error {
		o.Delay = phpser.NewTime(t, phpser.CarbonClass)
		return nil
	}
}

// Later sends the job to :delayed, ready after d (whole seconds, rounded up), without
// touching its delay property, as Queue::later does. It wins over Delay, At and the
// property for the choice of the ready time.
func Later(d time.Duration) DispatchOption {
	return func(o *dispatch.Options) error {
		if d < 0 {
			return errors.New("negative delay")
		}
		o.Later = phpser.Int(int64((d + time.Second - 1) / time.Second))
		return nil
	}
}

// Chain sets the jobs to run after this one succeeds, as Bus::chain() / ->chain()
// does: the chained property becomes the list of serialize($next). A PHP worker
// dispatches the next one when the job succeeds, so each must be a class PHP knows;
// a laraq worker does the same. The job must have a chained property (Queueable).
func Chain(next ...any) DispatchOption {
	return func(o *dispatch.Options) error {
		if len(next) == 0 {
			return errors.New("empty chain")
		}
		o.Chain = next
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
	return func(o *dispatch.Options) error { o.AnyConnection = true; return nil }
}

// Encrypted is a DispatchOption that encrypts the job's command as if its class
// implemented ShouldBeEncrypted, for jobs given as a *phpser.Value (laraq dispatch
// --encrypt). A job with a public shouldBeEncrypted property set to true is encrypted
// without it, as Laravel's jobShouldBeEncrypted() says.
func Encrypted() DispatchOption {
	return func(o *dispatch.Options) error { o.Encrypt = true; return nil }
}

// UniqueID is what the uniqueId() method of a ShouldBeUnique class returns for this job,
// for a job given as a *phpser.Value to a Dispatcher with the classes' facts
// (WithClasses): PHP code laraq cannot run, which names the lock. Such a dispatch is
// refused without it; given for a job whose id is its uniqueId property, or a Go type
// (its UniqueID method), it is an error (laraq dispatch --unique-id).
func UniqueID(id string) DispatchOption {
	return func(o *dispatch.Options) error { o.UniqueID = &id; return nil }
}

// UniqueFor is what the uniqueFor() method of a ShouldBeUnique class returns, as
// UniqueID is for uniqueId(): how long the lock lives (whole seconds, rounded up; 0:
// until the job releases it) (laraq dispatch --unique-for).
func UniqueFor(d time.Duration) DispatchOption {
	return func(o *dispatch.Options) error {
		if d < 0 {
			return errors.New("negative uniqueFor")
		}
		o.UniqueFor = &d
		return nil
	}
}

// Tags gives the dispatched job Horizon tags, as its PHP class's tags() method would
// (see Tagger); they win over the job's Tags method. Without Horizon it does nothing.
func Tags(tags ...string) DispatchOption {
	return func(o *dispatch.Options) error { o.Tags = tags; return nil }
}

// Silence marks the dispatched job as silenced for Horizon, as the Silenced contract
// on its PHP class would. Without Horizon it does nothing.
func Silence() DispatchOption {
	return func(o *dispatch.Options) error { o.Silence = true; return nil }
}

// ErrUniqueLocked is Dispatch's error for a UniqueJob whose lock is held by an earlier
// dispatch: as with PendingDispatch (UniqueJobSkipped), nothing was queued.
var ErrUniqueLocked = dispatch.ErrUniqueLocked
