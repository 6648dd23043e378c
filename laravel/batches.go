package laravel

import (
	"context"
	"errors"
	"log/slog"

	"github.com/laraq/laraq"
	busdb "github.com/laraq/laraq/bus/database"
)

// BatchTable is config/queue.php's batching.table in every skeleton.
const BatchTable = busdb.DefaultTable

// connectBatches opens the job_batches table of the application (config/queue.php's
// batching: database env('DB_CONNECTION'), table job_batches), the database its
// failed_jobs table lives in, so that Go workers record batched jobs as PHP's do. An
// application without that table (no batches) gets no repository, noted at debug level;
// an application whose database laraq does not know gets none either.
func (c *Config) connectBatches(ctx context.Context, conn *laraq.Connection, logger *slog.Logger) {
	if logger == nil {
		logger = slog.Default()
	}
	dsn, local, err := c.FailedStore()
	if err != nil || local || dsn == "" || dsn == "null" {
		logger.Debug("no application database: job_batches is not updated by this worker")
		return
	}
	repo, err := busdb.Open(ctx, dsn, BatchTable)
	switch {
	case errors.Is(err, busdb.ErrNoTable):
		logger.Debug("the application has no job_batches table: batched jobs are not recorded", "err", err)
		return
	case err != nil:
		logger.Warn("opening job_batches failed: batched jobs run by this worker will not update their batch", "database", RedactDSN(dsn), "err", err)
		return
	}
	conn.Batches = repo
	conn.Owned = append(conn.Owned, repo)
}
