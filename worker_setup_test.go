package laraq_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/failed"
)

// setup is a worker test's whole configuration: the connection's settings beside
// queue:work's options, as these tests vary both. newWorker splits it into the
// Connection and WorkerConfig a program passes to laraq.NewWorker.
type setup struct {
	// The connection.
	Prefix             string
	Connection         string
	DefaultQueue       string
	Release            laraq.Release // zero: 8.83, the release these tests were written against
	ClusterHashTags    bool
	RetryAfter         time.Duration
	BlockFor           *time.Duration
	MigrationBatchSize int
	Cache              laraq.CacheStore
	Failed             failedLogger // nil: no store

	// The worker.
	Registry        *laraq.Jobs
	Queues          []string
	Unhandled       laraq.UnhandledPolicy
	Concurrency     int
	Sleep           time.Duration
	MigrateInterval time.Duration
	Tries           *int // nil: queue:work's default; 0: unlimited (--tries=0)
	Backoff         []int
	Timeout         time.Duration
	TimeoutReleases bool
	MaxJobs         int
	MaxTime         time.Duration
	StopWhenEmpty   bool
	Rest            time.Duration
	MemoryLimit     int64
	SignalInterval  time.Duration
	ShutdownGrace   time.Duration
	Logger          *slog.Logger
	Now             func() time.Time
	OnEvent         func(laraq.Event)
}

// failedLogger is the part of failed.Store a worker uses; test stores implement only it.
type failedLogger interface {
	Log(ctx context.Context, connection, queue string, payload []byte, exception string) (string, error)
}

// logStore completes a failedLogger into a failed.Store.
type logStore struct{ failedLogger }

func (logStore) All(context.Context) ([]failed.Record, error)         { return nil, nil }
func (logStore) Find(context.Context, string) (*failed.Record, error) { return nil, nil }
func (logStore) Forget(context.Context, string) (bool, error)         { return false, nil }
func (logStore) Flush(context.Context, time.Duration) error           { return nil }
func (logStore) Prune(context.Context, time.Time) (int64, error)      { return 0, nil }
func (logStore) Ids(context.Context, string) ([]string, error)        { return nil, nil }
func (logStore) Close() error                                         { return nil }

// connection is the setup's Connection on client.
func (s setup) connection(client redis.UniversalClient) *laraq.Connection {
	rel := s.Release
	if rel.IsZero() {
		rel = laraq.Release{Major: 8, Minor: 83}
	}
	conn := &laraq.Connection{
		Client: client, Name: s.Connection, Prefix: s.Prefix, Queue: s.DefaultQueue, Release: rel,
		HashTags: s.ClusterHashTags, RetryAfter: s.RetryAfter, BlockFor: s.BlockFor,
		MigrationBatchSize: s.MigrationBatchSize, Cache: s.Cache,
	}
	switch st := s.Failed.(type) {
	case nil:
	case failed.Store:
		conn.Failed = st
	default:
		conn.Failed = logStore{st}
	}
	return conn
}

// workerConfig is the setup's WorkerConfig.
func (s setup) workerConfig() laraq.WorkerConfig {
	c := laraq.WorkerConfig{
		Queues: s.Queues, Unhandled: s.Unhandled, Concurrency: s.Concurrency, Sleep: s.Sleep,
		MigrateInterval: s.MigrateInterval, Backoff: s.Backoff, Timeout: s.Timeout,
		TimeoutReleases: s.TimeoutReleases, MaxJobs: s.MaxJobs, MaxTime: s.MaxTime,
		StopWhenEmpty: s.StopWhenEmpty, Rest: s.Rest, MemoryLimit: s.MemoryLimit,
		SignalInterval: s.SignalInterval, ShutdownGrace: s.ShutdownGrace, Logger: s.Logger, Now: s.Now, OnEvent: s.OnEvent,
	}
	if s.Tries != nil {
		c.Tries = *s.Tries
		if c.Tries == 0 {
			c.Tries = laraq.UnlimitedTries
		}
	}
	return c
}

// newWorker builds the worker a setup describes.
func newWorker(client redis.UniversalClient, s setup) (*laraq.Worker, error) {
	return laraq.NewWorker(s.connection(client), s.Registry, s.workerConfig())
}

// register is laraq.HandleClass for a handler written as (ctx, cmd, job), the form these
// tests use.
func register[T any](jobs *laraq.Jobs, class string, fn func(ctx context.Context, cmd *T, job *laraq.JobInfo) error) {
	laraq.HandleClass(jobs, class, func(ctx context.Context, j *laraq.Job[T]) error { return fn(ctx, &j.Command, j.JobInfo) })
}

// dispatchSetup is a dispatcher test's configuration.
type dispatchSetup struct {
	Prefix          string
	Connection      string
	DefaultQueue    string
	Release         laraq.Release // zero: 8.83
	ClusterHashTags bool
	Now             func() time.Time
	NewID           func() string
	NewUUID         func() string
}

// mustRelease parses a release for a test.
func mustRelease(t testing.TB, s string) laraq.Release {
	t.Helper()
	r, err := laraq.ParseRelease(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// newDispatcher builds the dispatcher a dispatchSetup describes.
func newDispatcher(client redis.UniversalClient, s dispatchSetup) (*laraq.Dispatcher, error) {
	rel := s.Release
	if rel.IsZero() {
		rel = laraq.Release{Major: 8, Minor: 83}
	}
	conn := &laraq.Connection{Client: client, Name: s.Connection, Prefix: s.Prefix, Queue: s.DefaultQueue, Release: rel, HashTags: s.ClusterHashTags}
	var opts []laraq.Option
	if s.Now != nil {
		opts = append(opts, laraq.WithClock(s.Now))
	}
	if s.NewID != nil || s.NewUUID != nil {
		opts = append(opts, laraq.WithIDs(s.NewID, s.NewUUID))
	}
	return laraq.NewDispatcher(conn, opts...)
}
