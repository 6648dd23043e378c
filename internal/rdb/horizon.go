package rdb

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/payload"
	"github.com/redis/go-redis/v9"
)

// Laravel Horizon (laravel/horizon 5.x) keeps its dashboard in Redis, written by listeners
// on the events of its RedisQueue. A Go worker or dispatcher that makes the same writes is
// listed by the dashboard like a PHP worker. Each method below queues, on a caller's
// pipeline, the writes of one event, so the worker sends them in the round trip of its own
// acknowledgement. The scripts are loaded with LoadScripts and called with EVALSHA; after
// the pipeline ran, RerunNoScript repeats the calls a flushed script cache refused.

var (
	//go:embed horizon_pushed.lua
	hzPushedSrc string
	//go:embed horizon_update.lua
	hzUpdateSrc string
	//go:embed horizon_completed.lua
	hzCompletedSrc string
	//go:embed horizon_failed.lua
	hzFailedSrc string
	//go:embed horizon_retry_status.lua
	hzRetryStatusSrc string
	//go:embed horizon_metrics.lua
	hzMetricsSrc string
)

var (
	hzPushedScript      = redis.NewScript(hzPushedSrc)
	hzUpdateScript      = redis.NewScript(hzUpdateSrc)
	hzCompletedScript   = redis.NewScript(hzCompletedSrc)
	hzFailedScript      = redis.NewScript(hzFailedSrc)
	hzRetryStatusScript = redis.NewScript(hzRetryStatusSrc)
	hzMetricsScript     = redis.NewScript(hzMetricsSrc)

	hzScripts = []*redis.Script{hzPushedScript, hzUpdateScript, hzCompletedScript, hzFailedScript,
		hzRetryStatusScript, hzMetricsScript}
)

// HorizonTrim holds horizon.trim of config/horizon.php: how many minutes Horizon keeps
// each kind of record. A zero field takes Horizon's default.
type HorizonTrim struct {
	Recent       int // recent_jobs entries; default 60
	Pending      int // TTL of a pending job's hash; default 60
	Completed    int // TTL of a completed job's hash, completed/silenced entries; default 60
	RecentFailed int // recent_failed_jobs entries; default Failed
	// Failed is the TTL of a failed job's hash and of its failed:TAG zsets; default 10080.
	// When it is not set, Horizon's StoreTagsForFailedJob falls back to 2880 minutes for the
	// tag zsets (config('horizon.trim.failed', 2880)) while the repository uses 10080 for
	// the hash; an unset Failed reproduces both.
	Failed    int
	Monitored int // TTL of a monitored job's hash, monitored_jobs entries; default 10080
}

// Horizon's defaults (RedisJobRepository's constructor and the stock config/horizon.php).
const (
	DefaultHorizonRecent    = 60
	DefaultHorizonPending   = 60
	DefaultHorizonCompleted = 60
	DefaultHorizonFailed    = 10080
	DefaultHorizonMonitored = 10080
	// defaultHorizonFailedTags is StoreTagsForFailedJob's own fallback for trim.failed.
	defaultHorizonFailedTags = 2880
)

func (t HorizonTrim) resolved() (HorizonTrim, int) {
	failedTags := t.Failed
	if failedTags == 0 {
		failedTags = defaultHorizonFailedTags
	}
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&t.Recent, DefaultHorizonRecent)
	def(&t.Pending, DefaultHorizonPending)
	def(&t.Completed, DefaultHorizonCompleted)
	def(&t.Failed, DefaultHorizonFailed)
	def(&t.RecentFailed, t.Failed)
	def(&t.Monitored, DefaultHorizonMonitored)
	return t, failedTags
}

// HorizonOptions configures a Horizon.
type HorizonOptions struct {
	// Prefix is horizon.prefix, the prefix of every Horizon key. It replaces the
	// connection prefix. Default DefaultHorizonPrefix ("horizon:"), Horizon's fallback for
	// an empty setting; the stock config's default is Str::slug(APP_NAME, '_').'_horizon:'
	// (see config.Horizon).
	Prefix string
	// Trim is horizon.trim. Default: Horizon's (HorizonTrim).
	Trim HorizonTrim
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Horizon queues Horizon's bookkeeping writes. It holds no client: every method takes the
// redis.Pipeliner (or Cmdable) of the caller, who owns the round trip. Safe for concurrent
// use.
type Horizon struct {
	keys       HorizonKeys
	fixed      hzFixedKeys // the keys every job's records name, built once
	trim       HorizonTrim
	failedTags int // minutes
	now        func() time.Time
}

// NewHorizon returns a Horizon for the given options.
func NewHorizon(opts HorizonOptions) (*Horizon, error) {
	for name, v := range map[string]int{"recent": opts.Trim.Recent, "pending": opts.Trim.Pending,
		"completed": opts.Trim.Completed, "recent_failed": opts.Trim.RecentFailed,
		"failed": opts.Trim.Failed, "monitored": opts.Trim.Monitored} {
		if v < 0 {
			return nil, fmt.Errorf("rdb: horizon.trim.%s is %d minutes; it must not be negative", name, v)
		}
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	trim, failedTags := opts.Trim.resolved()
	keys := HorizonKeys{Prefix: opts.Prefix}
	return &Horizon{keys: keys, fixed: keys.fixed(), trim: trim, failedTags: failedTags, now: now}, nil
}

// Keys returns the key builder.
func (h *Horizon) Keys() HorizonKeys { return h.keys }

// Trim returns the trim settings in effect, defaults applied.
func (h *Horizon) Trim() HorizonTrim { return h.trim }

// Now reads the Horizon's clock.
func (h *Horizon) Now() time.Time { return h.now() }

// LoadScripts sends Horizon's scripts to the server (SCRIPT LOAD), so that the EVALSHA
// the methods queue find them. Call it once before the first pipeline, and again when
// RerunNoScript reports that it had to.
func (h *Horizon) LoadScripts(ctx context.Context, c redis.Scripter) error {
	for _, s := range hzScripts {
		if err := s.Load(ctx, c).Err(); err != nil {
			return fmt.Errorf("rdb: load horizon scripts: %w", err)
		}
	}
	return nil
}

// RerunNoScript repeats, in order and with EVAL, the calls of Horizon's scripts among
// cmds (the commands of an executed pipeline) that failed with NOSCRIPT: the server had
// lost the script (restart, SCRIPT FLUSH), so the call did nothing and running it now
// runs it once. It also loads the scripts again. Other commands are left alone. It returns
// how many calls it repeated and the first error of those.
func (h *Horizon) RerunNoScript(ctx context.Context, c redis.Scripter, cmds []redis.Cmder) (int, error) {
	n := 0
	var first error
	for _, cmd := range cmds {
		if cmd.Err() == nil || !redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
			continue
		}
		args := cmd.Args()
		if len(args) < 3 || args[0] != "evalsha" {
			continue
		}
		s := hzScriptBySHA(fmt.Sprint(args[1]))
		if s == nil {
			continue
		}
		numKeys, ok := args[2].(int)
		if !ok || numKeys < 0 || 3+numKeys > len(args) {
			continue
		}
		if n == 0 {
			_ = h.LoadScripts(ctx, c)
		}
		n++
		keys := make([]string, 0, numKeys)
		for _, k := range args[3 : 3+numKeys] {
			keys = append(keys, fmt.Sprint(k))
		}
		if err := s.Eval(ctx, c, keys, args[3+numKeys:]...).Err(); err != nil && !errors.Is(err, redis.Nil) && first == nil {
			first = fmt.Errorf("rdb: horizon script rerun: %w", err)
		}
	}
	return n, first
}

func hzScriptBySHA(sha string) *redis.Script {
	for _, s := range hzScripts {
		if s.Hash() == sha {
			return s
		}
	}
	return nil
}

// HorizonJob is what Horizon records of one job. NewHorizonJob fills it from a payload.
type HorizonJob struct {
	// ID is the payload's uuid ?? id (JobPayload::id): the job hash's key and the member
	// of every job list. For a payload Horizon pushed, id and uuid are equal.
	ID string
	// Name is displayName as stored ("" when absent or null): the hash's name and the
	// job metrics key.
	Name string
	// Connection is the queue connection name (config/queue.php, e.g. "redis").
	Connection string
	// Queue is the bare queue name (without "queues:").
	Queue string
	// Payload is the payload the hash stores; which copy depends on the event (see each
	// method).
	Payload []byte
	// Tags are the payload's Horizon tags.
	Tags []string
	// Silenced is PHP's truthiness of the payload's silenced key.
	Silenced bool
	// RetryOf is the payload's retry_of: the id of the failed job the dashboard retried.
	RetryOf string
}

// NewHorizonJob describes the job whose parsed payload is env, on queue of connection,
// storing stored as the hash's payload. env may be the parse of either copy of a popped
// job: the keys Horizon reads (uuid, id, displayName, tags, silenced, retry_of) are the
// same in the popped payload and in its reserved copy. It fails when the payload has
// neither a uuid nor an id, which Horizon cannot key.
func NewHorizonJob(env *payload.Envelope, connection, queue string, stored []byte) (HorizonJob, error) {
	id := env.UUID
	if id == "" {
		id = env.ID
	}
	if id == "" {
		return HorizonJob{}, errors.New("rdb: horizon: payload has neither uuid nor id; Horizon cannot record it")
	}
	j := HorizonJob{ID: id, Name: env.DisplayName, Connection: connection, Queue: queue, Payload: stored, Tags: env.Tags}
	if raw, ok := env.Get("silenced"); ok {
		v, err := payload.DecodeValue(raw)
		if err != nil {
			return HorizonJob{}, fmt.Errorf("rdb: horizon: payload key silenced: %w", err)
		}
		j.Silenced = truthy(&v)
	}
	if raw, ok := env.Get("retry_of"); ok {
		v, err := payload.DecodeValue(raw)
		if err != nil {
			return HorizonJob{}, fmt.Errorf("rdb: horizon: payload key retry_of: %w", err)
		}
		switch v.Kind {
		case payload.KindString:
			j.RetryOf = v.Str
		case payload.KindInt:
			j.RetryOf = strconv.FormatInt(v.Int, 10)
		}
	}
	return j, nil
}

// HorizonJobFromPayload parses raw and describes it as NewHorizonJob does, storing raw.
func HorizonJobFromPayload(raw []byte, connection, queue string) (HorizonJob, error) {
	env, err := payload.Parse(raw)
	if err != nil {
		return HorizonJob{}, fmt.Errorf("rdb: horizon: %w", err)
	}
	return NewHorizonJob(env, connection, queue, raw)
}

// truthy is PHP's bool conversion of a decoded JSON value.
func truthy(v *payload.Value) bool {
	switch v.Kind {
	case payload.KindNull:
		return false
	case payload.KindBool:
		return v.Bool
	case payload.KindInt:
		return v.Int != 0
	case payload.KindFloat:
		return v.Float != 0
	case payload.KindString:
		return v.Str != "" && v.Str != "0"
	case payload.KindArray:
		return len(v.Items) > 0
	}
	return false
}

// stamp is one reading of the clock in the forms Horizon writes.
type stamp struct {
	at   time.Time
	t    string // T: microtime(true) as PHP prints a float
	negT string // -T: the job lists' score
	unix int64  // CarbonImmutable::now()->getTimestamp()
}

func (h *Horizon) stamp() stamp {
	at := h.now()
	f := float64(at.UnixMicro()) / 1e6
	return stamp{at: at, t: php.FloatString(f), negT: php.FloatString(-f), unix: at.Unix()}
}

func (s stamp) plus(minutes int) int64 { return s.unix + int64(minutes)*60 }

func (j *HorizonJob) check(what string) error {
	if j.ID == "" {
		return fmt.Errorf("rdb: horizon %s: job has no id", what)
	}
	return nil
}

// Pushed queues Horizon's JobPushed bookkeeping (StoreJob, StoreMonitoredTags) for a job
// just pushed to the ready list or the delayed zset: the job joins recent_jobs and
// pending_jobs, its hash is written (status pending, the payload as pushed, created_at,
// updated_at) with a TTL of trim.pending minutes, and it joins the zset of each of its
// tags that is monitored. job.Payload is the payload exactly as pushed. Call it in the
// pipeline of the push, after it, for payloads prepared with payload.PrepareForHorizon.
func (h *Horizon) Pushed(ctx context.Context, p redis.Scripter, job HorizonJob) error {
	if err := job.check("pushed"); err != nil {
		return err
	}
	s := h.stamp()
	keys := make([]string, 4, 4+len(job.Tags))
	keys[0], keys[1], keys[2], keys[3] = h.keys.Job(job.ID), h.fixed.recent, h.fixed.pending, h.fixed.monitoring
	args := make([]any, 8, 8+len(job.Tags))
	args[0], args[1], args[2], args[3] = job.ID, job.Connection, job.Queue, job.Name
	args[4], args[5], args[6], args[7] = job.Payload, s.t, s.negT, s.plus(h.trim.Pending)
	for _, tag := range job.Tags {
		keys = append(keys, h.keys.Tag(tag))
		args = append(args, tag)
	}
	hzPushedScript.EvalSha(ctx, p, keys, args...)
	return nil
}

// Reserved queues MarkJobAsReserved for a job just popped: status reserved, payload = the
// reserved copy (job.Payload must be the bytes the pop script wrote to :reserved, whose
// attempts counts this attempt), updated_at and reserved_at. It returns the time it
// recorded as reserved_at: the start of the job's runtime (Horizon's Stopwatch starts on
// the same event), which Metrics takes. A job Horizon did not push is adopted: its hash
// gets what StoreJob would have written (see horizon_update.lua).
func (h *Horizon) Reserved(ctx context.Context, p redis.Scripter, job HorizonJob) (time.Time, error) {
	if err := job.check("reserved"); err != nil {
		return time.Time{}, err
	}
	s := h.stamp()
	h.update(ctx, p, job, s, "reserved")
	return s.at, nil
}

// Released queues MarkJobAsReleased for a job released back to the queue (with or
// without a delay): status pending, payload = the reserved copy, updated_at.
func (h *Horizon) Released(ctx context.Context, p redis.Scripter, job HorizonJob) error {
	if err := job.check("released"); err != nil {
		return err
	}
	h.update(ctx, p, job, h.stamp(), "pending")
	return nil
}

// Migrated queues MarkJobsAsMigrated for payloads a migration moved from :delayed or
// :reserved to the ready list (RDB.MigrateExpiredJobs returns them): for each, status
// pending, payload = the moved bytes, updated_at. Each job's Payload must be the moved
// member itself (HorizonJobFromPayload builds them).
func (h *Horizon) Migrated(ctx context.Context, p redis.Scripter, jobs ...HorizonJob) error {
	for i := range jobs {
		if err := jobs[i].check("migrated"); err != nil {
			return err
		}
	}
	s := h.stamp()
	for i := range jobs {
		h.update(ctx, p, jobs[i], s, "pending")
	}
	return nil
}

func (h *Horizon) update(ctx context.Context, p redis.Scripter, job HorizonJob, s stamp, status string) {
	hzUpdateScript.EvalSha(ctx, p,
		[]string{h.keys.Job(job.ID), h.fixed.recent, h.fixed.pending},
		job.ID, job.Connection, job.Queue, job.Name, job.Payload, s.t, s.negT, s.plus(h.trim.Pending), status)
}

// retryStatus queues the parent's retried_by update of a finished retry.
func (h *Horizon) retryStatus(ctx context.Context, p redis.Scripter, job *HorizonJob, status string) {
	if job.RetryOf != "" {
		hzRetryStatusScript.EvalSha(ctx, p, []string{h.keys.Job(job.RetryOf)}, job.ID, status)
	}
}

// Completed queues MarkJobAsComplete for a job that ran without failing and was deleted
// from :reserved: for a retry (job.RetryOf), the parent's retried_by entry becomes
// completed; the job joins completed_jobs (silenced_jobs when silenced) and leaves
// pending_jobs; status completed, completed_at, TTL trim.completed; a job with a
// monitored tag also joins monitored_jobs with its full record and TTL trim.monitored.
// job.Payload is the reserved copy. Queue Metrics next, as UpdateJobMetrics follows.
func (h *Horizon) Completed(ctx context.Context, p redis.Scripter, job HorizonJob) error {
	if err := job.check("completed"); err != nil {
		return err
	}
	h.completed(ctx, p, job, h.stamp(), "")
	return nil
}

// ReservedCompleted queues Reserved and Completed for the same job at one moment, as one
// script call: what a worker sends for a job whose reservation was not yet recorded when
// it completed (the two records would have gone in the same round trip). It returns the
// time recorded as reserved_at, for Metrics.
func (h *Horizon) ReservedCompleted(ctx context.Context, p redis.Scripter, job HorizonJob) (time.Time, error) {
	if err := job.check("completed"); err != nil {
		return time.Time{}, err
	}
	s := h.stamp()
	h.completed(ctx, p, job, s, "reserved")
	return s.at, nil
}

func (h *Horizon) completed(ctx context.Context, p redis.Scripter, job HorizonJob, s stamp, reserve string) {
	h.retryStatus(ctx, p, &job, "completed")
	finished := h.fixed.completed
	if job.Silenced {
		finished = h.fixed.silenced
	}
	args := make([]any, 11, 11+len(job.Tags))
	args[0], args[1], args[2], args[3], args[4] = job.ID, job.Connection, job.Queue, job.Name, job.Payload
	args[5], args[6], args[7] = s.t, s.negT, s.plus(h.trim.Pending)
	args[8], args[9], args[10] = s.plus(h.trim.Completed), s.plus(h.trim.Monitored), reserve
	for _, tag := range job.Tags {
		args = append(args, tag)
	}
	hzCompletedScript.EvalSha(ctx, p, []string{h.keys.Job(job.ID), h.fixed.recent, h.fixed.pending,
		finished, h.fixed.monitored, h.fixed.monitoring}, args...)
}

// Metrics queues UpdateJobMetrics for a job that completed: throughput and mean runtime
// of P queue:QUEUE and P job:NAME (and their measured sets). reservedAt is what Reserved
// returned; the runtime is the time since, in milliseconds rounded to two places as
// Horizon's Stopwatch does. A zero reservedAt records a runtime of 0, as Horizon does for
// a job it did not time. queue is the bare queue name the job was popped from, name its
// displayName (HorizonJob.Queue and .Name).
func (h *Horizon) Metrics(ctx context.Context, p redis.Scripter, queue, name string, reservedAt time.Time) {
	ms := "0"
	if !reservedAt.IsZero() {
		elapsed := float64(h.now().Sub(reservedAt).Microseconds()) / 1000
		if r := php.Round(elapsed, 2); r != 0 {
			ms = php.FloatString(r)
		}
	}
	hzMetricsScript.EvalSha(ctx, p, []string{h.keys.QueueMetrics(queue), h.fixed.measuredQueues}, ms)
	hzMetricsScript.EvalSha(ctx, p, []string{h.keys.JobMetrics(name), h.fixed.measuredJobs}, ms)
}

// Failure is how a job failed, for Failed.
type Failure struct {
	// Exception is the text Horizon shows (PHP's (string) $exception: class, message,
	// file, line and trace). Use the text written to failed_jobs.exception.
	Exception string
	// Context is the JSON of the exception's context() (Laravel's exceptions with a
	// context method); nil for none, stored as "" as phpredis stores PHP's null.
	Context []byte
}

// Failed queues the bookkeeping of a failed job, in the order a PHP worker produces it:
// MarkJobAsComplete with the failure (the job was deleted first: for a retry the parent's
// retried_by entry becomes failed; completed_jobs or silenced_jobs, completed_at, TTL
// trim.completed), then MarkJobAsFailed (failed_jobs and recent_failed_jobs; out of
// pending, completed and silenced; id, connection, queue, name, status failed, payload,
// exception, context, failed_at; TTL trim.failed) and StoreTagsForFailedJob (P failed:TAG
// zsets, EXPIRE trim.failed). No metrics: Horizon only measures successes. job.Payload is
// the reserved copy.
func (h *Horizon) Failed(ctx context.Context, p redis.Scripter, job HorizonJob, f Failure) error {
	if err := job.check("failed"); err != nil {
		return err
	}
	s := h.stamp()
	h.retryStatus(ctx, p, &job, "failed")
	keys := make([]string, 7, 7+len(job.Tags))
	keys[0], keys[1], keys[2], keys[3] = h.keys.Job(job.ID), h.fixed.recent, h.fixed.pending, h.fixed.completed
	keys[4], keys[5], keys[6] = h.fixed.silenced, h.keys.FailedJobs(), h.keys.RecentFailedJobs()
	for _, tag := range job.Tags {
		keys = append(keys, h.keys.FailedTag(tag))
	}
	silenced := "0"
	if job.Silenced {
		silenced = "1"
	}
	hzFailedScript.EvalSha(ctx, p, keys, job.ID, job.Connection, job.Queue, job.Name, job.Payload,
		s.t, s.negT, s.plus(h.trim.Pending), s.plus(h.trim.Completed), s.plus(h.trim.Failed),
		silenced, f.Exception, string(f.Context), h.failedTags*60)
	return nil
}
