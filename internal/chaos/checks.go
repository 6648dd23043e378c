package chaos

import (
	"os"
	"sort"
	"strings"
	"time"
)

// Checks a scenario makes after Finish, on the facts it gathered.

// hostileEnds says where laraq documents each hostile kind ends: "invalid"
// (queues:NAME:invalid, for payloads Laravel's pop script cannot reserve), "failed" (a
// failed row: the command cannot be read), "ran" (a worker ran it), "" (any of them).
var hostileEnds = map[string]string{
	"notjson": "invalid", "noattempts": "invalid", "attemptsstr": "invalid", "array": "invalid", "deepjson": "invalid",
	"truncated": "failed", "deepcommand": "failed",
	"huge": "ran", "unknownclass": "ran",
	"badutf8": "", "floatattempt": "",
}

// CheckHostile fails the test when a hostile payload did not end where laraq documents
// it, and logs where each kind ended.
func (e *Env) CheckHostile() {
	e.T.Helper()
	in := e.inputs
	ran := map[string]bool{}
	for _, r := range in.Runs {
		if r.Outcome == OutcomeOK {
			ran[r.Key] = true
		}
	}
	failed := map[string]bool{}
	for _, f := range in.Failed {
		failed[f.Key()] = true
	}
	ends := map[string]map[string]int{}
	for _, j := range in.Jobs {
		if j.Hostile == "" {
			continue
		}
		var end []string
		if ran[j.Key] {
			end = append(end, "ran")
		}
		if failed[j.Key] {
			end = append(end, "failed")
		}
		end = append(end, in.Left[j.Key]...)
		got := strings.Join(end, "+")
		if ends[j.Hostile] == nil {
			ends[j.Hostile] = map[string]int{}
		}
		ends[j.Hostile][got]++
		if want := hostileEnds[j.Hostile]; want != "" && got != want {
			e.T.Errorf("hostile %s payload %s ended %q, want %q", j.Hostile, j.Key, got, want)
		}
	}
	kinds := make([]string, 0, len(ends))
	for k := range ends {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	for _, k := range kinds {
		e.T.Logf("hostile %-12s ended %v", k, ends[k])
	}
}

// CheckRanOn fails the test unless workers of each name prefix ran at least one job.
func (e *Env) CheckRanOn(prefixes ...string) {
	e.T.Helper()
	for _, p := range prefixes {
		n := 0
		for _, r := range e.inputs.Runs {
			if strings.HasPrefix(r.Worker, p) {
				n++
			}
		}
		if n == 0 {
			e.T.Errorf("no worker named %s* ran a job", p)
		}
		e.T.Logf("%s: workers %s* ran %d jobs", e.Name, p, n)
	}
}

// WaitPHPRuns waits until a PHP worker has journalled a run (it booted), or d passed.
func (e *Env) WaitPHPRuns(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		for _, w := range e.Fleet.Workers() {
			if fi, err := os.Stat(w.Record); w.PHP && err == nil && fi.Size() > 0 {
				return true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return false
}

// LogCount counts the log entries of every Go worker whose message contains msg.
func (e *Env) LogCount(msg string) int {
	n := 0
	for _, wl := range e.inputs.Logs {
		n += len(wl.Matching(msg))
	}
	return n
}
