package cli

import (
	"github.com/laraq/laraq"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// traitProps are the queue trait properties a class of release rel declares, in PHP's
// order: InteractsWithQueue's job and Bus\Queueable's for an application's job, and for
// Laravel's own queued wrappers what each release's class uses (read from the tags of
// laravel/framework):
//
//	CallQueuedListener        InteractsWithQueue (5.8–7.x); + Queueable (8.0+)
//	SendQueuedMailable        none (before 8.19); Queueable (8.19–9.30.0);
//	                          Queueable, InteractsWithQueue (9.30.1–12.x, job last);
//	                          InteractsWithQueue, Queueable (13.0+)
//	BroadcastEvent            Queueable (every release: no job)
//	SendQueuedNotifications   Queueable (5.8); InteractsWithQueue, Queueable (6.0+)
func traitProps(class string, rel laraq.Release) []phpser.Entry {
	all := rel.QueueableProps()
	job, bus := all[:1], all[1:]
	switch class {
	case payload.CallQueuedListenerClass:
		if !rel.AtLeast(8, 0, 0) {
			return job
		}
	case `Illuminate\Mail\SendQueuedMailable`:
		switch {
		case !rel.AtLeast(8, 19, 0):
			return nil
		case !rel.AtLeast(9, 30, 1):
			return bus
		case !rel.AtLeast(13, 0, 0):
			return append(bus, job...)
		}
	case `Illuminate\Broadcasting\BroadcastEvent`:
		return bus
	case `Illuminate\Notifications\SendQueuedNotifications`:
		if !rel.AtLeast(6, 0, 0) {
			return bus
		}
	}
	return all
}

// withTraits completes cmd's queue trait properties for release rel
// (laraq.CompleteQueueable with traitProps). Before 7.7 InteractsWithQueue's job is
// protected: a plain "job" (as 'laraq decode' shows every property) holding null gets
// that visibility back.
func withTraits(cmd *phpser.Value, rel laraq.Release) *phpser.Value {
	traits := traitProps(cmd.Class(), rel)
	if len(traits) == 0 {
		return cmd
	}
	ents := laraq.CompleteQueueable(cmd.Entries(), traits)
	if !rel.AtLeast(7, 7, 0) && hasJobTrait(traits) {
		for i := range ents {
			if !ents[i].Key.IsInt() && ents[i].Key.Str() == "job" && ents[i].Value.Deref().IsNull() {
				ents[i].Key = phpser.StrKey(phpser.MangleName(phpser.Protected, "", "job"))
			}
		}
	}
	return phpser.NewObject(cmd.Class(), ents...)
}

// hasJobTrait reports whether the trait list holds InteractsWithQueue's job.
func hasJobTrait(traits []phpser.Entry) bool {
	for i := range traits {
		if n, _, _ := traits[i].Key.Name(); n == "job" {
			return true
		}
	}
	return false
}
