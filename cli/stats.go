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

	"github.com/laraq/laraq/laravel"
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
application given the prefix is empty. When that prefix holds no queue, or the Laravel
release is only guessed and the prefix derived from it, stats also lists every prefix under
which the Redis database holds queue keys, with its queues: pick one with --prefix.`

// queueStats is one row of `stats`.
type queueStats struct {
	Queue    string   `json:"queue"`
	Ready    int64    `json:"ready"`
	Delayed  int64    `json:"delayed"`
	Reserved int64    `json:"reserved"`
	Invalid  int64    `json:"invalid"`                  // set aside: payloads the pop script cannot reserve
	Oldest   *float64 `json:"oldest_ready_age_seconds"` // null when unknown or empty
}

// prefixStats is a prefix under which the database holds queue keys.
type prefixStats struct {
	Prefix string   `json:"prefix"`
	Queues []string `json:"queues"`
	InUse  bool     `json:"in_use"`
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
	held, err := admin.Queues(ctx)
	if err != nil {
		return app.errorf("listing queues: %v", err)
	}
	if queues == nil {
		queues = held
	}
	// Where the jobs are when laraq looks in the wrong place: a prefix with no queue, or
	// one derived from a guessed release.
	var prefixes []prefixStats
	if len(held) == 0 || cfg.Release.Guessed && !cfg.Origin("Prefix").Named() {
		found, err := admin.Prefixes(ctx)
		if err != nil {
			return app.errorf("listing prefixes: %v", err)
		}
		prefixes = []prefixStats{}
		for _, p := range found {
			prefixes = append(prefixes, prefixStats{Prefix: p.Prefix, Queues: p.Queues, InUse: p.Prefix == cfg.Prefix})
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
			Prefix   string        `json:"prefix"`
			Queues   []queueStats  `json:"queues"`
			Prefixes []prefixStats `json:"prefixes,omitempty"` // listed as the text output lists them
		}{cfg.Prefix, rows, prefixes}); err != nil {
			return app.errorf("%v", err)
		}
		return 0
	}
	if len(rows) == 0 {
		fmt.Fprintf(app.Stdout, "No queues under the prefix %q.\n", cfg.Prefix)
		printPrefixes(app.Stdout, cfg, prefixes)
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
	printPrefixes(app.Stdout, cfg, prefixes)
	return 0
}

// printPrefixes lists the prefixes that hold queue keys, and the flag that picks one.
func printPrefixes(w io.Writer, cfg *laravel.Config, prefixes []prefixStats) {
	if prefixes == nil {
		return
	}
	why := flagNames(fmt.Errorf("the prefix %q (%s) holds no queue", cfg.Prefix, cfg.Origin("Prefix"))).Error()
	if cfg.Release.Guessed && !cfg.Origin("Prefix").Named() {
		why = fmt.Sprintf("the Laravel release is guessed: %s, %s; the prefix %q follows from it", cfg.Release, cfg.Origin("Release"), cfg.Prefix)
	}
	if len(prefixes) == 0 {
		fmt.Fprintf(w, "\nNo queue keys under any prefix in database %d of this Redis (%s).\n", cfg.Redis.DB, why)
		return
	}
	fmt.Fprintf(w, "\nQueue keys in database %d of this Redis, by prefix (%s):\n", cfg.Redis.DB, why)
	width, other := 0, ""
	for _, p := range prefixes {
		width = max(width, utf8.RuneCountInString(shellQuote(p.Prefix)))
		if !p.InUse && other == "" {
			other = p.Prefix
		}
	}
	for _, p := range prefixes {
		mark := ""
		if p.InUse {
			mark = "   (in use)"
		}
		q := shellQuote(p.Prefix)
		fmt.Fprintf(w, "  %s%s   %s%s\n", q, strings.Repeat(" ", width-utf8.RuneCountInString(q)), strings.Join(p.Queues, ", "), mark)
	}
	if other != "" {
		fmt.Fprintf(w, "Hint: --prefix %s picks another (or --laravel-root DIR, to read the application's config files and framework).\n", shellQuote(other))
	}
}

// shellQuote writes s for a POSIX shell: in single quotes unless it needs none.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-.:/@%+=,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
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
