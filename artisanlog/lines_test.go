package artisanlog_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/artisanlog"
)

// TestJobLines feeds the event sequences the worker emits for each way an attempt
// ends and checks the queue:work statuses printed (Laravel 9+ WorkCommand).
func TestJobLines(t *testing.T) {
	ev := func(k laraq.EventKind) laraq.Event { return laraq.Event{Kind: k} }
	var (
		P  = ev(laraq.EventProcessing)
		D  = ev(laraq.EventProcessed)
		F  = ev(laraq.EventFailed)
		R  = ev(laraq.EventReleased)
		RX = laraq.Event{Kind: laraq.EventReleased, AfterException: true}
		X  = ev(laraq.EventException)
		TO = ev(laraq.EventTimedOut)
		L  = ev(laraq.EventLoop)
	)
	for _, c := range []struct {
		name   string
		events []laraq.Event
		want   string
	}{
		{"success", []laraq.Event{P, D}, "starting success"},
		{"exception, released for a retry", []laraq.Event{P, X, RX}, "starting released_after_exception"},
		{"handler's Release", []laraq.Event{P, R, D}, "starting success"},
		{"exception on the last try", []laraq.Event{P, F, X}, "starting failed"},
		{"Fail() returns normally", []laraq.Event{P, F, D}, "starting failed success"},
		{"timeout released", []laraq.Event{P, TO, RX}, "starting released_after_exception"},
		{"timeout left reserved", []laraq.Event{P, TO}, "starting"},
		{"released at a hard stop", []laraq.Event{P, R}, "starting"},
		{"no handler, released by the policy", []laraq.Event{R}, ""},
		{"heartbeats print nothing", []laraq.Event{L, P, L, D, L}, "starting success"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			h, _ := artisanlog.NewHandler(&buf, artisanlog.Options{Format: artisanlog.JSON})
			l := artisanlog.NewJobLines(slog.New(h))
			job := &laraq.JobInfo{ID: "id1", Name: `App\Jobs\X`}
			for _, e := range c.events {
				e.Queue, e.Time, e.Runtime, e.Err = "default", time.Now(), time.Millisecond, errors.New("boom")
				if e.Kind != laraq.EventLoop {
					e.Job = job
				}
				l.OnEvent(e)
			}
			var got []string
			for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				if line == "" {
					continue
				}
				var rec map[string]any
				if err := json.Unmarshal([]byte(line), &rec); err != nil {
					t.Fatal(err)
				}
				got = append(got, fmt.Sprint(rec[artisanlog.KeyStatus]))
			}
			if strings.Join(got, " ") != c.want {
				t.Errorf("statuses %v, want %s", got, c.want)
			}
		})
	}
}
