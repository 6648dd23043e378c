package consumer

import (
	"fmt"
	"time"

	"github.com/laraq/laraq/handlers"
)

// Event is something a worker did, for logs, console lines and metrics.
type Event struct {
	Kind       EventKind
	Time       time.Time // Config.Now() when it happened
	Connection string
	Queue      string
	// Job is the job concerned; nil for EventMigrated and EventInvalid, and for
	// EventFailed of a payload that could not be parsed (see Payload).
	Job *handlers.Job
	// Err is the exception (EventException, EventTimedOut) or the failure recorded in
	// the failed store (EventFailed).
	Err error
	// Delay is the release delay (EventReleased, EventHandedBack: how long the queue is
	// left alone).
	Delay time.Duration
	// Runtime is how long the handler ran (EventProcessed, EventException,
	// EventTimedOut, and EventFailed after a run).
	Runtime time.Duration
	// Count and From describe EventMigrated: Count jobs moved from the "delayed" or
	// "reserved" set to the ready list.
	Count int
	From  string
	// Payload is the payload of EventInvalid, and of EventFailed when Job is nil.
	Payload []byte
}

// EventKind says what an Event is about. The names follow Laravel's queue events.
type EventKind int

const (
	// EventProcessing: a handler is about to run (JobProcessing).
	EventProcessing EventKind = iota + 1
	// EventProcessed: the handler returned without error, also after Release or Delete,
	// and after Fail, as PHP fires JobProcessed after a $this->fail() in handle()
	// (JobProcessed).
	EventProcessed
	// EventFailed: the job was failed and written to the failed store (JobFailed).
	EventFailed
	// EventReleased: the job went to the delayed set for a retry.
	EventReleased
	// EventException: the handler returned an error or panicked, or the job had
	// already exceeded its tries (JobExceptionOccurred).
	EventException
	// EventTimedOut: the job ran past its timeout.
	EventTimedOut
	// EventMigrated: due delayed jobs or expired reservations were moved to the ready
	// list.
	EventMigrated
	// EventHandedBack: a job without handler was given back to the head of its queue.
	EventHandedBack
	// EventInvalid: a payload the pop script cannot reserve was moved aside to
	// queues:NAME:invalid (a PHP worker would have lost it).
	EventInvalid
)

func (k EventKind) String() string {
	switch k {
	case EventProcessing:
		return "processing"
	case EventProcessed:
		return "processed"
	case EventFailed:
		return "failed"
	case EventReleased:
		return "released"
	case EventException:
		return "exception"
	case EventTimedOut:
		return "timed_out"
	case EventMigrated:
		return "migrated"
	case EventHandedBack:
		return "handed_back"
	case EventInvalid:
		return "invalid"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}
