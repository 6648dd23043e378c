package chaos

import (
	"strings"
	"testing"
	"time"
)

const sampleLog = `{"time":"2026-11-23T21:23:12.097235495Z","level":"INFO","msg":"Processing","job_status":"starting","job_id":"J1","job":"App\\Jobs\\ChaosJob","queue":"default"}
{"time":"2026-11-23T21:23:12.103818198Z","level":"INFO","msg":"Processed","job_status":"success","job_id":"J1","job":"App\\Jobs\\ChaosJob","queue":"default","runtime":6040518}
{"time":"2026-11-23T21:24:00Z","level":"ERROR","msg":"deleting a finished job failed; it will run again after retry_after","queue":"default","id":"J2","err":"dial tcp: connection refused"}
{"time":"2026-11-23T21:24:00.1Z","level":"INFO","msg":"Processed","job_status":"success","job_id":"J2"}
panic: runtime error: index out of range
{"time":"2026-11-23T21:24:01Z","level":"WARN","msg":"job was no longer reserved when it finished (it ran longer than retry_after); another worker may run it again","id":"J3"}
{"torn": "li`

func TestParseWorkerLog(t *testing.T) {
	wl, err := ParseWorkerLog(strings.NewReader(sampleLog))
	if err != nil {
		t.Fatal(err)
	}
	if len(wl.Entries) != 5 || len(wl.Other) != 2 || !strings.HasPrefix(wl.Other[0], "panic:") {
		t.Fatalf("%d entries, other %q", len(wl.Entries), wl.Other)
	}
	since := time.Date(2026, 11, 23, 21, 23, 12, 0, time.UTC)
	if acked, gaveUp := wl.AckOf("J1", since); !acked || gaveUp {
		t.Errorf("J1: acked %v gave up %v", acked, gaveUp)
	}
	if acked, gaveUp := wl.AckOf("J2", since); acked || !gaveUp {
		t.Errorf("J2: acked %v gave up %v", acked, gaveUp)
	}
	if acked, _ := wl.AckOf("J1", since.Add(time.Minute)); acked {
		t.Error("J1 acked by a line before the run")
	}
	if n := len(wl.Matching(MsgNotReserved)); n != 1 {
		t.Errorf("%d not-reserved warnings", n)
	}
}

// FuzzParseWorkerLog: worker logs are outside bytes (a process may die mid-line).
func FuzzParseWorkerLog(f *testing.F) {
	f.Add([]byte(sampleLog))
	f.Add([]byte("{}\n{\"msg\":1}\n\x00\xff"))
	f.Add([]byte(`{"time":"bad","msg":"Processed","job_id":"J"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		wl, err := ParseWorkerLog(strings.NewReader(string(b)))
		if err != nil {
			return // a line longer than the scanner's limit
		}
		for _, e := range wl.Entries {
			if e.Msg == "" {
				t.Fatalf("entry without message: %+v", e)
			}
			_, _ = wl.AckOf(e.Job(), e.Time)
		}
	})
}

func TestHostilePayloadsCarryTheirKey(t *testing.T) {
	for i, kind := range HostileKinds {
		key := Keys("abcdef", kind, i+1)[i]
		p, err := Hostile(kind, key)
		if err != nil {
			t.Fatal(err)
		}
		if FindKey(p) != key {
			t.Errorf("%s: key %q found as %q", kind, key, FindKey(p))
		}
	}
	if _, err := Hostile("nope", "k"); err == nil {
		t.Error("unknown kind accepted")
	}
	if hostileEnds[HostileKinds[0]] == "" || len(hostileEnds) != len(HostileKinds) {
		t.Error("every hostile kind needs its documented end")
	}
}
