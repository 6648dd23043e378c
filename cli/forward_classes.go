package cli

import (
	"net/http"

	"github.com/laraq/laraq"
)

// What `laraq work --forward --classes FILE` adds to forwarding: the class's facts in the
// body, so that a service in another language knows each property's visibility and
// default as PHP declares them, and the unique id the service answers with, so that the
// worker releases the lock of a class whose uniqueId() is a method.

// uniqueIDHeader is the answer header that says what the job's uniqueId() returns.
const uniqueIDHeader = "X-Laraq-Unique-Id"

// factsOf is the class_facts member of a job's body: nil without --classes, for a class
// the manifest lacks, or a command that does not decode (the payload says why).
func (f *forwarder) factsOf(job *laraq.JobInfo) *classFacts {
	if f.classes == nil || !job.IsObjectJob() {
		return nil
	}
	v, err := job.Value()
	if err != nil {
		return nil
	}
	facts, err := factsOfValue(f.classes, v.Deref())
	if err != nil {
		return nil
	}
	return facts
}

// noteUniqueID hands the worker the id the service answered with (an empty header is
// the empty id, which uniqueId() may return).
func noteUniqueID(job *laraq.JobInfo, resp *http.Response) {
	if ids, ok := resp.Header[http.CanonicalHeaderKey(uniqueIDHeader)]; ok && len(ids) > 0 {
		job.SetUniqueID(ids[0])
	}
}
