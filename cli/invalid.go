package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/laravel"
	"github.com/laraq/laraq/payload"
)

func init() {
	register(&Command{Name: "invalid", Summary: "list, requeue, fail or clear the payloads a queue set aside as unreservable", Run: runInvalid})
}

const invalidUsage = `invalid [flags] list | requeue | fail | clear [QUEUE]

Laravel's pop script loses a payload it cannot reserve (not JSON, not an object,
attempts missing or not a number). laraq's pop moves such a payload, byte for byte, to
the queue's invalid list (queues:QUEUE:invalid) instead; 'laraq stats' counts them. For
QUEUE (default --queue, else REDIS_QUEUE, else "default"):

  list      each payload with why it cannot be reserved (readable when it is JSON;
            --raw prints the bytes as stored, --json one JSON object per line)
  requeue   move them back to the ready list, in order: for payloads repaired in place
            or set aside by a bug since fixed (one still unreservable is set aside again)
  fail      record each in the failed-job store (the application's failed_jobs table,
            as for 'laraq work'), where 'php artisan queue:failed' lists it, then remove
            it from the invalid list
  clear     delete them (asks for confirmation unless --force)`

func runInvalid(ctx context.Context, app *App, args []string) int {
	fs := app.NewFlagSet("invalid", invalidUsage)
	af := addAppFlags(fs.FlagSet, false, true)
	raw := fs.Bool("raw", false, "list: print the payloads as stored")
	asJSON := fs.Bool("json", false, "list: print one JSON object per payload")
	force := fs.Bool("force", false, "clear: do not ask for confirmation")
	pos, rc := parseInterleaved(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(pos) == 0 || len(pos) > 2 {
		return fs.Fail("which: list, requeue, fail or clear, and at most one QUEUE?")
	}
	sub := pos[0]
	switch sub {
	case "list", "requeue", "fail", "clear":
	default:
		return fs.Fail("unknown action %q: list, requeue, fail or clear", sub)
	}
	cfg, err := af.load(app)
	if err != nil {
		return app.errorf("%v", err)
	}
	queue := cfg.Queue
	if len(pos) == 2 {
		queue = pos[1]
	}
	if sub == "clear" && !*force && !app.confirm(fmt.Sprintf("Are you sure you want to delete the set-aside payloads of the [%s] queue?", queue)) {
		return 1
	}
	conn, err := af.connect(ctx, cfg, laravel.ConnectOptions{WithoutFailedStore: sub != "fail"})
	if err != nil {
		return app.errorf("%v", err)
	}
	defer conn.Close()
	admin, err := laraq.NewAdmin(conn, laraq.WithClock(clock))
	if err != nil {
		return app.errorf("%v", err)
	}
	switch sub {
	case "list":
		jobs, err := admin.Invalid(ctx, queue)
		if err != nil {
			return app.errorf("%v", err)
		}
		printInvalid(app, queue, jobs, *raw, *asJSON)
	case "requeue":
		n, err := admin.RequeueInvalid(ctx, queue)
		if err != nil {
			return app.errorf("%v", err)
		}
		fmt.Fprintf(app.Stdout, "Moved %d set-aside payloads back to the [%s] queue.\n", n, queue)
	case "fail":
		n, err := admin.FailInvalid(ctx, queue)
		if err != nil {
			return app.errorf("recorded %d, then: %v", n, err)
		}
		fmt.Fprintf(app.Stdout, "Recorded %d set-aside payloads of the [%s] queue as failed jobs.\n", n, queue)
	case "clear":
		n, err := admin.ClearInvalid(ctx, queue)
		if err != nil {
			return app.errorf("%v", err)
		}
		fmt.Fprintf(app.Stdout, "Deleted %d set-aside payloads of the [%s] queue.\n", n, queue)
	}
	return 0
}

func printInvalid(app *App, queue string, jobs [][]byte, raw, asJSON bool) {
	if asJSON {
		enc := json.NewEncoder(app.Stdout)
		for i, j := range jobs {
			_ = enc.Encode(map[string]any{"queue": queue, "index": i, "reason": laraq.WhyInvalid(j), "payload": string(j)})
		}
		return
	}
	if len(jobs) == 0 {
		fmt.Fprintf(app.Stdout, "No set-aside payloads on the [%s] queue.\n", queue)
		return
	}
	for i, j := range jobs {
		why := laraq.WhyInvalid(j)
		if why == "" {
			why = "Redis' Lua JSON decoder rejected it"
		}
		fmt.Fprintf(app.Stdout, "#%d (%d bytes): %s\n", i, len(j), why)
		if doc, _, err := payload.Readable(j); err == nil && !raw {
			fmt.Fprintf(app.Stdout, "%s\n", doc)
		} else {
			fmt.Fprintf(app.Stdout, "%s\n", j)
		}
	}
}
