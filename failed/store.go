package failed

import (
	"context"
	"time"
)

// Record is one failed job, as `php artisan queue:failed` sees it.
type Record struct {
	// ID addresses the record in Find, Forget and `queue:retry`/`queue:forget`: the uuid
	// for DatabaseUUIDs, the auto-increment id as decimal text for Database.
	ID string
	// UUID is the row's uuid column (empty for Database).
	UUID string
	// Connection is the queue connection name, e.g. "redis".
	Connection string
	// Queue is the bare queue name, e.g. "default".
	Queue string
	// Payload is the job exactly as popped for the failing attempt.
	Payload []byte
	// Exception is the failure as PHP prints a Throwable (see Exception.String).
	Exception string
	// FailedAt is the failed_at column read as wall-clock time in Options.Location.
	FailedAt time.Time
}

// Store is a failed-job store that PHP's `queue:failed`, `queue:retry`, `queue:forget` and
// `queue:flush` can work with, and that reads the rows PHP wrote. Implementations are safe
// for concurrent use.
type Store interface {
	// Log writes a failed job and returns its ID. payload is stored byte for byte. A
	// store addressed by uuid writes no second row for a uuid already recorded on the
	// same connection and queue (the same job failing again, as after a Redis failover):
	// it returns that row's ID, so that `queue:retry all` queues the job once.
	Log(ctx context.Context, connection, queue string, payload []byte, exception string) (id string, err error)
	// All returns every record, newest first (ordered by the auto-increment id
	// descending, like Laravel's all()).
	All(ctx context.Context) ([]Record, error)
	// Find returns the record with this ID, or nil, nil when there is none.
	Find(ctx context.Context, id string) (*Record, error)
	// Forget deletes the record with this ID and reports whether one was deleted.
	Forget(ctx context.Context, id string) (bool, error)
	// Flush deletes every record when olderThan is 0 (`queue:flush`), otherwise the
	// records that failed at or before now-olderThan (`queue:flush --hours`, Laravel 10+).
	Flush(ctx context.Context, olderThan time.Duration) error
	// Prune deletes the records that failed strictly before `before` and returns how many
	// (`queue:prune-failed`).
	Prune(ctx context.Context, before time.Time) (int64, error)
	// Ids returns the IDs `queue:retry all` (queue == "") or `queue:retry --queue=NAME`
	// would retry, in the same order (newest first). Queue names match exactly.
	Ids(ctx context.Context, queue string) ([]string, error)
	// Close releases the database handle.
	Close() error
}

// nullStore is Laravel's NullFailedJobProvider: nothing is kept.
type nullStore struct{}

// NewNull returns a Store that keeps nothing, like the "null" failed driver: Log returns
// an empty ID, All and Ids return nothing, Find returns nil and Forget false.
func NewNull() Store { return nullStore{} }

func (nullStore) Log(context.Context, string, string, []byte, string) (string, error) {
	return "", nil
}
func (nullStore) All(context.Context) ([]Record, error)           { return nil, nil }
func (nullStore) Find(context.Context, string) (*Record, error)   { return nil, nil }
func (nullStore) Forget(context.Context, string) (bool, error)    { return false, nil }
func (nullStore) Flush(context.Context, time.Duration) error      { return nil }
func (nullStore) Prune(context.Context, time.Time) (int64, error) { return 0, nil }
func (nullStore) Ids(context.Context, string) ([]string, error)   { return nil, nil }
func (nullStore) Close() error                                    { return nil }
func (nullStore) String() string                                  { return "null" }
