package chaos

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/redis/go-redis/v9"
)

// Finish stops every worker (SIGTERM, up to stopWithin each), gathers the facts, and
// accounts for every job: the Result goes to the table and the test fails on each of
// Problems.
func (e *Env) Finish(stopWithin time.Duration) Result {
	e.T.Helper()
	if err := e.Fleet.StopAll(stopWithin); err != nil {
		e.T.Error(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	in, err := e.gather(ctx)
	if err != nil {
		e.T.Fatal(err)
	}
	e.inputs = in
	res := Account(e.Name, in)
	e.mu.Lock()
	for _, k := range e.order {
		res.Faults = append(res.Faults, fmt.Sprintf("%dx %s", e.faults[k], k))
	}
	res.Checks = append(res.Checks, e.checks...)
	e.mu.Unlock()
	res.Elapsed = time.Since(e.start)

	e.mu.Lock()
	res.Tolerated = e.tolerated
	e.mu.Unlock()
	var problems []string
	for _, p := range res.Problems() {
		if why, ok := res.Tolerated[p.Kind]; ok {
			e.T.Logf("%s: tolerated: %s (%s)", e.Name, p.Text, why)
			continue
		}
		problems = append(problems, p.Text)
	}
	for _, err := range e.Recorder.Errors() {
		problems = append(problems, "recorder: "+err.Error())
	}
	for _, w := range e.Fleet.Workers() {
		if code, exited := w.ExitStatus(); exited && code != 0 && w.KilledAt().IsZero() {
			problems = append(problems, fmt.Sprintf("worker %s exited with status %d:\n%s", w.Name, code, w.Output(2000)))
		}
	}
	for name, wl := range in.Logs {
		for _, l := range wl.Other {
			if strings.HasPrefix(l, "panic:") || strings.HasPrefix(l, "fatal error:") {
				problems = append(problems, fmt.Sprintf("worker %s crashed: %s", name, l))
			}
		}
	}
	e.T.Log(res.Line())
	for _, x := range res.Examples {
		e.T.Log("  " + x)
	}
	if e.table != nil {
		e.table.Add(res)
	}
	for _, p := range problems {
		e.T.Error(p)
	}
	return res
}

// gather reads the journals, the worker logs, the failed rows and what is left in Redis.
func (e *Env) gather(ctx context.Context) (Inputs, error) {
	in := Inputs{Kills: e.Fleet.Kills(), Logs: map[string]WorkerLog{}, RetryAfter: time.Duration(e.RetryAfter) * time.Second}
	e.mu.Lock()
	in.Jobs = append(in.Jobs, e.jobs...)
	e.mu.Unlock()

	journals := []string{e.Recorder.Journal()}
	for _, w := range e.Fleet.Workers() {
		if w.PHP {
			if fileExists(w.Record) {
				journals = append(journals, w.Record)
			}
			continue
		}
		wl, err := ReadWorkerLogs(w.Stdout, w.Stderr)
		if err != nil {
			return in, err
		}
		sort.SliceStable(wl.Entries, func(i, j int) bool { return wl.Entries[i].Time.Before(wl.Entries[j].Time) })
		in.Logs[w.Name] = wl
	}
	var recs []Record
	for _, j := range journals {
		r, _, err := ReadJournalFile(j)
		if err != nil {
			return in, err
		}
		recs = append(recs, r...)
	}
	runs, err := Runs(recs)
	if err != nil {
		return in, err
	}
	in.Runs = runs
	if in.Failed, err = ReadFailed(ctx, e.FailedDSN); err != nil {
		return in, err
	}
	in.Left, err = LeftInRedis(ctx, e.Client, e.Prefix, e.Queue)
	return in, err
}

// LeftInRedis lists, per job key, where copies of it are in a queue's keys.
func LeftInRedis(ctx context.Context, c redis.UniversalClient, prefix, queue string) (map[string][]string, error) {
	k := rdb.NewQueueKeys(prefix, queue, false)
	left := map[string][]string{}
	reads := []struct {
		where string
		read  func() ([]string, error)
	}{
		{LeftReady, c.LRange(ctx, k.Queue, 0, -1).Result},
		{LeftDelayed, c.ZRange(ctx, k.Delayed, 0, -1).Result},
		{LeftReserved, c.ZRange(ctx, k.Reserved, 0, -1).Result},
		{LeftInvalid, c.LRange(ctx, k.Invalid, 0, -1).Result},
	}
	for _, r := range reads {
		payloads, err := r.read()
		if err != nil {
			return nil, fmt.Errorf("chaos: reading %s jobs: %w", r.where, err)
		}
		for _, p := range payloads {
			key := FindKey([]byte(p))
			left[key] = append(left[key], r.where)
		}
	}
	return left, nil
}

// Kinds of problem a scenario can show.
const (
	ProblemLost          = "lost"
	ProblemRunTwice      = "run twice"
	ProblemFailedNoRun   = "failed without run"
	ProblemFalseWarnings = "false warnings"
	ProblemOnlyInLog     = "only in log"
	ProblemCheck         = "check"
	ProblemStrangers     = "strangers"
	ProblemSecondRows    = "second failed rows"
)

// Problem is one thing a scenario must not show.
type Problem struct {
	Kind string
	Text string
}

// Problems lists what the scenario must not show: lost jobs, disallowed second runs,
// failed jobs that never ran, false warnings, jobs only in a log, checks over their
// limits, bytes that belong to no job.
func (r Result) Problems() []Problem {
	var out []Problem
	add := func(kind string, n int, format string) {
		if n > 0 {
			out = append(out, Problem{kind, fmt.Sprintf(format, n)})
		}
	}
	add(ProblemLost, r.Lost, "%d jobs lost")
	add(ProblemRunTwice, r.DupDisallowed, "%d jobs ran twice beyond the at-least-once contract")
	add(ProblemSecondRows, r.SecondRows, "%d jobs have more than one failed row")
	add(ProblemFailedNoRun, r.FailedWithoutRun, "%d jobs failed without having run")
	add(ProblemFalseWarnings, r.FalseWarnings, "%d false \"ran longer than retry_after\" warnings")
	add(ProblemOnlyInLog, r.OnlyInLog, "%d failed jobs exist only in a worker's log")
	add(ProblemStrangers, r.Strangers, "%d runs, payloads in Redis or failed rows belong to no job of the scenario")
	for _, c := range r.Checks {
		if !c.OK() {
			out = append(out, Problem{ProblemCheck, "check over its limit: " + c.String()})
		}
	}
	return out
}

// Pass reports whether every problem is of a tolerated kind.
func (r Result) Pass() bool {
	for _, p := range r.Problems() {
		if _, ok := r.Tolerated[p.Kind]; !ok {
			return false
		}
	}
	return true
}

// Line is the one-line summary of the scenario.
func (r Result) Line() string {
	status := "PASS"
	if !r.Pass() {
		status = "FAIL"
	}
	return fmt.Sprintf("%s %s: jobs %d, runs %d, faults [%s], lost %d%s, run twice %d (allowed %d, disallowed %d), left %s, failed rows %d, failed without run %d, attempt gaps %d, false warnings %d, only in log %d%s, %s",
		status, r.Scenario, r.Jobs, r.Runs, strings.Join(r.Faults, ", "), r.Lost, r.lostByRedisText(), r.RunTwice, r.DupAllowed, r.DupDisallowed,
		r.leftText(), r.FailedRows, r.FailedWithoutRun, r.AttemptGaps, r.FalseWarnings, r.OnlyInLog, r.checksText(), r.Elapsed.Round(time.Second))
}

func (r Result) lostByRedisText() string {
	if r.LostByRedis == 0 {
		return ""
	}
	return fmt.Sprintf(" (+%d lost by Redis: pushes no replica held)", r.LostByRedis)
}

func (r Result) leftText() string {
	return fmt.Sprintf("%d/%d/%d/%d", r.Left[LeftReady], r.Left[LeftDelayed], r.Left[LeftReserved], r.Left[LeftInvalid])
}

// checksText lists the checks, those of one name folded into one entry with their
// count and worst value.
func (r Result) checksText() string {
	if len(r.Checks) == 0 {
		return ""
	}
	var names []string
	worst := map[string]Check{}
	count := map[string]int{}
	for _, c := range r.Checks {
		w, seen := worst[c.Name]
		if !seen {
			names = append(names, c.Name)
		}
		count[c.Name]++
		if !seen || c.Never || (!w.Never && c.Value > w.Value) {
			worst[c.Name] = c
		}
	}
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = worst[n].String()
		if count[n] > 1 {
			parts[i] = fmt.Sprintf("%dx %s (worst)", count[n], parts[i])
		}
	}
	return ", checks [" + strings.Join(parts, "; ") + "]"
}

// Table collects the results of several scenarios.
type Table struct {
	mu   sync.Mutex
	rows []Result
}

// Add adds a result.
func (t *Table) Add(r Result) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.rows = append(t.rows, r)
}

// Len is the number of results.
func (t *Table) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.rows)
}

// String renders the results as a Markdown table, one row per scenario.
func (t *Table) String() string {
	t.mu.Lock()
	rows := append([]Result(nil), t.rows...)
	t.mu.Unlock()
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Scenario < rows[j].Scenario })
	var b strings.Builder
	b.WriteString("| scenario | result | jobs | faults | runs | lost | run twice (allowed/disallowed) | left r/d/res/inv | failed rows | failed w/o run | attempt gaps | false warnings | only in log | checks | time |\n")
	b.WriteString("| --- | --- | ---: | --- | ---: | ---: | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |\n")
	for _, r := range rows {
		status := "pass"
		if !r.Pass() {
			status = "**FAIL**"
		}
		checks := strings.TrimPrefix(strings.TrimSuffix(r.checksText(), "]"), ", checks [")
		fmt.Fprintf(&b, "| %s | %s | %d | %s | %d | %d%s | %d (%d/%d) | %s | %d | %d | %d | %d | %d | %s | %s |\n",
			r.Scenario, status, r.Jobs, strings.Join(r.Faults, ", "), r.Runs, r.Lost, r.lostByRedisText(), r.RunTwice, r.DupAllowed, r.DupDisallowed,
			r.leftText(), r.FailedRows, r.FailedWithoutRun, r.AttemptGaps, r.FalseWarnings, r.OnlyInLog, checks, r.Elapsed.Round(time.Second))
	}
	return b.String()
}
