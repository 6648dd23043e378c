package chaos

import (
	"strings"
	"testing"
	"time"
)

var t0 = time.Unix(1_800_000_000, 0)

func at(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }

func run(id, worker, key string, attempt, startMS, endMS int, outcome string) Run {
	r := Run{ID: id, Worker: worker, Key: key, JobID: "id-" + key, Attempt: attempt, Start: at(startMS), Outcome: outcome}
	if endMS >= 0 {
		r.End = at(endMS)
	}
	return r
}

func processed(key string, ms int) LogEntry {
	return LogEntry{Time: at(ms), Msg: MsgProcessed, Status: "success", JobID: "id-" + key}
}

func TestAccount(t *testing.T) {
	jobs := func(keys ...string) []Job {
		out := make([]Job, len(keys))
		for i, k := range keys {
			out[i] = Job{Key: k}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		in   Inputs
		want Result // only the counters below are compared
	}{
		{name: "one successful run", in: Inputs{Jobs: jobs("a"), Runs: []Run{run("1", "w.1", "a", 1, 0, 5, OutcomeOK)}}},
		{name: "never ran and nowhere", in: Inputs{Jobs: jobs("a")}, want: Result{Lost: 1}},
		{name: "ran, failed its attempt, nowhere", in: Inputs{Jobs: jobs("a"), Runs: []Run{run("1", "w.1", "a", 1, 0, 5, OutcomeFail)}},
			want: Result{Lost: 1}},
		{name: "still reserved is not lost", in: Inputs{Jobs: jobs("a"), Left: map[string][]string{"a": {LeftReserved}}},
			want: Result{Left: map[string]int{LeftReserved: 1}}},
		{name: "a failed row without a suite key belongs to nobody", in: Inputs{Jobs: jobs("a"), Failed: []FailedRow{{ID: 1, Payload: `{"key":"a"}`}}},
			want: Result{FailedRows: 1, Lost: 1, Strangers: 1}},
		{name: "killed before its acknowledgement: allowed",
			in: Inputs{Jobs: jobs("a"), Kills: []Kill{{Worker: "w.1", At: at(6)}},
				Runs: []Run{run("1", "w.1", "a", 1, 0, 5, OutcomeOK), run("2", "w.2", "a", 2, 3000, 3005, OutcomeOK)}},
			want: Result{RunTwice: 1, DupAllowed: 1}},
		{name: "killed after the log shows the acknowledgement: disallowed",
			in: Inputs{Jobs: jobs("a"), Kills: []Kill{{Worker: "w.1", At: at(9)}},
				Logs: map[string]WorkerLog{"w.1": {Entries: []LogEntry{processed("a", 6)}}},
				Runs: []Run{run("1", "w.1", "a", 1, 0, 5, OutcomeOK), run("2", "w.2", "a", 2, 3000, 3005, OutcomeOK)}},
			want: Result{RunTwice: 1, DupDisallowed: 1}},
		{name: "gave the acknowledgement up, then killed: disallowed",
			in: Inputs{Jobs: jobs("a"), Kills: []Kill{{Worker: "w.1", At: at(40000)}},
				Logs: map[string]WorkerLog{"w.1": {Entries: []LogEntry{{Time: at(30005), Msg: MsgDeleteFailed + "; it will run again", ID: "id-a"}, processed("a", 30006)}}},
				Runs: []Run{run("1", "w.1", "a", 1, 0, 5, OutcomeOK), run("2", "w.2", "a", 2, 90000, 90005, OutcomeOK)}},
			want: Result{RunTwice: 1, DupDisallowed: 1}},
		{name: "worker alive: disallowed",
			in:   Inputs{Jobs: jobs("a"), Runs: []Run{run("1", "w.1", "a", 1, 0, 5, OutcomeOK), run("2", "w.1", "a", 2, 3000, 3005, OutcomeOK)}},
			want: Result{RunTwice: 1, DupDisallowed: 1}},
		{name: "killed before the run started does not excuse it",
			in: Inputs{Jobs: jobs("a"), Kills: []Kill{{Worker: "w.1", At: at(-1500)}},
				Runs: []Run{run("1", "w.1", "a", 1, 0, 5, OutcomeOK), run("2", "w.2", "a", 2, 3000, 3005, OutcomeOK)}},
			want: Result{RunTwice: 1, DupDisallowed: 1}},
		{name: "killed while its request was on the way to the recorder: allowed",
			in: Inputs{Jobs: jobs("a"), Kills: []Kill{{Worker: "w.1", At: at(-1)}},
				Runs: []Run{run("1", "w.1", "a", 1, 0, 5, OutcomeOK), run("2", "w.2", "a", 2, 3000, 3005, OutcomeOK)}},
			want: Result{RunTwice: 1, DupAllowed: 1}},
		{name: "retried after a failure is not a second run",
			in: Inputs{Jobs: jobs("a"), Runs: []Run{run("1", "w.1", "a", 1, 0, 5, OutcomeFail), run("2", "w.1", "a", 2, 10, 15, OutcomeOK)}}},
		{name: "a success that never reached the worker is not a success",
			in: Inputs{Jobs: jobs("a"), Runs: []Run{
				{ID: "1", Worker: "w.1", Key: "a", Attempt: 1, Start: at(0), End: at(1500), Outcome: OutcomeCancelled, Unanswered: true, Decided: OutcomeOK},
				run("2", "w.1", "a", 2, 4000, 4005, OutcomeOK)}}},
		{name: "run again after a cancelled run is not a second run",
			in: Inputs{Jobs: jobs("a"), Runs: []Run{run("1", "w.1", "a", 1, 0, 1000, OutcomeCancelled), run("2", "w.2", "a", 2, 3000, 3005, OutcomeOK)}}},
		{name: "a cancelled run's end recorded after the next run started",
			in: Inputs{Jobs: jobs("a"), Runs: []Run{run("1", "w.1", "a", 1, 0, 1003, OutcomeCancelled), run("2", "w.2", "a", 2, 1001, 1005, OutcomeOK)}}},
		{name: "two runs at once",
			in: Inputs{Jobs: jobs("a"), Runs: []Run{run("1", "w.1", "a", 1, 0, 500, OutcomeFail), run("2", "w.2", "a", 1, 100, 105, OutcomeFail)},
				Left: map[string][]string{"a": {LeftDelayed}}},
			want: Result{RunTwice: 1, DupDisallowed: 1, Left: map[string]int{LeftDelayed: 1}}},
		{name: "a run without end whose worker lives overlaps the next",
			in:   Inputs{Jobs: jobs("a"), Runs: []Run{run("1", "php.1", "a", 1, 0, -1, ""), run("2", "w.2", "a", 2, 3000, 3005, OutcomeOK)}},
			want: Result{RunTwice: 1, DupDisallowed: 1}},
		{name: "a run without end whose worker was killed ended there",
			in: Inputs{Jobs: jobs("a"), Kills: []Kill{{Worker: "php.1", At: at(50)}},
				Runs: []Run{run("1", "php.1", "a", 1, 0, -1, ""), run("2", "w.2", "a", 2, 3000, 3005, OutcomeOK)}}},
		{name: "succeeded, then still reserved",
			in:   Inputs{Jobs: jobs("a"), Runs: []Run{run("1", "w.1", "a", 1, 0, 5, OutcomeOK)}, Left: map[string][]string{"a": {LeftReserved}}},
			want: Result{RunTwice: 1, DupDisallowed: 1, Left: map[string]int{LeftReserved: 1}}},
		{name: "two copies in Redis",
			in:   Inputs{Jobs: jobs("a"), Left: map[string][]string{"a": {LeftReady, LeftReserved}}},
			want: Result{RunTwice: 1, DupDisallowed: 1, Left: map[string]int{LeftReady: 1, LeftReserved: 1}}},
		{name: "attempt 1 never ran",
			in:   Inputs{Jobs: jobs("a"), Runs: []Run{run("1", "w.1", "a", 2, 0, 5, OutcomeOK)}},
			want: Result{AttemptGaps: 1}},
		{name: "a payload of nobody in Redis",
			in:   Inputs{Jobs: jobs("a"), Runs: []Run{run("1", "w.1", "a", 1, 0, 5, OutcomeOK)}, Left: map[string][]string{"zz": {LeftInvalid}}},
			want: Result{Strangers: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := Account(tc.name, tc.in)
			compareCounts(t, got, tc.want)
		})
	}
}

func compareCounts(t *testing.T, got, want Result) {
	t.Helper()
	pairs := []struct {
		name      string
		got, want int
	}{
		{"lost", got.Lost, want.Lost},
		{"run twice", got.RunTwice, want.RunTwice},
		{"allowed", got.DupAllowed, want.DupAllowed},
		{"disallowed", got.DupDisallowed, want.DupDisallowed},
		{"failed rows", got.FailedRows, want.FailedRows},
		{"failed without run", got.FailedWithoutRun, want.FailedWithoutRun},
		{"attempt gaps", got.AttemptGaps, want.AttemptGaps},
		{"false warnings", got.FalseWarnings, want.FalseWarnings},
		{"only in log", got.OnlyInLog, want.OnlyInLog},
		{"strangers", got.Strangers, want.Strangers},
	}
	for _, p := range pairs {
		if p.got != p.want {
			t.Errorf("%s = %d, want %d (examples %q)", p.name, p.got, p.want, got.Examples)
		}
	}
	for _, where := range []string{LeftReady, LeftDelayed, LeftReserved, LeftInvalid} {
		if got.Left[where] != want.Left[where] {
			t.Errorf("left %s = %d, want %d", where, got.Left[where], want.Left[where])
		}
	}
}

// Suite keys are found in any bytes, so failed rows and hostile payloads are matched.
func TestAccountFailedRows(t *testing.T) {
	k := Keys("abcdef", "job", 3)
	h := Keys("abcdef", "notjson", 1)[0]
	row := func(id int64, key, exception string) FailedRow {
		return FailedRow{ID: id, Payload: `{"uuid":"x","data":{"command":"O:8:\"ChaosJob\":1:{s:3:\"key\";s:16:\"` + key + `\";}"}}`, Exception: exception}
	}
	in := Inputs{
		Jobs: []Job{{Key: k[0]}, {Key: k[1]}, {Key: k[2]}, {Key: h, Hostile: "notjson"}},
		Runs: []Run{run("1", "w.1", k[1], 1, 0, 5, OutcomeFail), run("2", "w.1", k[2], 1, 0, 5, OutcomeOK)},
		Failed: []FailedRow{
			row(1, k[0], "Illuminate\\Queue\\MaxAttemptsExceededException: never ran"),
			row(2, k[1], "RuntimeException: failed"),
			row(3, k[2], "Illuminate\\Queue\\MaxAttemptsExceededException: after success"),
			{ID: 4, Payload: "garbage " + h},
		},
	}
	got := Account("rows", in)
	compareCounts(t, got, Result{FailedRows: 4, FailedWithoutRun: 1, RunTwice: 1, DupDisallowed: 1})
	if !strings.Contains(strings.Join(got.Examples, "\n"), "failed after a successful run") {
		t.Errorf("examples %q", got.Examples)
	}
}

func TestAccountWarnings(t *testing.T) {
	k := Keys("abcdef", "job", 3)
	warn := func(ms int, key string) LogEntry {
		return LogEntry{Time: at(ms), Msg: MsgNotReserved + " (it ran longer than retry_after)", ID: "id-" + key}
	}
	in := Inputs{
		Jobs:       []Job{{Key: k[0]}, {Key: k[1]}, {Key: k[2]}},
		RetryAfter: 20 * time.Second,
		Runs: []Run{run("1", "w.1", k[0], 1, 0, 100, OutcomeOK), run("2", "w.1", k[1], 1, 0, 25000, OutcomeOK),
			run("3", "w.1", k[2], 1, 47000, 48000, OutcomeOK)},
		Logs: map[string]WorkerLog{"w.1": {Entries: []LogEntry{
			warn(10100, k[0]), // acknowledged 10 s after it started: the warning is false
			warn(25001, k[1]), // it did run longer than retry_after
			// Taken 19 s before its warning, although its start record came only 2 s
			// before (a slow journal): the warning is true.
			{Time: at(30000), Msg: MsgProcessing, JobID: "id-" + k[2]},
			warn(49000, k[2]),
			{Time: at(30000), Msg: "writing a failed job failed; " + MsgOnlyInLog, ID: "id-x"},
		}}},
	}
	compareCounts(t, Account("warnings", in), Result{FalseWarnings: 1, OnlyInLog: 1})
}

func TestResultLineAndTable(t *testing.T) {
	r := Result{Scenario: "kill9", Jobs: 10, Runs: 12, Faults: []string{"3x kill -9"}, Lost: 1, Left: map[string]int{LeftReserved: 2},
		Checks: []Check{{Name: "stop", Value: 3 * time.Second, Limit: time.Second}}}
	line := r.Line()
	for _, want := range []string{"FAIL kill9", "jobs 10", "lost 1", "left 0/0/2/0", "stop 3.0s/1.0s OVER"} {
		if !strings.Contains(line, want) {
			t.Errorf("line %q lacks %q", line, want)
		}
	}
	if p := r.Problems(); len(p) != 2 {
		t.Errorf("problems %q, want the lost job and the check", p)
	}
	var tab Table
	tab.Add(r)
	tab.Add(Result{Scenario: "hung", Left: map[string]int{}})
	s := tab.String()
	if strings.Count(s, "\n") != 4 || strings.Index(s, "| hung | pass") > strings.Index(s, "| kill9 | **FAIL**") {
		t.Errorf("table:\n%s", s)
	}
}
