package chaos

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strings"
	"time"
)

// Messages of `laraq work --log-format json` the accounting looks for. They are the
// worker's own words; when they change, these must follow (the accounting test fails).
const (
	// MsgProcessing is the job line printed right after a job was taken.
	MsgProcessing = "Processing"
	// MsgProcessed is the job line after a job's acknowledgement was sent.
	MsgProcessed = "Processed"
	// MsgNotReserved warns that the reserved copy was gone when the job finished, "it
	// ran longer than retry_after; another worker may run it again".
	MsgNotReserved = "job was no longer reserved when it finished"
	// MsgDeleteFailed says a finished job's acknowledgement was given up.
	MsgDeleteFailed = "deleting a finished job failed"
	// MsgOnlyInLog says a failed job's row could not be written after its reserved copy
	// was deleted: the job exists nowhere but in the log.
	MsgOnlyInLog = "the job is only in this log now"
)

// LogEntry is one JSON line of a laraq worker's stdout (job lines) or stderr (log).
type LogEntry struct {
	Time   time.Time `json:"time"`
	Level  string    `json:"level"`
	Msg    string    `json:"msg"`
	Status string    `json:"job_status"`
	JobID  string    `json:"job_id"` // job lines
	ID     string    `json:"id"`     // log records about a job
}

// Job is the job id the entry is about.
func (e LogEntry) Job() string {
	if e.JobID != "" {
		return e.JobID
	}
	return e.ID
}

// WorkerLog is what one worker process wrote.
type WorkerLog struct {
	Entries []LogEntry
	Other   []string // lines that are not JSON records (a panic, a runtime error)
}

// ParseWorkerLog reads JSON log lines; other lines are kept aside, not rejected: a
// worker may die in the middle of a line or print a Go panic.
func ParseWorkerLog(r io.Reader) (WorkerLog, error) {
	var wl WorkerLog
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var e LogEntry
		if line[0] != '{' || json.Unmarshal(line, &e) != nil || e.Msg == "" {
			if len(wl.Other) < 100 {
				wl.Other = append(wl.Other, string(line))
			}
			continue
		}
		wl.Entries = append(wl.Entries, e)
	}
	return wl, sc.Err()
}

// ReadWorkerLogs parses and merges the given files (stdout and stderr of one process).
func ReadWorkerLogs(paths ...string) (WorkerLog, error) {
	var all WorkerLog
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return all, err
		}
		wl, err := ParseWorkerLog(f)
		f.Close()
		if err != nil {
			return all, err
		}
		all.Entries = append(all.Entries, wl.Entries...)
		all.Other = append(all.Other, wl.Other...)
	}
	return all, nil
}

// AckOf reads what the log says of the acknowledgement of job id by a run that started
// at since: acked when a Processed line followed, gaveUp when the worker logged that it
// gave the deletion up (it then prints Processed all the same).
func (wl WorkerLog) AckOf(id string, since time.Time) (acked, gaveUp bool) {
	// Log times have nanoseconds, run records microseconds: allow for the rounding.
	since = since.Add(-time.Millisecond)
	for _, e := range wl.Entries {
		if e.Job() != id || e.Time.Before(since) {
			continue
		}
		switch {
		case e.Msg == MsgProcessed:
			acked = true
		case strings.Contains(e.Msg, MsgDeleteFailed):
			gaveUp = true
		}
	}
	return acked && !gaveUp, gaveUp
}

// Last returns the time of the last entry with message msg about job id at or before
// until.
func (wl WorkerLog) Last(msg, id string, until time.Time) (time.Time, bool) {
	var at time.Time
	found := false
	for _, e := range wl.Entries {
		if e.Msg == msg && e.Job() == id && !e.Time.After(until) && (!found || e.Time.After(at)) {
			at, found = e.Time, true
		}
	}
	return at, found
}

// Matching returns the entries whose message contains msg.
func (wl WorkerLog) Matching(msg string) []LogEntry {
	var out []LogEntry
	for _, e := range wl.Entries {
		if strings.Contains(e.Msg, msg) {
			out = append(out, e)
		}
	}
	return out
}
