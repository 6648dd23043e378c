package laraq_test

import (
	"sync"

	"github.com/laraq/laraq"
)

// events collects consumer events.
type events struct {
	mu  sync.Mutex
	all []laraq.Event
}

func (ev *events) add(e laraq.Event) {
	ev.mu.Lock()
	ev.all = append(ev.all, e)
	ev.mu.Unlock()
}

func (ev *events) kinds() []string {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	var out []string
	for _, e := range ev.all {
		if e.Kind == laraq.EventMigrated || e.Kind == laraq.EventLoop {
			continue
		}
		out = append(out, e.Kind.String())
	}
	return out
}

func (ev *events) count(k laraq.EventKind) int {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	n := 0
	for _, e := range ev.all {
		if e.Kind == k {
			n++
		}
	}
	return n
}

func (ev *events) first(k laraq.EventKind) (laraq.Event, bool) {
	ev.mu.Lock()
	defer ev.mu.Unlock()
	for _, e := range ev.all {
		if e.Kind == k {
			return e, true
		}
	}
	return laraq.Event{}, false
}
