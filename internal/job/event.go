package job

import (
	"errors"
	"fmt"
	"time"
)

// Event is something a worker did, for logs, console lines and metrics.
type Event struct {
	Kind       EventKind
	Time       time.Time // WorkerConfig.Now() when it happened
	Connection string
	Queue      string
	// Job is the job concerned; nil for EventMigrated, EventInvalid, EventLoop and the
	// queue events (EventQueueSkipped, EventQueueResumed), and
	// for EventFailed of a payload that could not be parsed (see Payload). Each attempt
	// has its own *JobInfo, so the pointer tells the events of one attempt apart.
	Job *JobInfo
	// Err is the exception (EventException, EventTimedOut), the failure recorded in
	// the failed store (EventFailed), the refusal that made a queue skipped
	// (EventQueueSkipped), or, for EventLoop, the error of the loop's last Redis call (nil
	// once Redis answers again), or, when every queue is skipped, an error wrapping
	// ErrQueuesUnavailable.
	Err error
	// Delay is the release delay (EventReleased, EventHandedBack: how long the queue is
	// left alone).
	Delay time.Duration
	// Runtime is how long the handler ran (EventProcessed, EventException,
	// EventTimedOut, EventFailed after a run, and EventReleased after an exception).
	Runtime time.Duration
	// AfterException is set on EventReleased when the attempt threw or timed out and
	// the worker released it for a retry (Laravel 9+'s JobReleasedAfterException). It
	// is false when the handler asked for the release (ReleaseAfter, PHP's
	// $this->release()), for a job without handler (ReleaseUnhandled) and for a job
	// interrupted by a hard stop.
	AfterException bool
	// Middleware names the middleware that decided the attempt's outcome instead of its
	// handler — Laravel's class name for Laravel's ("WithoutOverlapping", "RateLimited"
	// ...), else the middleware's Name() or Go type — and Decision what it decided, on
	// every event of that outcome (EventReleased and the EventProcessed after it, ...).
	// Both "" when the handler ran and decided.
	Middleware string
	Decision   Decision
	// Count and From describe EventMigrated: Count jobs moved from the "delayed" or
	// "reserved" set to the ready list.
	Count int
	From  string
	// Payload is the payload of EventInvalid, and of EventFailed when Job is nil.
	Payload []byte
	// Properties are the names of EventUnknownProperties (at most 16; Count says how
	// many there were).
	Properties []string
}

// Decision is what a middleware decided instead of running the rest of the pipeline.
type Decision string

// The decisions, as the metrics label them.
const (
	DecisionReleased Decision = "released" // $job->release(): back after a delay, the attempt counted
	DecisionDeleted  Decision = "deleted"  // $job->delete()
	DecisionFailed   Decision = "failed"   // $job->fail($e)
	DecisionSkipped  Decision = "skipped"  // done without running (returned without calling $next)
)

// DecisionOf says which middleware decided an attempt's outcome err, and what: "" when
// no middleware did (the handler returned err itself).
func DecisionOf(err error) (by string, d Decision) {
	if err == nil {
		return "", "" // before md is declared: errors.As makes it escape, a heap allocation per job
	}
	var md *MiddlewareDecision
	if !errors.As(err, &md) {
		return "", ""
	}
	switch o, _ := OutcomeOf(err); o {
	case OutcomeRelease:
		d = DecisionReleased
	case OutcomeDelete:
		d = DecisionDeleted
	case OutcomeFail:
		d = DecisionFailed
	case OutcomeDone:
		d = DecisionSkipped
	default:
		return "", ""
	}
	return md.By, d
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
	// EventLoop: the worker loop's heartbeat, emitted once per loop iteration and at
	// least every few seconds while the loop waits (for a free slot, in a sleep, while
	// paused, while jobs drain after a stop). Err is the error of the loop's last Redis
	// call, nil when it answered; it stays set until Redis answers again. No Job.
	EventLoop
	// EventUnknownProperties: the command the handler decoded carried Count properties
	// no field of its Go type takes (Properties names them): a misspelt php tag, a
	// property the type lacks, or a PHP class changed since. Emitted after the handler
	// returned, by a worker without the classes' facts (WorkerConfig.Classes), which
	// check the types at start instead.
	EventUnknownProperties
	// EventQueueSkipped: a key of the queue holds the wrong type (WRONGTYPE), so the
	// worker stops taking jobs from it, goes on with its other queues, and tries it
	// again every WorkerConfig.SkippedQueueRetry; nothing is deleted. Err is the
	// *rdb.ConfigError naming the key, its type and the fix. No Job.
	EventQueueSkipped
	// EventQueueResumed: a skipped queue's keys hold their types again and the worker
	// takes its jobs again. No Job.
	EventQueueResumed
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
	case EventLoop:
		return "loop"
	case EventUnknownProperties:
		return "unknown_properties"
	case EventQueueSkipped:
		return "queue_skipped"
	case EventQueueResumed:
		return "queue_resumed"
	}
	return fmt.Sprintf("EventKind(%d)", int(k))
}
