package artisanlog

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"
)

// Format is an output style of the worker's log.
type Format string

const (
	// Artisan is Laravel 9+'s queue:work line: "  2026-11-21 10:00:00 App\Jobs\X ..... RUNNING",
	// then "... 12.34ms DONE" (or FAIL).
	Artisan Format = "artisan"
	// Artisan8 is Laravel 8's: "[2026-11-21 10:00:00][<job id>] Processing: App\Jobs\X".
	Artisan8 Format = "artisan8"
	// JSON is one slog JSON object per line.
	JSON Format = "json"
	// Text is slog's key=value lines.
	Text Format = "text"
)

// DefaultWidth is the terminal width the Artisan format fills when Options.Width is 0,
// the width Symfony's Terminal assumes when it cannot ask the terminal.
const DefaultWidth = 80

// ParseFormat reads a --log-format value.
func ParseFormat(s string) (Format, error) {
	switch f := Format(strings.ToLower(strings.TrimSpace(s))); f {
	case Artisan, Artisan8, JSON, Text:
		return f, nil
	}
	return "", fmt.Errorf("unknown log format %q (want artisan, artisan8, json or text)", s)
}

// Status is a job's step, as WorkCommand::writeOutput names it.
type Status string

const (
	Starting Status = "starting"                 // JobProcessing
	Success  Status = "success"                  // JobProcessed
	Failed   Status = "failed"                   // JobFailed
	Released Status = "released_after_exception" // the attempt threw and the job was released
	// HandedBack is laraq's own step: a job no Go handler takes was given back to its
	// queue for the PHP workers, unrun. queue:work has no such step; its line reads like
	// RUNNING's, with HANDED BACK.
	HandedBack Status = "handed_back"
)

// Attribute keys of a job record. A record carrying KeyStatus is a job line; the
// artisan handlers format it like queue:work, JSON and Text keep the attributes.
const (
	KeyStatus  = "job_status"
	KeyID      = "job_id"
	KeyName    = "job"
	KeyQueue   = "queue"
	KeyRuntime = "runtime"
	// KeyMiddleware and KeyDecision: the middleware that decided the job's outcome
	// instead of its handler, and what it decided (released, deleted, failed, skipped).
	KeyMiddleware = "middleware"
	KeyDecision   = "decision"
)

// Job writes one job line on l: msg is Laravel 8's word for the step (Processing,
// Processed, Failed, Released), the attributes are KeyStatus, KeyID, KeyName, KeyQueue and,
// when the handler ran (runtime > 0 or a final status), KeyRuntime.
func Job(ctx context.Context, l *slog.Logger, status Status, id, name, queue string, runtime time.Duration) {
	JobDecided(ctx, l, status, id, name, queue, runtime, "", "")
}

// JobDecided is Job for a job whose outcome a middleware decided instead of its
// handler: the line names it and its decision (KeyMiddleware, KeyDecision), e.g.
// "... 0.08ms DONE (released by WithoutOverlapping)". Empty middleware is Job.
func JobDecided(ctx context.Context, l *slog.Logger, status Status, id, name, queue string, runtime time.Duration, middleware, decision string) {
	level := slog.LevelInfo
	if status == Failed {
		level = slog.LevelError
	}
	attrs := []slog.Attr{
		slog.String(KeyStatus, string(status)), slog.String(KeyID, id), slog.String(KeyName, name),
		slog.String(KeyQueue, queue),
	}
	if status != Starting && status != HandedBack {
		attrs = append(attrs, slog.Duration(KeyRuntime, runtime))
	}
	if middleware != "" {
		attrs = append(attrs, slog.String(KeyMiddleware, middleware), slog.String(KeyDecision, decision))
	}
	l.LogAttrs(ctx, level, statusWord(status), attrs...)
}

func statusWord(s Status) string {
	switch s {
	case Starting:
		return "Processing"
	case Success:
		return "Processed"
	case Failed:
		return "Failed"
	case HandedBack:
		return "Handed back"
	}
	return "Released"
}

// Options configure NewHandler.
type Options struct {
	// Format chooses the style. Default Artisan.
	Format Format
	// Level is the lowest level written. Default slog.LevelInfo.
	Level slog.Leveler
	// Color adds ANSI colours as Symfony's console does on a terminal (Artisan, Artisan8).
	// Default false; see IsTerminal.
	Color bool
	// Width is the terminal width the Artisan format's dots fill. Default DefaultWidth.
	Width int
	// Verbose adds the job id to Artisan lines, as queue:work -v does.
	Verbose bool
	// Location is the timezone of the printed times (Laravel: queue.output_timezone or
	// app.timezone). Default time.Local.
	Location *time.Location
}

// NewHandler returns the slog.Handler for opts.Format writing to w.
func NewHandler(w io.Writer, opts Options) (slog.Handler, error) {
	if opts.Format == "" {
		opts.Format = Artisan
	}
	if opts.Level == nil {
		opts.Level = slog.LevelInfo
	}
	if opts.Width <= 0 {
		opts.Width = DefaultWidth
	}
	if opts.Location == nil {
		opts.Location = time.Local
	}
	switch opts.Format {
	case JSON:
		return slog.NewJSONHandler(w, &slog.HandlerOptions{Level: opts.Level}), nil
	case Text:
		return slog.NewTextHandler(w, &slog.HandlerOptions{Level: opts.Level}), nil
	case Artisan, Artisan8:
		return &handler{out: &output{w: w}, opts: opts}, nil
	}
	_, err := ParseFormat(string(opts.Format))
	return nil, err
}

// IsTerminal reports whether w is a character device (a terminal), where Symfony's
// console turns colours on.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// output serialises writes of every handler derived from one NewHandler.
type output struct {
	mu sync.Mutex
	w  io.Writer
}

type handler struct {
	out    *output
	opts   Options
	attrs  []slog.Attr
	groups string
}

func (h *handler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.opts.Level.Level() }

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	c := *h
	c.attrs = append([]slog.Attr{}, h.attrs...)
	for _, a := range as {
		if h.groups != "" && !isJobKey(a.Key) {
			a.Key = h.groups + a.Key
		}
		c.attrs = append(c.attrs, a)
	}
	return &c
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := *h
	c.groups = h.groups + name + "."
	return &c
}

func (h *handler) Handle(_ context.Context, r slog.Record) error {
	var job jobRecord
	var rest []slog.Attr
	collect := func(a slog.Attr) bool {
		a.Value = a.Value.Resolve()
		switch a.Key {
		case KeyStatus:
			job.status = Status(a.Value.String())
		case KeyID:
			job.id = a.Value.String()
		case KeyName:
			job.name = a.Value.String()
		case KeyQueue:
			job.queue = a.Value.String()
		case KeyRuntime:
			job.runtime = a.Value.Duration()
		case KeyMiddleware:
			job.middleware = a.Value.String()
		case KeyDecision:
			job.decision = a.Value.String()
		default:
			rest = append(rest, a)
		}
		return true
	}
	for _, a := range h.attrs {
		collect(a)
	}
	r.Attrs(func(a slog.Attr) bool {
		if h.groups != "" && !isJobKey(a.Key) {
			a.Key = h.groups + a.Key
		}
		return collect(a)
	})
	t := r.Time
	if t.IsZero() {
		t = time.Now()
	}
	t = t.In(h.opts.Location)
	var line string
	switch {
	case job.status != "" && h.opts.Format == Artisan8:
		line = h.artisan8(t, job)
		if line == "" {
			return nil
		}
	case job.status != "":
		line = h.artisan(t, job)
	default:
		line = h.plain(t, r, rest)
	}
	h.out.mu.Lock()
	defer h.out.mu.Unlock()
	_, err := io.WriteString(h.out.w, line+"\n")
	return err
}

func isJobKey(k string) bool {
	switch k {
	case KeyStatus, KeyID, KeyName, KeyQueue, KeyRuntime, KeyMiddleware, KeyDecision:
		return true
	}
	return false
}

type jobRecord struct {
	status               Status
	id, name, queue      string
	runtime              time.Duration
	middleware, decision string
}

// note names the middleware that decided, after the status: " (released by X)".
func (h *handler) note(j jobRecord) string {
	if j.middleware == "" {
		return ""
	}
	return " " + h.paint("("+j.decision+" by "+j.middleware+")", gray, reset)
}

const dateLayout = "2006-01-02 15:04:05"

// ANSI sequences of Symfony's console styles.
const (
	yellow, green, gray = "\x1b[33m", "\x1b[32m", "\x1b[90m"
	boldYellow          = "\x1b[33;1m"
	boldGreen           = "\x1b[32;1m"
	boldRed             = "\x1b[31;1m"
	whiteOnRed          = "\x1b[37;41m"
	reset               = "\x1b[39m"
	resetBold           = "\x1b[39;22m"
	resetBoth           = "\x1b[39;49m"
)

func (h *handler) paint(s, on, off string) string {
	if !h.opts.Color {
		return s
	}
	return on + s + off
}

// artisan8 is WorkCommand::writeStatus of Laravel 8: "[date][id] " + str_pad("Status:", 11)
// coloured as <comment>, <info> or <error>, then the job name. Laravel 8 prints nothing
// when a job is released after an exception.
func (h *handler) artisan8(t time.Time, j jobRecord) string {
	var on, off string
	switch j.status {
	case Starting, HandedBack:
		on, off = yellow, reset
	case Success:
		on, off = green, reset
	case Failed:
		on, off = whiteOnRed, resetBoth
	default:
		return ""
	}
	head := fmt.Sprintf("[%s][%s] %-11s", t.Format(dateLayout), j.id, statusWord(j.status)+":")
	return h.paint(head, on, off) + " " + j.name + h.note(j)
}

// artisan is WorkCommand::writeOutput of Laravel 9+: "  <date> <name>[ <id>] <dots> RUNNING"
// and "... <dots> <runtime> DONE|FAIL", the dots filling the terminal width.
func (h *handler) artisan(t time.Time, j jobRecord) string {
	var b strings.Builder
	b.WriteString("  " + h.paint(t.Format(dateLayout), gray, reset) + " " + j.name)
	extra := 0
	if h.opts.Verbose {
		b.WriteString(" " + h.paint(j.id, gray, reset))
		extra = len([]rune(j.id)) + 1
	}
	nameLen := len([]rune(j.name))
	if j.status == Starting || j.status == HandedBack {
		word := "RUNNING"
		if j.status == HandedBack {
			word = "HANDED BACK"
		}
		dots := max(h.opts.Width-nameLen-extra-26-len(word), 0)
		b.WriteString(" " + h.paint(strings.Repeat(".", dots), gray, reset))
		b.WriteString(" " + h.paint(word, boldYellow, resetBold))
		return b.String()
	}
	rt := FormatRuntime(j.runtime)
	dots := max(h.opts.Width-nameLen-extra-len(rt)-31, 0)
	b.WriteString(" " + h.paint(strings.Repeat(".", dots), gray, reset))
	b.WriteString(" " + h.paint(rt, gray, reset))
	switch j.status {
	case Success:
		b.WriteString(" " + h.paint("DONE", boldGreen, resetBold))
	case Released:
		b.WriteString(" " + h.paint("FAIL", boldYellow, resetBold))
	default:
		b.WriteString(" " + h.paint("FAIL", boldRed, resetBold))
	}
	return b.String() + h.note(j)
}

// FormatRuntime writes a handler's run time as Laravel 10+'s queue:work does: up to a
// second "12.34ms"; longer in Carbon's short form, e.g. "1s 500ms", "2m 3s".
func FormatRuntime(d time.Duration) string {
	ms := float64(d) / float64(time.Millisecond)
	if ms <= 1000 {
		return fmt.Sprintf("%.2fms", ms)
	}
	var parts []string
	rest := d.Round(time.Millisecond)
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if n := rest / u.d; n > 0 {
			parts = append(parts, fmt.Sprintf("%d%s", n, u.name))
			rest -= n * u.d
		}
	}
	return strings.Join(parts, " ")
}

// plain formats a record that is not a job line: Laravel 8 style "[date] LEVEL: msg k=v",
// or the 9+ components style "  LEVEL  msg k=v".
func (h *handler) plain(t time.Time, r slog.Record, attrs []slog.Attr) string {
	var b strings.Builder
	level := r.Level.String()
	if h.opts.Format == Artisan8 {
		b.WriteString("[" + t.Format(dateLayout) + "] " + level + ": " + r.Message)
	} else {
		on, off := "\x1b[37;44;1m", "\x1b[39;49;22m"
		switch {
		case r.Level >= slog.LevelError:
			on = "\x1b[37;41;1m"
		case r.Level >= slog.LevelWarn:
			on = "\x1b[30;43;1m"
		}
		b.WriteString("  " + h.paint(" "+level+" ", on, off) + " " + r.Message)
	}
	for _, a := range attrs {
		if a.Value.Kind() == slog.KindGroup {
			for _, g := range a.Value.Group() {
				fmt.Fprintf(&b, " %s.%s=%s", a.Key, g.Key, quoteIfNeeded(g.Value.String()))
			}
			continue
		}
		fmt.Fprintf(&b, " %s=%s", a.Key, quoteIfNeeded(a.Value.String()))
	}
	return b.String()
}

func quoteIfNeeded(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"=") {
		return fmt.Sprintf("%q", s)
	}
	return s
}
