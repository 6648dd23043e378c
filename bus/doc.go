// Package bus is Laravel's job batches (Illuminate\Bus) as a Go worker sees them: a
// job_batches row (Batch) and the BatchRepository that updates it when a batched job
// finishes, the way Illuminate\Bus\DatabaseBatchRepository does. It links no SQL driver:
// package bus/database is the SQL repository, which laravel.Connect opens on the
// application's queue.batching database.
//
// When a batched job succeeds, PHP's CallQueuedHandler calls Batch::recordSuccessfulJob:
// pending_jobs is decremented (and the job's uuid removed from failed_job_ids) in a
// transaction that locks the row, and the batch is marked finished (finished_at = now)
// when no job is pending. When one fails, Batch::recordFailedJob increments failed_jobs
// (adding the uuid to failed_job_ids) and cancels the batch (cancelled_at = finished_at =
// now) on its first failure unless it allows failures. RecordSuccessfulJob and
// RecordFailedJob do the same. The batch's then, catch, finally and progress callbacks
// are PHP closures kept in the options column: Go cannot run them, and says so.
package bus
