package rdb

import (
	"context"
)

// Finished is one job to delete with DeleteReservedMany: its bare queue name and the
// exact reserved bytes Pop returned for it.
type Finished struct {
	Queue    string
	Reserved []byte
}

// DeleteReservedMany deletes many finished jobs in one round trip: one ZREM per job,
// exactly what DeleteReserved sends, written together in a pipeline. A worker that
// finishes many jobs at the same moment saves the round trips, not the commands: each
// job is still removed by its own exact member, so the wire effect is that of PHP
// workers calling RedisQueue::deleteReserved one after the other.
//
// deleted[i] reports whether jobs[i] was still reserved. When the pipeline fails, err
// is the first error and errs[i] says, for each job, whether its ZREM failed (nil: it
// ran and deleted[i] is its result). A pipeline on a Redis Cluster is split by
// go-redis per node, so jobs of queues in different slots may be mixed.
func (r *RDB) DeleteReservedMany(ctx context.Context, jobs []Finished) (deleted []bool, errs []error, err error) {
	deleted = make([]bool, len(jobs))
	errs = make([]error, len(jobs))
	switch len(jobs) {
	case 0:
		return deleted, errs, nil
	case 1:
		deleted[0], errs[0] = r.DeleteReserved(ctx, jobs[0].Queue, jobs[0].Reserved)
		return deleted, errs, errs[0]
	}
	deleted, errs, _, err = r.DeleteReservedManyAnd(ctx, jobs, nil)
	return deleted, errs, err
}
