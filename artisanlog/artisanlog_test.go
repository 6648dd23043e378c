package artisanlog

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

var at = time.Unix(1_800_000_000, 0)

// fixedTime makes every record carry the time at.
type fixedTime struct{ slog.Handler }

func (f fixedTime) Handle(ctx context.Context, r slog.Record) error {
	r.Time = at
	return f.Handler.Handle(ctx, r)
}

func (f fixedTime) WithAttrs(as []slog.Attr) slog.Handler { return fixedTime{f.Handler.WithAttrs(as)} }
func (f fixedTime) WithGroup(g string) slog.Handler       { return fixedTime{f.Handler.WithGroup(g)} }

func logger(t *testing.T, buf *bytes.Buffer, opts Options) *slog.Logger {
	t.Helper()
	if opts.Location == nil {
		opts.Location = time.UTC
	}
	h, err := NewHandler(buf, opts)
	if err != nil {
		t.Fatal(err)
	}
	return slog.New(fixedTime{h})
}

// TestArtisan8MatchesLaravel compares the Artisan8 lines with what Laravel 8's own
// WorkCommand::writeOutput prints, with and without colours.
func TestArtisan8MatchesLaravel(t *testing.T) {
	testenv.NeedPHP(t)
	payload := `{"uuid":"0b5a4c1e","displayName":"App\\Jobs\\SendWelcome","job":"Illuminate\\Queue\\CallQueuedHandler@call","id":"Kq3xCPaGyQ2Qw0Tj8vAi1S4xXrqzUvxk","attempts":0,"data":{}}`
	for _, color := range []bool{false, true} {
		arg := "0"
		if color {
			arg = "1"
		}
		out := testenv.PHPEnv{}.Run(t, nil, "ops_workoutput.php", arg, "1800000000", payload)
		var php map[string]string
		if err := json.Unmarshal(out, &php); err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		for _, st := range []Status{Starting, Success, Failed} {
			var buf bytes.Buffer
			Job(context.Background(), logger(t, &buf, Options{Format: Artisan8, Color: color}), st,
				"Kq3xCPaGyQ2Qw0Tj8vAi1S4xXrqzUvxk", `App\Jobs\SendWelcome`, "default", 12*time.Millisecond)
			if buf.String() != php[string(st)] {
				t.Errorf("color %v %s:\n got %q\nPHP %q", color, st, buf.String(), php[string(st)])
			}
		}
	}
}

func TestArtisan8Released(t *testing.T) {
	var buf bytes.Buffer
	Job(context.Background(), logger(t, &buf, Options{Format: Artisan8}), Released, "id", "App\\Jobs\\X", "q", time.Second)
	if buf.Len() != 0 {
		t.Errorf("Laravel 8 prints nothing for a released job, got %q", buf.String())
	}
}

func TestArtisanLines(t *testing.T) {
	var buf bytes.Buffer
	l := logger(t, &buf, Options{Format: Artisan, Width: 80})
	ctx := context.Background()
	Job(ctx, l, Starting, "id1", `App\Jobs\SendWelcome`, "default", 0)
	Job(ctx, l, Success, "id1", `App\Jobs\SendWelcome`, "default", 12340*time.Microsecond)
	Job(ctx, l, Failed, "id1", `App\Jobs\SendWelcome`, "default", 1500*time.Millisecond)
	Job(ctx, l, Released, "id1", `App\Jobs\SendWelcome`, "default", 3*time.Millisecond)
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	want := []string{
		"  2027-01-15 08:00:00 App\\Jobs\\SendWelcome " + strings.Repeat(".", 80-20-33) + " RUNNING",
		"  2027-01-15 08:00:00 App\\Jobs\\SendWelcome " + strings.Repeat(".", 80-20-7-31) + " 12.34ms DONE",
		"  2027-01-15 08:00:00 App\\Jobs\\SendWelcome " + strings.Repeat(".", 80-20-8-31) + " 1s 500ms FAIL",
		"  2027-01-15 08:00:00 App\\Jobs\\SendWelcome " + strings.Repeat(".", 80-20-6-31) + " 3.00ms FAIL",
	}
	if len(lines) != len(want) {
		t.Fatalf("lines %q", lines)
	}
	for i := range want {
		if lines[i] != want[i] {
			t.Errorf("line %d:\n got %q\nwant %q", i, lines[i], want[i])
		}
	}
	// The dots make every line width-2 long, as in Laravel.
	if len(lines[0]) != 78 || len(lines[1]) != 78 || len(lines[2]) != 78 {
		t.Errorf("line lengths %d %d", len(lines[0]), len(lines[1]))
	}

	buf.Reset()
	l = logger(t, &buf, Options{Format: Artisan, Width: 60, Verbose: true, Color: true})
	Job(ctx, l, Success, "abc", "Very\\Long\\Class\\Name\\That\\Overflows\\The\\Terminal\\Width", "q", time.Millisecond)
	got := buf.String()
	wantColor := "  \x1b[90m2027-01-15 08:00:00\x1b[39m Very\\Long\\Class\\Name\\That\\Overflows\\The\\Terminal\\Width \x1b[90mabc\x1b[39m \x1b[90m\x1b[39m \x1b[90m1.00ms\x1b[39m \x1b[32;1mDONE\x1b[39;22m\n"
	if got != wantColor {
		t.Errorf("verbose colour line:\n got %q\nwant %q", got, wantColor)
	}
}

func TestFormatRuntime(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0:                                     "0.00ms",
		1234567 * time.Nanosecond:             "1.23ms",
		time.Second:                           "1000.00ms",
		1001 * time.Millisecond:               "1s 1ms",
		2*time.Minute + 3*time.Second:         "2m 3s",
		26*time.Hour + 4*time.Millisecond:     "1d 2h 4ms",
		90*time.Second + 499*time.Microsecond: "1m 30s",
	} {
		if got := FormatRuntime(d); got != want {
			t.Errorf("FormatRuntime(%v) = %q, want %q", d, got, want)
		}
	}
}

func TestJSONAndText(t *testing.T) {
	var buf bytes.Buffer
	l := logger(t, &buf, Options{Format: JSON})
	Job(context.Background(), l, Failed, "id9", `App\Jobs\Charge`, "billing", 250*time.Millisecond)
	var rec map[string]any
	if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
		t.Fatalf("%q: %v", buf.String(), err)
	}
	for k, want := range map[string]any{"msg": "Failed", "level": "ERROR", KeyStatus: "failed", KeyID: "id9",
		KeyName: `App\Jobs\Charge`, KeyQueue: "billing", KeyRuntime: float64(250 * time.Millisecond)} {
		if rec[k] != want {
			t.Errorf("%s = %#v, want %#v", k, rec[k], want)
		}
	}
	buf.Reset()
	l = logger(t, &buf, Options{Format: Text})
	Job(context.Background(), l, Starting, "id9", `App\Jobs\Charge`, "billing", 0)
	if s := buf.String(); !strings.Contains(s, "msg=Processing job_status=starting job_id=id9") || strings.Contains(s, KeyRuntime) {
		t.Errorf("text %q", s)
	}
}

func TestOtherRecords(t *testing.T) {
	var buf bytes.Buffer
	l := logger(t, &buf, Options{Format: Artisan8}).With("worker", "w1").WithGroup("redis")
	l.Warn("connection lost", "addr", "127.0.0.1:6379", "err", "EOF")
	if got, want := buf.String(), "[2027-01-15 08:00:00] WARN: connection lost worker=w1 redis.addr=127.0.0.1:6379 redis.err=EOF\n"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
	buf.Reset()
	l = logger(t, &buf, Options{Format: Artisan, Level: slog.LevelWarn})
	l.Info("hidden")
	l.Error("Redis connection refused", "retry_in", "1s")
	if got, want := buf.String(), "   ERROR  Redis connection refused retry_in=1s\n"; got != want {
		t.Errorf("got %q want %q", got, want)
	}
}

func TestParseFormat(t *testing.T) {
	for _, s := range []string{"artisan", "ARTISAN8", " json ", "text"} {
		if _, err := ParseFormat(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil || !strings.Contains(err.Error(), `"xml"`) {
		t.Errorf("xml: %v", err)
	}
	if _, err := NewHandler(&bytes.Buffer{}, Options{Format: "xml"}); err == nil {
		t.Error("NewHandler accepted xml")
	}
}
