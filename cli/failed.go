package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/laravel"
)

func init() {
	register(&Command{Name: "failed", Summary: "list, show, retry, forget and flush failed jobs, like queue:failed / queue:retry", Run: runFailed})
}

const failedUsage = `failed [flags] list | show ID | retry ID...|all | forget ID | flush

Works on the failed_jobs table Laravel's failed-job provider (database-uuids, or the
legacy database driver) writes, shared with PHP:

  list          the failed jobs, newest first, like 'php artisan queue:failed'
  show ID       one failed job with its exception and payload
  retry ID...   push the jobs back onto their queues and forget them, like
                'php artisan queue:retry': attempts reset to 0, uuid and id kept;
                'retry all' retries every job, 'retry --queue Q' those of queue Q,
                --range 1-5 adds numeric IDs (legacy driver)
  forget ID     delete one failed job, like 'php artisan queue:forget'
  flush         delete every failed job (with --hours N: those older than N hours),
                like 'php artisan queue:flush'

The database comes from --database, else from the application's DB_* settings
(--laravel-root / --env-file), else it is the local file 'laraq work' falls back to,
$XDG_DATA_HOME/laraq/failed.sqlite (~/.local/share/laraq/failed.sqlite); the table from
--table, else failed_jobs. A retried job is
pushed to this Redis connection whatever connection its record names (a warning says so
when it is not --connection). Unlike queue:retry, laraq cannot call the job class'
retryUntil() to refresh an expired retryUntil: it warns instead.`

// failedRow is a failed job as `failed list --json` prints it.
type failedRow struct {
	ID         string          `json:"id"`
	Connection string          `json:"connection"`
	Queue      string          `json:"queue"`
	Class      string          `json:"class"`
	FailedAt   string          `json:"failed_at"`
	Exception  string          `json:"exception,omitempty"`
	Payload    json.RawMessage `json:"payload,omitempty"`
}

func runFailed(ctx context.Context, app *App, args []string) int {
	fs := app.NewFlagSet("failed", failedUsage)
	af := addAppFlags(fs.FlagSet, false, true)
	asJSON := fs.Bool("json", false, "print JSON")
	hours := fs.Int("hours", 0, "flush: only jobs that failed more than `N` hours ago")
	connFlag := fs.String("connection", "", "retry: the queue `connection` laraq's Redis is (default: LARAQ_CONNECTION or \"redis\")")
	var ranges multiFlag
	fs.Var(&ranges, "range", "retry: a `range` of numeric IDs such as 1-5 (repeatable)")
	pos, rc := parseInterleaved(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(pos) == 0 {
		return fs.Fail("which: list, show ID, retry ID..., forget ID or flush?")
	}
	sub, ids := pos[0], pos[1:]
	switch sub {
	case "list", "flush":
		if len(ids) > 0 {
			return fs.Fail("%s takes no ID, got %q", sub, ids)
		}
	case "show", "forget":
		if len(ids) != 1 {
			return fs.Fail("%s takes one ID, got %q", sub, ids)
		}
	case "retry":
	default:
		return app.errorf("failed: unknown subcommand %q (want list, show, retry, forget or flush)", sub)
	}
	cfg, err := af.load(app)
	if err != nil {
		return app.errorf("%v", err)
	}
	conn, err := af.connect(ctx, cfg, laravel.ConnectOptions{WithoutRedisCheck: sub != "retry"})
	if err != nil {
		return app.errorf("%v", err)
	}
	defer conn.Close()
	if *connFlag != "" {
		conn.Name = *connFlag
	}
	store := conn.Failed
	if store == nil {
		store = failed.NewNull()
	}
	f := &failedCmd{app: app, cfg: cfg, conn: conn, store: store, json: *asJSON}
	switch sub {
	case "list":
		return f.list(ctx)
	case "show":
		return f.show(ctx, ids[0])
	case "forget":
		return f.forget(ctx, ids[0])
	case "flush":
		return f.flush(ctx, *hours)
	}
	queue := ""
	if af.conn.queueSet {
		queue = af.conn.queue
	}
	return f.retry(ctx, ids, queue, ranges)
}

type failedCmd struct {
	app   *App
	cfg   *laravel.Config
	conn  *laraq.Connection
	store failed.Store
	json  bool
}

func (f *failedCmd) row(r *failed.Record, full bool) failedRow {
	row := failedRow{ID: r.ID, Connection: r.Connection, Queue: r.Queue, Class: failedJobClass(r.Payload),
		FailedAt: r.FailedAt.Format(database.DateFormat)}
	if full {
		row.Exception = r.Exception
		if json.Valid(r.Payload) {
			row.Payload = r.Payload
		} else {
			row.Payload, _ = json.Marshal(string(r.Payload))
		}
	}
	return row
}

func (f *failedCmd) printJSON(v any) int {
	enc := json.NewEncoder(f.app.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return f.app.errorf("%v", err)
	}
	return 0
}

func (f *failedCmd) list(ctx context.Context) int {
	recs, err := f.store.All(ctx)
	if err != nil {
		return f.app.errorf("%v", err)
	}
	rows := make([]failedRow, 0, len(recs))
	for i := range recs {
		rows = append(rows, f.row(&recs[i], false))
	}
	if f.json {
		return f.printJSON(rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(f.app.Stdout, "No failed jobs!")
		return 0
	}
	table := make([][]string, 0, len(rows))
	for _, r := range rows {
		table = append(table, []string{r.ID, r.Connection, r.Queue, r.Class, r.FailedAt})
	}
	renderTable(f.app.Stdout, []string{"ID", "Connection", "Queue", "Class", "Failed At"}, table)
	return 0
}

func (f *failedCmd) show(ctx context.Context, id string) int {
	rec, err := f.store.Find(ctx, id)
	if err != nil {
		return f.app.errorf("%v", err)
	}
	if rec == nil {
		return f.app.errorf("Unable to find failed job with ID [%s].", id)
	}
	row := f.row(rec, true)
	if f.json {
		return f.printJSON(row)
	}
	w := f.app.Stdout
	fmt.Fprintf(w, "ID:         %s\nConnection: %s\nQueue:      %s\nClass:      %s\nFailed At:  %s\n\nException:\n%s\n\nPayload:\n%s\n",
		row.ID, row.Connection, row.Queue, row.Class, row.FailedAt, strings.TrimRight(rec.Exception, "\n"), rec.Payload)
	return 0
}

func (f *failedCmd) forget(ctx context.Context, id string) int {
	ok, err := f.store.Forget(ctx, id)
	if err != nil {
		return f.app.errorf("%v", err)
	}
	if f.json {
		if rc := f.printJSON(map[string]any{"id": id, "deleted": ok}); rc != 0 || ok {
			return rc
		}
		return 1
	}
	if !ok {
		return f.app.errorf("No failed job matches the given ID.")
	}
	fmt.Fprintln(f.app.Stdout, "Failed job deleted successfully!")
	return 0
}

func (f *failedCmd) flush(ctx context.Context, hours int) int {
	if hours < 0 {
		return f.app.errorf("--hours %d: want a positive number", hours)
	}
	if err := f.store.Flush(ctx, time.Duration(hours)*time.Hour); err != nil {
		return f.app.errorf("%v", err)
	}
	if f.json {
		return f.printJSON(map[string]any{"flushed": true, "hours": hours})
	}
	if hours > 0 {
		fmt.Fprintf(f.app.Stdout, "All jobs that failed more than %d hours ago have been deleted successfully.\n", hours)
	} else {
		fmt.Fprintln(f.app.Stdout, "All failed jobs deleted successfully!")
	}
	return 0
}

// retryResult is one retried ID in `failed retry --json`.
type retryResult struct {
	ID     string `json:"id"`
	Queue  string `json:"queue,omitempty"`
	Pushed bool   `json:"pushed"`
	Error  string `json:"error,omitempty"`
}

var numericRange = regexp.MustCompile(`^[0-9]+-[0-9]+$`)

// retryIDs chooses the IDs as RetryCommand::getJobIds does: "all" alone is every record,
// else --queue is the records of that queue, else the given IDs plus --range ranges,
// de-duplicated, empty and "0" dropped (array_filter).
func (f *failedCmd) retryIDs(ctx context.Context, ids []string, queue string, ranges []string) ([]string, error) {
	if len(ids) == 1 && ids[0] == "all" {
		return f.store.Ids(ctx, "")
	}
	if queue != "" {
		got, err := f.store.Ids(ctx, queue)
		if err == nil && len(got) == 0 {
			//lint:ignore ST1005 queue:retry's own message, word for word
			err = fmt.Errorf("Unable to find failed jobs for queue [%s].", queue)
		}
		return got, err
	}
	for _, r := range ranges {
		if !numericRange.MatchString(r) {
			continue
		}
		lo, _ := strconv.Atoi(r[:strings.IndexByte(r, '-')])
		hi, _ := strconv.Atoi(r[strings.IndexByte(r, '-')+1:])
		for i := lo; i <= hi && i-lo < 1_000_000; i++ {
			ids = append(ids, strconv.Itoa(i))
		}
	}
	seen := map[string]bool{}
	var out []string
	for _, id := range ids {
		if id == "" || id == "0" || seen[id] {
			continue
		}
		seen[id] = true
		out = append(out, id)
	}
	return out, nil
}

func (f *failedCmd) retry(ctx context.Context, ids []string, queue string, ranges []string) int {
	ids, err := f.retryIDs(ctx, ids, queue, ranges)
	if err != nil {
		return f.app.errorf("%v", err)
	}
	if len(ids) == 0 {
		return f.app.errorf("no failed job to retry: give IDs, 'all' or --queue")
	}
	admin, err := laraq.NewAdmin(f.conn, laraq.WithClock(clock))
	if err != nil {
		return f.app.errorf("%v", err)
	}
	var results []retryResult
	failures := 0
	for _, id := range ids {
		res := f.retryOne(ctx, admin, id)
		if res.Error != "" {
			failures++
			if !f.json {
				fmt.Fprintf(f.app.Stderr, "%s: %s\n", f.app.Name, res.Error)
			}
		} else if !f.json {
			fmt.Fprintf(f.app.Stdout, "The failed job [%s] has been pushed back onto the queue!\n", id)
		}
		results = append(results, res)
	}
	if f.json {
		if rc := f.printJSON(results); rc != 0 {
			return rc
		}
	}
	if failures > 0 {
		return 1
	}
	return 0
}

func (f *failedCmd) retryOne(ctx context.Context, admin *laraq.Admin, id string) retryResult {
	res := retryResult{ID: id}
	done, err := admin.Retry(ctx, id)
	for _, w := range done.Warnings {
		f.warn("%s", w)
	}
	res.Queue = done.Queue
	if err != nil {
		res.Error = strings.TrimPrefix(err.Error(), laraq.ErrNoFailedJob.Error()+": ")
		return res
	}
	res.Pushed = true
	return res
}

func (f *failedCmd) warn(format string, args ...any) {
	fmt.Fprintf(f.app.Stderr, "%s: warning: %s\n", f.app.Name, fmt.Sprintf(format, args...))
}

// failedJobClass is the Class column of queue:failed (ListFailedCommand::extractJobName):
// for a payload with data.command, the first double-quoted text in the serialized command
// (the class of O:n:"Class"), falling back to job; without data.command, job.
func failedJobClass(raw []byte) string {
	var p map[string]any
	if err := json.Unmarshal(raw, &p); err != nil || len(p) == 0 {
		return ""
	}
	job, _ := p["job"].(string)
	data, _ := p["data"].(map[string]any)
	cmd, isSet := data["command"]
	if !isSet || cmd == nil {
		return job
	}
	if s, ok := cmd.(string); ok {
		if m := quoted.FindStringSubmatch(s); m != nil {
			return m[1]
		}
	}
	return job
}

var quoted = regexp.MustCompile(`"([^"]+)"`)

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string { return strings.Join(*m, ",") }
func (m *multiFlag) Set(s string) error {
	if s == "" {
		return errors.New("empty value")
	}
	*m = append(*m, s)
	return nil
}
