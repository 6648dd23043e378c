package cli

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/consumer"
	"github.com/laraq/laraq/handlers"
	"github.com/laraq/laraq/internal/artisanlog"
)

// TestJobLines feeds the event sequences the consumer emits for each way an attempt
// ends and checks the queue:work statuses printed (Laravel 9+ WorkCommand).
func TestJobLines(t *testing.T) {
	ev := func(k consumer.EventKind) consumer.Event { return consumer.Event{Kind: k} }
	var (
		P  = ev(consumer.EventProcessing)
		D  = ev(consumer.EventProcessed)
		F  = ev(consumer.EventFailed)
		R  = ev(consumer.EventReleased)
		RX = consumer.Event{Kind: consumer.EventReleased, AfterException: true}
		X  = ev(consumer.EventException)
		TO = ev(consumer.EventTimedOut)
		L  = ev(consumer.EventLoop)
	)
	for _, c := range []struct {
		name   string
		events []consumer.Event
		want   string
	}{
		{"success", []consumer.Event{P, D}, "starting success"},
		{"exception, released for a retry", []consumer.Event{P, X, RX}, "starting released_after_exception"},
		{"handler's Release", []consumer.Event{P, R, D}, "starting success"},
		{"exception on the last try", []consumer.Event{P, F, X}, "starting failed"},
		{"Fail() returns normally", []consumer.Event{P, F, D}, "starting failed success"},
		{"timeout released", []consumer.Event{P, TO, RX}, "starting released_after_exception"},
		{"timeout left reserved", []consumer.Event{P, TO}, "starting"},
		{"released at a hard stop", []consumer.Event{P, R}, "starting"},
		{"no handler, released by the policy", []consumer.Event{R}, ""},
		{"heartbeats print nothing", []consumer.Event{L, P, L, D, L}, "starting success"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			h, _ := artisanlog.NewHandler(&buf, artisanlog.Options{Format: artisanlog.JSON})
			l := newJobLines(slog.New(h))
			job := &handlers.Job{ID: "id1", Name: `App\Jobs\X`}
			for _, e := range c.events {
				e.Queue, e.Time, e.Runtime, e.Err = "default", time.Now(), time.Millisecond, errors.New("boom")
				if e.Kind != consumer.EventLoop {
					e.Job = job
				}
				l.event(e)
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
