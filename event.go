package laraq

import "github.com/laraq/laraq/internal/job"

// Event is something a worker did, for logs, console lines and metrics
// (WorkerConfig.OnEvent): its Kind, Time (WorkerConfig.Now), Connection and Queue; Job,
// the attempt concerned (nil for EventMigrated, EventInvalid, EventLoop and the queue
// events, and for EventFailed of a payload that could not be parsed; each attempt has
// its own *JobInfo, so the pointer tells the events of one attempt apart); Err, the
// exception (EventException, EventTimedOut), the failure recorded (EventFailed), the
// refusal that made a queue skipped (EventQueueSkipped) or, for EventLoop, the error of
// the loop's last Redis call (nil once Redis answers again; while every queue is skipped,
// an error wrapping ErrQueuesUnavailable); Delay (the release delay of EventReleased, how
// long a queue is left alone after EventHandedBack); Runtime, how long the handler ran;
// AfterException, set on EventReleased when the attempt threw or timed out and the
// worker released it for a retry (Laravel 9+'s JobReleasedAfterException); Middleware
// and Decision, the middleware that decided the attempt's outcome instead of its handler
// and what it decided, on every event of that outcome ("" when the handler decided);
// Count and From of EventMigrated; Payload, the bytes of EventInvalid and of EventFailed
// without Job; Count and Properties of EventUnknownProperties.
type Event = job.Event

// Decision is what a middleware decided instead of running the rest of the pipeline
// (Event.Decision).
type Decision = job.Decision

const (
	DecisionReleased = job.DecisionReleased // $job->release(): back after a delay, the attempt counted
	DecisionDeleted  = job.DecisionDeleted  // $job->delete()
	DecisionFailed   = job.DecisionFailed   // $job->fail($e)
	DecisionSkipped  = job.DecisionSkipped  // done without running: the middleware did not call next
)

// EventKind says what an Event is about. The names follow Laravel's queue events.
type EventKind = job.EventKind

const (
	// EventProcessing: a handler is about to run (JobProcessing).
	EventProcessing = job.EventProcessing
	// EventProcessed: the handler returned without error, also after Release or Delete,
	// and after Fail, as PHP fires JobProcessed after a $this->fail() in handle()
	// (JobProcessed).
	EventProcessed = job.EventProcessed
	// EventFailed: the job was failed and written to the failed store (JobFailed).
	EventFailed = job.EventFailed
	// EventReleased: the job went to the delayed set for a retry.
	EventReleased = job.EventReleased
	// EventException: the handler returned an error or panicked, or the job had
	// already exceeded its tries (JobExceptionOccurred).
	EventException = job.EventException
	// EventTimedOut: the job ran past its timeout.
	EventTimedOut = job.EventTimedOut
	// EventMigrated: due delayed jobs or expired reservations were moved to the ready
	// list.
	EventMigrated = job.EventMigrated
	// EventHandedBack: a job without handler was given back to the head of its queue.
	EventHandedBack = job.EventHandedBack
	// EventInvalid: a payload the pop script cannot reserve was moved aside to
	// queues:NAME:invalid (a PHP worker would have lost it).
	EventInvalid = job.EventInvalid
	// EventLoop: the worker loop's heartbeat, emitted once per loop iteration and at
	// least every few seconds while the loop waits (for a free slot, in a sleep, while
	// paused, while jobs drain after a stop). Err is the error of the loop's last Redis
	// call, nil when it answered; it stays set until Redis answers again. No Job.
	EventLoop = job.EventLoop
	// EventUnknownProperties: the command the handler decoded carried Count properties
	// no field of its Go type takes (Properties names up to 16): a misspelt php tag, a
	// property the type lacks, or a PHP class changed since. Emitted after the handler
	// returned, by a worker without WorkerConfig.Classes (which checks the types at start
	// instead); each class and property is also logged once.
	EventUnknownProperties = job.EventUnknownProperties
	// EventQueueSkipped: a key of the queue holds the wrong type (WRONGTYPE), so the
	// worker stops taking jobs from it, goes on with its other queues, and tries it
	// again every WorkerConfig.SkippedQueueRetry; nothing is deleted. Err is the
	// *RedisConfigError naming the key, its type and the fix (ErrRedisWrongType).
	EventQueueSkipped = job.EventQueueSkipped
	// EventQueueResumed: a skipped queue's keys hold their types again and the worker
	// takes its jobs again.
	EventQueueResumed = job.EventQueueResumed
)
