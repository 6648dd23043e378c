package laraq

// jobFailed is what CallQueuedHandler::failed() does besides the command's failed()
// method, which Go cannot run: release the unique lock (except ShouldBeUniqueUntilProcessing).
func (c *Worker) jobFailed(r *run, jr *jobRun, cause error) {
	c.uniqueAfterRun(r, jr, "on failure")
}

// batchJobSucceeded records a batched job's success (batch.go).
func (c *Worker) batchJobSucceeded(r *run, jr *jobRun) {}
