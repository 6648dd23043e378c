// Package laraqtest runs laraq handlers in unit tests, without Redis or PHP.
//
// Build a job the way a worker would hand it over — from a payload captured from Redis
// or failed_jobs (NewJob), from a Go struct standing for a PHP job class (NewObjectJob,
// serialized with phpser.Marshal into a Laravel payload), or as a "Class@method"
// string job (NewStringJob) — then Run its handler from your laraq.Jobs and look at the
// Result: what the worker would do with the job (delete, retry, release, fail), and why.
//
//	job, _ := laraqtest.NewObjectJob(SendInvoice{InvoiceID: 7}, laraqtest.Attempt(2))
//	res, err := laraqtest.Run(ctx, jobs, job)
//	// res.Outcome == laraq.OutcomeDone
//
// Run reports the handler's own decision. Whether a retried job would be failed instead
// (its tries, retryUntil or maxExceptions used up) is the worker's business; the
// worker is tested against Laravel's.
package laraqtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// Defaults of the job options.
const (
	DefaultQueue      = "default"
	DefaultConnection = "redis"
)

type options struct {
	queue      string
	connection string
	attempt    int
	release    laraq.Release
	mod        func(*payload.ObjectJob)
}

// Option changes how a test job is built.
type Option func(*options)

// Queue sets the bare queue name the job was popped from. Default DefaultQueue.
func Queue(name string) Option { return func(o *options) { o.queue = name } }

// Connection sets the queue connection name. Default DefaultConnection.
func Connection(name string) Option { return func(o *options) { o.connection = name } }

// Attempt makes the job's current attempt n (1-based): the payload's attempts is set to
// n-1, as a worker pops it before its n-th run. Default: the payload's own (1 for new
// jobs).
func Attempt(n int) Option { return func(o *options) { o.attempt = n } }

// Release makes NewObjectJob write the payload shape of that Laravel release. Default:
// 8.43–12.10's shape (no createdAt, batchId or deleteWhenMissingModels).
func Release(r laraq.Release) Option { return func(o *options) { o.release = r } }

// Meta changes the envelope NewObjectJob writes: tries, backoff, timeout, retryUntil,
// uuid, display name and so on, as the PHP job's properties would.
func Meta(f func(*payload.ObjectJob)) Option { return func(o *options) { o.mod = f } }

func build(opts []Option) options {
	o := options{queue: DefaultQueue, connection: DefaultConnection, release: laraq.Release{Major: 8, Minor: 83}}
	for _, f := range opts {
		f(&o)
	}
	return o
}

// NewJob returns the job a worker would hand to a handler after popping raw, a Laravel
// queue payload of any version. Reserved stays nil: the reserved copy is written by
// Redis' cjson, which a test without Redis does not have.
func NewJob(raw []byte, opts ...Option) (*laraq.JobInfo, error) {
	o := build(opts)
	raw = bytes.Clone(raw)
	if o.attempt > 0 {
		v, err := payload.DecodeValue(raw)
		if err != nil {
			return nil, fmt.Errorf("laraqtest: %w", err)
		}
		if !v.Set("attempts", payload.Value{Kind: payload.KindInt, Int: int64(o.attempt - 1)}) {
			return nil, errors.New("laraqtest: the payload is not a JSON object")
		}
		if raw, err = v.AppendJSON(nil, payload.JSONUnescapedUnicode); err != nil {
			return nil, fmt.Errorf("laraqtest: %w", err)
		}
	}
	env, err := payload.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("laraqtest: %w", err)
	}
	if err := env.Runnable(); err != nil {
		return nil, fmt.Errorf("laraqtest: %w", err)
	}
	return &laraq.JobInfo{
		ID:         env.ID,
		UUID:       env.UUID,
		Attempt:    int(env.Attempts) + 1,
		Queue:      o.queue,
		Connection: o.connection,
		Name:       env.Name(),
		Class:      laraq.ClassOf(env),
		Payload:    env,
		Raw:        raw,
	}, nil
}

// NewObjectJob serializes cmd, a Go struct standing for a PHP job class (its PHPClass
// method names the class, its `php` tags the properties), and wraps it in the payload
// Laravel writes for dispatch(new Class(...)) (see the Release option).
func NewObjectJob(cmd phpser.Classer, opts ...Option) (*laraq.JobInfo, error) {
	o := build(opts)
	ser, err := phpser.Marshal(cmd)
	if err != nil {
		return nil, fmt.Errorf("laraqtest: %w", err)
	}
	j := payload.ObjectJob{CommandName: cmd.PHPClass(), Command: string(ser)}
	if o.mod != nil {
		o.mod(&j)
	}
	raw, err := payload.BuildObject(j, o.release.Shape())
	if err != nil {
		return nil, fmt.Errorf("laraqtest: %w", err)
	}
	return NewJob(withAttempt(raw, o.attempt), Queue(o.queue), Connection(o.connection))
}

// NewStringJob builds the payload of Queue::push(job, data) ("App\Jobs\Report@build"),
// data encoded with encoding/json.
func NewStringJob(job string, data any, opts ...Option) (*laraq.JobInfo, error) {
	o := build(opts)
	d, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("laraqtest: %w", err)
	}
	raw, err := payload.BuildString(job, d)
	if err != nil {
		return nil, fmt.Errorf("laraqtest: %w", err)
	}
	return NewJob(withAttempt(raw, o.attempt), Queue(o.queue), Connection(o.connection))
}

// withAttempt rewrites the trailing "attempts":0 a fresh Laravel 8 payload ends with.
func withAttempt(raw []byte, attempt int) []byte {
	const tail = `"attempts":0}`
	if attempt <= 1 || !bytes.HasSuffix(raw, []byte(tail)) {
		return raw
	}
	out := append(bytes.TrimSuffix(raw, []byte(`0}`)), strconv.Itoa(attempt-1)...)
	return append(out, '}')
}

// Result is what a handler decided for a job.
type Result struct {
	// Outcome is what the worker does next (see laraq.Outcome).
	Outcome laraq.Outcome
	// Delay is the release delay of OutcomeRelease.
	Delay time.Duration
	// Err is what the handler returned (nil for a plain success), a *laraq.PanicError
	// for a panic.
	Err error
	// Class is the class the job was routed under (after aliases), or
	// laraq.FallbackClass.
	Class string
	// Duration is how long the handler ran.
	Duration time.Duration
}

// Panicked reports whether the handler panicked.
func (r Result) Panicked() bool {
	var pe *laraq.PanicError
	return errors.As(r.Err, &pe)
}

// Run runs the handler jobs has for job, recovering a panic as the worker does, and
// returns its outcome. It fails with a *laraq.UnhandledError when no handler is
// registered for the job's class.
func Run(ctx context.Context, jobs *laraq.Jobs, job *laraq.JobInfo) (Result, error) {
	start := time.Now()
	as, err := jobs.Run(ctx, job)
	var ue *laraq.UnhandledError
	if as == "" && errors.As(err, &ue) {
		return Result{}, err
	}
	out, delay := laraq.OutcomeOf(err)
	return Result{Outcome: out, Delay: delay, Err: err, Class: as, Duration: time.Since(start)}, nil
}
