package laraq

// jobFailed is what CallQueuedHandler::failed() does besides the command's failed()
// method, which Go cannot run: release the unique lock (except
// ShouldBeUniqueUntilProcessing), then record the failure in the job's batch.
func (c *Worker) jobFailed(r *run, jr *jobRun, cause error) {
	c.uniqueAfterRun(r, jr, "on failure")
	c.batchJobFailed(r, jr)
}
