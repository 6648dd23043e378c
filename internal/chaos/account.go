package chaos

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Where a job can be left in Redis at the end of a scenario.
const (
	LeftReady    = "ready"
	LeftDelayed  = "delayed"
	LeftReserved = "reserved"
	LeftInvalid  = "invalid"
)

// Inputs are the facts a scenario gathered once every worker has stopped.
type Inputs struct {
	Jobs   []Job
	Runs   []Run
	Kills  []Kill               // every kill -9 of a worker
	Logs   map[string]WorkerLog // by worker name; Go workers only
	Failed []FailedRow
	// Left lists, per job key, every place a copy of the job is still in Redis.
	Left map[string][]string
	// RetryAfter is the workers' retry_after, which decides whether a "ran longer than
	// retry_after" warning was true.
	RetryAfter time.Duration
}

// Result is the accounting of one scenario: one line of the table.
type Result struct {
	Scenario string
	Jobs     int
	Faults   []string // the faults injected, e.g. "20x kill -9"
	Runs     int

	// Lost jobs were dispatched and are nowhere: no successful run, no failed row, not
	// in Redis (ready, delayed, reserved or invalid).
	Lost int
	// LostByRedis are lost jobs whose push no replica was seen to hold before a failover
	// (Job.Unconfirmed): asynchronous replication lost them, not laraq. Not in Lost.
	LostByRedis int
	// SecondRows counts jobs with more than one failed row (also in RunTwice).
	SecondRows int
	// RunTwice counts jobs that ran again (or were failed, or are still queued) after a
	// successful run, ran twice at the same time, or have two failed rows or two copies
	// in Redis. Allowed are those whose earlier successful run's worker was killed with
	// -9 after the run started and before the log shows its acknowledgement: the
	// at-least-once contract. The others are Disallowed.
	RunTwice, DupAllowed, DupDisallowed int
	// Left counts the jobs left in each place in Redis.
	Left map[string]int
	// FailedRows is the number of failed_jobs rows; FailedWithoutRun those of jobs (not
	// hostile payloads) that never started a run.
	FailedRows, FailedWithoutRun int
	// AttemptGaps counts jobs whose runs skip an attempt number (an attempt spent by a
	// pop nobody received, or by a worker killed between pop and run).
	AttemptGaps int
	// FalseWarnings counts "no longer reserved ... ran longer than retry_after" warnings
	// about runs that did not run that long; OnlyInLog counts failed jobs whose row could
	// not be written ("the job is only in this log now").
	FalseWarnings, OnlyInLog int
	// Strangers counts runs, payloads in Redis and failed rows that belong to no job of
	// the scenario: a job's bytes mangled beyond recognition.
	Strangers int
	// Checks are the scenario's own measurements (healthz latency, stop times).
	Checks []Check

	// Tolerated are the problem kinds that do not fail this scenario, with why (open
	// faults the short form can hit by chance).
	Tolerated map[string]string

	Elapsed  time.Duration
	Examples []string // a few offending jobs, explained
}

// Check is one measured value of a scenario with its limit.
type Check struct {
	Name  string
	Value time.Duration
	Limit time.Duration
	Never bool // what was waited for never happened within Value
}

// OK reports whether the value is within the limit.
func (c Check) OK() bool { return !c.Never && c.Value <= c.Limit }

func (c Check) String() string {
	if c.Never {
		return fmt.Sprintf("%s never (%.1fs)/%.1fs OVER", c.Name, c.Value.Seconds(), c.Limit.Seconds())
	}
	mark := "ok"
	if !c.OK() {
		mark = "OVER"
	}
	return fmt.Sprintf("%s %.1fs/%.1fs %s", c.Name, c.Value.Seconds(), c.Limit.Seconds(), mark)
}

const maxExamples = 8

// inFlight is how long after a worker's kill a request it sent before dying may still
// reach the recorder (see accountant.allowed).
const inFlight = time.Second

func (r *Result) example(format string, args ...any) {
	if len(r.Examples) < maxExamples {
		r.Examples = append(r.Examples, fmt.Sprintf(format, args...))
	}
}

// Account computes the Result of a scenario from its Inputs.
func Account(name string, in Inputs) Result {
	res := Result{Scenario: name, Jobs: len(in.Jobs), Runs: len(in.Runs), Left: map[string]int{}, FailedRows: len(in.Failed)}
	runs := map[string][]Run{}
	for _, r := range in.Runs {
		runs[r.Key] = append(runs[r.Key], r)
	}
	failed := map[string][]FailedRow{}
	for _, f := range in.Failed {
		failed[f.Key()] = append(failed[f.Key()], f)
	}
	killed := map[string]time.Time{}
	for _, k := range in.Kills {
		killed[k.Worker] = k.At
	}
	a := accountant{in: in, killed: killed, res: &res}
	known := map[string]bool{}
	for _, j := range in.Jobs {
		known[j.Key] = true
		a.job(j, runs[j.Key], failed[j.Key], in.Left[j.Key])
	}
	for k, where := range in.Left {
		if !known[k] {
			res.Strangers += len(where)
			res.example("a payload in Redis (%s) belongs to no job: key %q", strings.Join(where, ", "), k)
		}
	}
	for k, rs := range runs {
		if !known[k] {
			res.Strangers += len(rs)
			res.example("run %s belongs to no job: key %q", rs[0].ID, k)
		}
	}
	for k, rows := range failed {
		if !known[k] {
			res.Strangers += len(rows)
			res.example("failed row %d belongs to no job: key %q", rows[0].ID, k)
		}
	}
	a.warnings()
	return res
}

type accountant struct {
	in     Inputs
	killed map[string]time.Time
	res    *Result
}

func (a *accountant) job(j Job, runs []Run, rows []FailedRow, left []string) {
	res := a.res
	for _, l := range left {
		res.Left[l]++
	}
	var firstOK *Run
	for i := range runs {
		if runs[i].Outcome == OutcomeOK {
			firstOK = &runs[i]
			break
		}
	}
	if firstOK == nil && len(rows) == 0 && len(left) == 0 {
		// An unconfirmed push may have run on the old master and then vanished with
		// everything the replica never got, its push included.
		if j.Unconfirmed {
			res.LostByRedis++
		} else {
			res.Lost++
			res.example("%s lost: %s, no failed row, not in Redis", j.Key, describeRuns(runs))
		}
	}
	if len(rows) > 1 {
		res.SecondRows++
	}
	if j.Hostile == "" && len(rows) > 0 && len(runs) == 0 {
		res.FailedWithoutRun++
		res.example("%s failed without having run: %s", j.Key, firstLine(rows[0].Exception))
	}
	if gap(runs) {
		res.AttemptGaps++
	}

	// Everything that happened to the job after its first successful run, and anything
	// doubled, is a second run.
	var again string
	var at time.Time
	switch {
	case len(rows) > 1:
		again, at = fmt.Sprintf("%d failed rows", len(rows)), time.Now()
	case len(left) > 1:
		again, at = fmt.Sprintf("%d copies in Redis (%s)", len(left), strings.Join(left, ", ")), time.Now()
	case overlapping(runs, a.killed) != "":
		again, at = overlapping(runs, a.killed), time.Now()
	case firstOK != nil:
		for _, r := range runs {
			if r.ID != firstOK.ID && !r.Start.Before(firstOK.Start) {
				again, at = fmt.Sprintf("ran again (%s, attempt %d) after a successful run", r.Worker, r.Attempt), r.Start
				break
			}
		}
		if again == "" && len(rows) > 0 {
			again, at = "failed after a successful run: "+firstLine(rows[0].Exception), time.Now()
		}
		if again == "" {
			for _, l := range left {
				if l != LeftInvalid {
					again, at = "still "+l+" in Redis after a successful run", time.Now()
					break
				}
			}
		}
	}
	if again == "" {
		return
	}
	res.RunTwice++
	if firstOK != nil && a.allowed(*firstOK, at) {
		res.DupAllowed++
		return
	}
	res.DupDisallowed++
	if firstOK != nil {
		res.example("%s %s; first success by %s at %s, %s", j.Key, again, firstOK.Worker,
			firstOK.End.Format("15:04:05.000"), describeRuns(runs))
	} else {
		res.example("%s %s; %s", j.Key, again, describeRuns(runs))
	}
}

// allowed reports whether the at-least-once contract allows a job to run again after
// the successful run ok: its worker was killed with -9 after the run started and
// before `at` (the next run), and its log shows neither the acknowledgement nor that
// the worker gave it up (then the worker, not the kill, lost it).
//
// A run's start is when the recorder got the worker's request, which can come after
// the kill: a request the worker sent just before it died is still read and answered
// (a dead process sends nothing, so such a run was in flight at the kill). A start up
// to inFlight after the kill counts as before it.
func (a *accountant) allowed(ok Run, at time.Time) bool {
	k, wasKilled := a.killed[ok.Worker]
	if !wasKilled || k.Add(inFlight).Before(ok.Start) || k.After(at) {
		return false
	}
	acked, gaveUp := a.in.Logs[ok.Worker].AckOf(ok.JobID, ok.Start)
	return !acked && !gaveUp
}

// overlapping describes two runs of one job in progress at the same time ("" if none).
// A run without an end record whose worker was killed ended at the kill. A cancelled run
// does not count: its worker had given it up (timeout, hard stop: the job may already be
// released) before the recorder noticed the closed connection and wrote its end.
func overlapping(runs []Run, killed map[string]time.Time) string {
	for i := 1; i < len(runs); i++ {
		prev, next := runs[i-1], runs[i]
		if prev.Outcome == OutcomeCancelled {
			continue
		}
		end := prev.End
		if end.IsZero() {
			end = killed[prev.Worker]
		}
		if end.IsZero() || next.Start.Before(end) {
			return fmt.Sprintf("ran twice at once (%s and %s)", prev.Worker, next.Worker)
		}
	}
	return ""
}

// gap reports whether the attempts of runs skip a number, or start above 1.
func gap(runs []Run) bool {
	want := 1
	for _, r := range runs {
		if r.Attempt == 0 {
			continue // a worker that does not report attempts
		}
		if r.Attempt > want {
			return true
		}
		want = r.Attempt + 1
	}
	return false
}

// warnings counts the false "ran longer than retry_after" warnings and the jobs that
// ended up only in a log.
func (a *accountant) warnings() {
	names := make([]string, 0, len(a.in.Logs))
	for n := range a.in.Logs {
		names = append(names, n)
	}
	sort.Strings(names)
	byWorkerJob := map[string][]Run{}
	for _, r := range a.in.Runs {
		byWorkerJob[r.Worker+"\x00"+r.JobID] = append(byWorkerJob[r.Worker+"\x00"+r.JobID], r)
	}
	for _, n := range names {
		wl := a.in.Logs[n]
		for _, e := range wl.Matching(MsgNotReserved) {
			// The run this warning is about: the last of that job on that worker before it.
			var run *Run
			for i, r := range byWorkerJob[n+"\x00"+e.Job()] {
				if !r.Start.After(e.Time) {
					run = &byWorkerJob[n+"\x00"+e.Job()][i]
				}
			}
			if run == nil {
				continue
			}
			// The reservation expires retry_after after the pop. The worker logs
			// Processing right after the pop; the run's start record can come much later
			// (the journal's fsync on a busy disk). A second of slack covers the rest.
			popped := run.Start
			if p, ok := wl.Last(MsgProcessing, e.Job(), e.Time); ok && p.Before(popped) {
				popped = p
			}
			if held := e.Time.Sub(popped); held < a.in.RetryAfter-time.Second {
				a.res.FalseWarnings++
				a.res.example("false warning on %s: job %s was acknowledged %.1fs after it was taken (retry_after %s)",
					n, run.Key, held.Seconds(), a.in.RetryAfter)
			}
		}
		a.res.OnlyInLog += len(wl.Matching(MsgOnlyInLog))
	}
}

func describeRuns(runs []Run) string {
	if len(runs) == 0 {
		return "never ran"
	}
	parts := make([]string, len(runs))
	for i, r := range runs {
		out := r.Outcome
		switch {
		case out == "":
			out = "no end"
		case r.Unanswered:
			out = r.Decided + " unanswered"
		}
		parts[i] = fmt.Sprintf("%s a%d %s", r.Worker, r.Attempt, out)
	}
	return "runs [" + strings.Join(parts, "; ") + "]"
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	if len(l) > 160 {
		l = l[:160] + "…"
	}
	return l
}
