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

// queueStats is one row of `stats`.
type queueStats struct {
	Queue    string   `json:"queue"`
	Ready    int64    `json:"ready"`
	Delayed  int64    `json:"delayed"`
	Reserved int64    `json:"reserved"`
	Invalid  int64    `json:"invalid"`                  // set aside: payloads the pop script cannot reserve
	Oldest   *float64 `json:"oldest_ready_age_seconds"` // null when unknown or empty
}

func runStats(ctx context.Context, app *App, args []string) int {
	fs := app.NewFlagSet("stats", statsUsage)
	af := addAppFlags(fs.FlagSet, true, false)
	asJSON := fs.Bool("json", false, "print JSON instead of a table")
	if rc := fs.Parse(args); rc >= 0 {
		return rc
	}
	if fs.NArg() > 0 {
		return fs.Fail("takes no arguments, got %q", fs.Args())
	}
	cfg, err := af.load(app)
	if err != nil {
		return app.errorf("%v", err)
	}
	queues, err := af.queues()
	if err != nil {
		return app.errorf("%v", err)
	}
	admin, closeConn, err := af.admin(ctx, app, cfg)
	if err != nil {
		return app.errorf("%v", err)
	}
	defer closeConn()
	if queues == nil {
		if queues, err = admin.Queues(ctx); err != nil {
			return app.errorf("listing queues: %v", err)
		}
	}
	rows := make([]queueStats, 0, len(queues))
	for _, q := range queues {
		size, err := admin.Size(ctx, q)
		if err != nil {
			return app.errorf("queue %s: %v", q, err)
		}
		row := queueStats{Queue: q, Ready: size.Ready, Delayed: size.Delayed, Reserved: size.Reserved, Invalid: size.Invalid}
		if size.HasOldest {
			age := size.OldestReady.Seconds()
			row.Oldest = &age
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
			strconv.FormatInt(r.Reserved, 10), strconv.FormatInt(r.Invalid, 10), age})
	}
	renderTable(app.Stdout, []string{"Queue", "Ready", "Delayed", "Reserved", "Invalid", "Oldest ready"}, table)
	return 0
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
