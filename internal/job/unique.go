package job

import "github.com/laraq/laraq/phpser"

// SetUniqueID says what the job's uniqueId() returns, for a handler that runs a job of a
// ShouldBeUnique class without a Go type implementing UniqueJob (HandleFunc, Fallback;
// `laraq work --forward` takes it from the service's X-Laraq-Unique-Id answer header).
// A uniqueId() method is PHP code laraq cannot run, and Laravel 8.x to 11.38 do not
// write the lock's key into the payload: with the classes' facts
// (WorkerConfig.Classes) the worker releases the lock under this id when PHP's worker
// would, and for a ShouldBeUniqueUntilProcessing class, which PHP unlocks before
// handle(), as soon as the handler returns. Without it that lock is held until its
// uniqueFor runs out.
func (j *JobInfo) SetUniqueID(id string) { j.uniqueID, j.uniqueIDSet = id, true }

// GivenUniqueID is the id a handler gave with SetUniqueID, if it gave one.
func GivenUniqueID(j *JobInfo) (string, bool) { return j.uniqueID, j.uniqueIDSet }

// DecodedCommand is the command Value decoded, without decoding it: nil when no one
// asked for it yet (or it did not decode).
func DecodedCommand(j *JobInfo) *phpser.Value {
	if !j.cmdSet {
		return nil
	}
	return j.cmd
}
