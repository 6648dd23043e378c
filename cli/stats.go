package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/laraq/laraq/payload"
)

func init() {
	register(&Command{Name: "stats", Summary: "show ready, delayed and reserved jobs per queue", Run: runStats})
}

const statsUsage = `stats [flags]

Shows, for each queue, the jobs ready to run (queues:NAME), delayed (:delayed, including
released jobs waiting for their backoff) and reserved (:reserved, running now or
abandoned by a worker until retry_after), and the age of the oldest ready job when its
payload says when it was queued (createdAt, Laravel 12.11+, or Horizon's pushedAt).
Without --queue every queue found under the prefix is shown.

The Redis connection and prefix come from the Laravel application (--laravel-root or
--env-file, then LARAQ_* variables), unless --redis / --prefix say otherwise; with no
application given the prefix is empty.`

// statsNow is the clock of the oldest-job age.
var statsNow = time.Now

// queueStats is one row of `stats`.
type queueStats struct {
	Queue    string   `json:"queue"`
	Ready    int64    `json:"ready"`
	Delayed  int64    `json:"delayed"`
	Reserved int64    `json:"reserved"`
	Oldest   *float64 `json:"oldest_ready_age_seconds"` // null when unknown or empty
}

func runStats(ctx context.Context, app *App, args []string) int {
	fs := app.newFlagSet("stats", statsUsage)
	af := addAppFlags(fs, true, false)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if rc := parseFlags(fs, args); rc >= 0 {
		return rc
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	cfg, err := af.load(app)
	if err != nil {
		return app.errorf("%v", err)
	}
	queues, err := af.queues()
	if err != nil {
		return app.errorf("%v", err)
	}
	c, err := connect(cfg)
	if err != nil {
		return app.errorf("%v", err)
	}
	defer c.Close()
	if queues == nil {
		if queues, err = c.rdb.Queues(ctx); err != nil {
			return app.errorf("listing queues: %v", err)
		}
	}
	rows := make([]queueStats, 0, len(queues))
	for _, q := range queues {
		row := queueStats{Queue: q}
		if row.Ready, row.Delayed, row.Reserved, err = c.rdb.Sizes(ctx, q); err != nil {
			return app.errorf("queue %s: %v", q, err)
		}
		if row.Ready > 0 {
			head, err := c.rdb.OldestReady(ctx, q)
			if err != nil {
				return app.errorf("queue %s: %v", q, err)
			}
			if age, ok := payloadAge(head, statsNow()); ok {
				row.Oldest = &age
			}
		}
		rows = append(rows, row)
	}
	if *asJSON {
		enc := json.NewEncoder(app.Stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(struct {
			Prefix string       `json:"prefix"`
			Queues []queueStats `json:"queues"`
		}{cfg.Prefix, rows}); err != nil {
			return app.errorf("%v", err)
		}
		return 0
	}
	if len(rows) == 0 {
		fmt.Fprintf(app.Stdout, "No queues under the prefix %q.\n", cfg.Prefix)
		return 0
	}
	table := [][]string{}
	for _, r := range rows {
		age := "-"
		if r.Oldest != nil {
			age = formatAge(time.Duration(*r.Oldest * float64(time.Second)))
		}
		table = append(table, []string{r.Queue, strconv.FormatInt(r.Ready, 10), strconv.FormatInt(r.Delayed, 10),
			strconv.FormatInt(r.Reserved, 10), age})
	}
	renderTable(app.Stdout, []string{"Queue", "Ready", "Delayed", "Reserved", "Oldest ready"}, table)
	return 0
}

// payloadAge is how long ago a payload was queued, from createdAt (Unix seconds, Laravel
// 12.11+) or Horizon's pushedAt ("1729411372.3932"). ok is false when it says neither.
func payloadAge(raw []byte, now time.Time) (float64, bool) {
	env, err := payload.Parse(raw)
	if err != nil {
		return 0, false
	}
	var at float64
	switch {
	case env.CreatedAt != nil:
		at = float64(*env.CreatedAt)
	case env.PushedAt != "":
		if at, err = strconv.ParseFloat(env.PushedAt, 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	age := float64(now.UnixNano())/1e9 - at
	if age < 0 {
		age = 0 // clocks of producer and reader differ
	}
	return age, true
}

// formatAge writes an age to the second: "45s", "2m13s", "3h0m5s", "2d4h".
func formatAge(d time.Duration) string {
	d = d.Round(time.Second)
	if d >= 48*time.Hour {
		days := d / (24 * time.Hour)
		return fmt.Sprintf("%dd%dh", days, (d-days*24*time.Hour)/time.Hour)
	}
	return d.String()
}

// renderTable writes rows in the box layout of Symfony's console tables, which artisan
// commands such as queue:failed print.
func renderTable(w io.Writer, headers []string, rows [][]string) {
	widths := make([]int, len(headers))
	for i, h := range headers {
		widths[i] = utf8.RuneCountInString(h)
	}
	for _, r := range rows {
		for i, c := range r {
			if n := utf8.RuneCountInString(c); n > widths[i] {
				widths[i] = n
			}
		}
	}
	var b strings.Builder
	sep := func() {
		for _, wd := range widths {
			b.WriteString("+" + strings.Repeat("-", wd+2))
		}
		b.WriteString("+\n")
	}
	line := func(cells []string) {
		for i, c := range cells {
			b.WriteString("| " + c + strings.Repeat(" ", widths[i]-utf8.RuneCountInString(c)) + " ")
		}
		b.WriteString("|\n")
	}
	sep()
	line(headers)
	sep()
	for _, r := range rows {
		line(r)
	}
	sep()
	io.WriteString(w, b.String())
}
