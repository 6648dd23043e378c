package dispatch

import "github.com/laraq/laraq/phpser"

// Queue::createObjectPayload writes displayName from the job's displayName() method when
// it has one, else its class. Laravel's own queued wrappers have one, naming what they
// carry, in every release from 8.x to 13.x:
//
//	Illuminate\Events\CallQueuedListener              $this->class (the listener)
//	Illuminate\Mail\SendQueuedMailable                 get_class($this->mailable)
//	Illuminate\Notifications\SendQueuedNotifications   get_class($this->notification)
//	Illuminate\Broadcasting\BroadcastEvent             get_class($this->event)
//
// so a wrapper dispatched from Go as a *phpser.Value (laraq dispatch) gets the same name.

// frameworkDisplayName is displayName() of a Laravel wrapper object, "" for other classes.
func frameworkDisplayName(v *phpser.Value) string {
	prop := map[string]string{
		`Illuminate\Events\CallQueuedListener`:             "class",
		`Illuminate\Mail\SendQueuedMailable`:               "mailable",
		`Illuminate\Notifications\SendQueuedNotifications`: "notification",
		`Illuminate\Broadcasting\BroadcastEvent`:           "event",
	}[v.Class()]
	if prop == "" {
		return ""
	}
	p, ok := v.Prop(prop)
	if !ok {
		return ""
	}
	p = p.Deref()
	switch {
	case prop == "class" && p.Kind() == phpser.KindString:
		return p.Str()
	case prop != "class" && p.Kind() == phpser.KindObject:
		return p.Class()
	}
	return ""
}
