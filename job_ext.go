package laraq

import (
	"github.com/laraq/laraq/encryption"
	"github.com/laraq/laraq/phpser"
)

// jobExt is what a worker attaches to each JobInfo for the Laravel features that live
// beside the handler: the Encrypter of encrypted commands, the unique lock and the
// batch. A JobInfo built outside a worker (package laraqtest) has none.
type jobExt struct {
	w         *Worker
	encrypter *encryption.Encrypter
	command   any // the Go command a typed handler decoded (for UniqueJob and friends)
}

// prepareJob attaches the worker's extensions to a job just parsed, and reads what the
// envelope already says (data.batchId).
func (c *Worker) prepareJob(job *JobInfo) {
	job.ext = &jobExt{w: c, encrypter: c.conn.Encrypter}
	if b := job.Payload.BatchID; b != nil {
		job.BatchID = *b
	}
}

// noteBatch takes the batch id from a decoded command's batchId property (the Batchable
// trait) when the envelope did not carry data.batchId.
func (j *JobInfo) noteBatch(cmd *phpser.Value) {
	if j.BatchID != "" || cmd == nil {
		return
	}
	if v, ok := publicProp(cmd, "batchId"); ok && v.Kind() == phpser.KindString {
		j.BatchID = v.Str()
	}
}
