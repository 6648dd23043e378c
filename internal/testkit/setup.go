package testkit

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/failed"
)

// Setup is a worker test's whole configuration: the connection's settings beside
// queue:work's options, as these tests vary both. newWorker splits it into the
// Connection and WorkerConfig a program passes to laraq.NewWorker.
type Setup struct {
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
	Failed             FailedLogger // nil: no store

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

// FailedLogger is the part of failed.Store a worker uses; test stores implement only it.
type FailedLogger interface {
	Log(ctx context.Context, connection, queue string, payload []byte, exception string) (string, error)
}

// LogStore completes a FailedLogger into a failed.Store.
type LogStore struct{ FailedLogger }

func (LogStore) All(context.Context) ([]failed.Record, error)         { return nil, nil }
func (LogStore) Find(context.Context, string) (*failed.Record, error) { return nil, nil }
func (LogStore) Forget(context.Context, string) (bool, error)         { return false, nil }
func (LogStore) Flush(context.Context, time.Duration) error           { return nil }
func (LogStore) Prune(context.Context, time.Time) (int64, error)      { return 0, nil }
func (LogStore) Ids(context.Context, string) ([]string, error)        { return nil, nil }
func (LogStore) Close() error                                         { return nil }

// connection is the setup's Connection on client.
func (s Setup) NewConnection(client redis.UniversalClient) *laraq.Connection {
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
		conn.Failed = LogStore{st}
	}
	return conn
}

// workerConfig is the setup's WorkerConfig.
func (s Setup) WorkerConfig() laraq.WorkerConfig {
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

// NewWorker builds the worker a setup describes.
func NewWorker(client redis.UniversalClient, s Setup) (*laraq.Worker, error) {
	return laraq.NewWorker(s.NewConnection(client), s.Registry, s.WorkerConfig())
}

// Register is laraq.HandleClass for a handler written as (ctx, cmd, job), the form these
// tests use.
func Register[T any](jobs *laraq.Jobs, class string, fn func(ctx context.Context, cmd *T, job *laraq.JobInfo) error) {
	laraq.HandleClass(jobs, class, func(ctx context.Context, j *laraq.Job[T]) error { return fn(ctx, &j.Command, j.JobInfo) })
}

// DispatchSetup is a dispatcher test's configuration.
type DispatchSetup struct {
	Prefix          string
	Connection      string
	DefaultQueue    string
	Release         laraq.Release // zero: 8.83
	ClusterHashTags bool
	Now             func() time.Time
	NewID           func() string
	NewUUID         func() string
}

// MustRelease parses a release for a test.
func MustRelease(t testing.TB, s string) laraq.Release {
	t.Helper()
	r, err := laraq.ParseRelease(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// NewDispatcher builds the dispatcher a dispatchSetup describes.
func NewDispatcher(client redis.UniversalClient, s DispatchSetup) (*laraq.Dispatcher, error) {
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
