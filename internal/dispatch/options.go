package dispatch

import (
	"fmt"
	"time"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/phpser"
)

// Option adjusts one dispatch, like a method of Laravel's PendingDispatch (laraq's
// DispatchOption; its constructors are laraq.OnQueue, laraq.Delay, ...).
type Option func(*Options) error

// Options are what a dispatch's Options set.
type Options struct {
	Queue, PushOn, Connection *string
	// Delay is the value delay() stores in the job's delay property (int seconds or a
	// Carbon); Later only decides when the job becomes ready (Queue::later).
	Delay, Later  *phpser.Value
	Chain         []any
	AnyConnection bool
	Encrypt       bool     // as if the class implemented ShouldBeEncrypted
	Tags          []string // Horizon tags, as the class's tags() would return them
	Silence       bool     // Horizon's Silenced contract
	// UniqueID and UniqueFor are what a unique class's uniqueId() and uniqueFor() methods
	// return, for a job given as a *phpser.Value (PHP code laraq cannot run).
	UniqueID  *string
	UniqueFor *time.Duration

	unique *uniqueDispatch // the lock Dispatch took (see unique.go)
}

// collect applies opts to fresh Options.
func collect(opts []Option) (*Options, error) {
	o := &Options{}
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

// forJob is the options of one job: o, with Encrypt set when the job's Go type says
// ShouldBeEncrypted, or, with the classes' facts, its class implements it.
func (p *Dispatcher) forJob(o *Options, v any) *Options {
	_, enc := v.(job.ShouldBeEncrypted)
	if val, ok := v.(*phpser.Value); ok && !enc {
		c, _ := p.classFacts(val)
		enc = c != nil && c.Encrypted()
	}
	if enc && !o.Encrypt {
		c := *o
		c.Encrypt = true
		return &c
	}
	return o
}
