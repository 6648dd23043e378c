package cli

import (
	"bufio"
	"context"
	"fmt"
	"strings"
)

func init() {
	register(&Command{Name: "restart", Summary: "signal every worker to restart after its current job, like queue:restart", Run: runRestart})
	register(&Command{Name: "pause", Summary: "pause job processing on a queue, like queue:pause (Laravel 12.40+)", Run: runPause})
	register(&Command{Name: "resume", Summary: "resume job processing on a paused queue, like queue:resume", Run: runResume})
	register(&Command{Name: "clear", Summary: "delete every job of a queue, like queue:clear", Run: runClear})
}

const restartUsage = `restart [flags]

Writes the queue:restart signal (cache key illuminate:queue:restart = the current Unix
time, without expiry) to the Laravel application's Redis cache store, exactly as
'php artisan queue:restart' does. PHP workers and laraq workers that read the same
cache store finish their current job and exit, for their supervisor to start them again.

The key lives on the cache connection (REDIS_CACHE_DB, database 1 in the skeleton) under
the Redis prefix and the cache prefix, with ':' between cache prefix and key up to
Laravel 10: laravel_database_laravel_cache:illuminate:queue:restart on Laravel 8. Use
--laravel-root or --env-file so laraq derives them as the application does (without a
framework to read, the version is guessed from the .env keys: CACHE_DRIVER, MIX_* … say
8). With no application given the connection prefix is empty and the 11.x cache prefix
applies: laravel_cache_illuminate:queue:restart.`

func runRestart(ctx context.Context, app *App, args []string) int {
	fs := app.NewFlagSet("restart", restartUsage)
	af := addAppFlags(fs.FlagSet, false, false)
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
	if !cfg.SharedCacheStore() {
		// php artisan queue:restart writes to the application's cache store; a key laraq
		// writes to Redis would reach laraq workers only.
		return app.errorf("restart: the application's cache store is %q (%s), neither redis nor the database store: PHP workers read queue:restart there, "+
			"so writing it to Redis would restart laraq workers only; run 'php artisan queue:restart', or set the cache store to redis or database (CACHE_STORE, CACHE_DRIVER before Laravel 11)",
			cfg.CacheStore, cfg.Origin("CacheStore"))
	}
	admin, closeConn, err := af.signalAdmin(ctx, app, cfg)
	if err != nil {
		return app.errorf("%v", err)
	}
	defer closeConn()
	if err := admin.Restart(ctx); err != nil {
		return app.errorf("restart: %v", err)
	}
	fmt.Fprintln(app.Stdout, "Broadcasting queue restart signal.")
	return 0
}

const pauseUsage = `pause [flags] [CONNECTION:]QUEUE

Pauses job processing on QUEUE as 'php artisan queue:pause' does (Laravel 12.40+): sets
the cache key illuminate:queue:paused:CONNECTION:QUEUE to true without expiry. Workers of
Laravel 12.40+ and laraq workers skip the queue until 'resume'; workers of older Laravel
versions do not know the key and keep working. CONNECTION is the queue connection name
in config/queue.php (default --connection, "redis").`

const resumeUsage = `resume [flags] [CONNECTION:]QUEUE

Resumes job processing on a queue paused with 'pause' or 'php artisan queue:pause':
deletes its illuminate:queue:paused:CONNECTION:QUEUE cache key, as 'php artisan
queue:resume' does.`

func runPause(ctx context.Context, app *App, args []string) int {
	return pauseOrResume(ctx, app, args, true)
}

func runResume(ctx context.Context, app *App, args []string) int {
	return pauseOrResume(ctx, app, args, false)
}

func pauseOrResume(ctx context.Context, app *App, args []string, pause bool) int {
	name, usage := "pause", pauseUsage
	if !pause {
		name, usage = "resume", resumeUsage
	}
	fs := app.NewFlagSet(name, usage)
	af := addAppFlags(fs.FlagSet, false, false)
	connFlag := fs.String("connection", "", "queue `connection` name the workers run (default: LARAQ_CONNECTION or \"redis\")")
	pos, rc := parseInterleaved(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(pos) > 1 {
		return fs.Fail("takes one [CONNECTION:]QUEUE, got %q", pos)
	}
	if len(pos) == 0 {
		// queue:pause {queue}: the argument is required, as in artisan.
		return fs.Fail("which queue? give QUEUE or CONNECTION:QUEUE")
	}
	cfg, err := af.load(app)
	if err != nil {
		return app.errorf("%v", err)
	}
	def := cfg.Connection
	if *connFlag != "" {
		def = *connFlag
	}
	connection, queue := splitConnectionQueue(pos[0], def)
	if connection == "" || queue == "" {
		return fs.Fail("%q: want QUEUE or CONNECTION:QUEUE", pos[0])
	}
	admin, closeConn, err := af.signalAdmin(ctx, app, cfg)
	if err != nil {
		return app.errorf("%v", err)
	}
	defer closeConn()
	if pause {
		err = admin.Pause(ctx, connection, queue)
	} else {
		err = admin.Resume(ctx, connection, queue)
	}
	if err != nil {
		return app.errorf("%s: %v", name, err)
	}
	word := "paused"
	if !pause {
		word = "resumed"
	}
	fmt.Fprintf(app.Stdout, "Job processing on queue [%s:%s] has been %s.\n", connection, queue, word)
	return 0
}

const clearUsage = `clear [flags] [QUEUE]

Deletes every job of QUEUE (default --queue, else REDIS_QUEUE, else "default"): ready,
delayed and reserved, with their notify tokens, in one step as 'php artisan queue:clear'
does, and prints how many there were. Payloads laraq set aside as unreservable (see
'laraq invalid') are deleted too. Jobs running now finish, but cannot be released or
retried afterwards. Asks for confirmation unless --force.`

func runClear(ctx context.Context, app *App, args []string) int {
	fs := app.NewFlagSet("clear", clearUsage)
	af := addAppFlags(fs.FlagSet, false, false)
	force := fs.Bool("force", false, "do not ask for confirmation")
	pos, rc := parseInterleaved(fs, args)
	if rc >= 0 {
		return rc
	}
	if len(pos) > 1 {
		return fs.Fail("takes one [CONNECTION:]QUEUE, got %q", pos)
	}
	cfg, err := af.load(app)
	if err != nil {
		return app.errorf("%v", err)
	}
	queue := cfg.Queue
	if len(pos) == 1 {
		queue = pos[0]
	}
	if !*force && !app.confirm(fmt.Sprintf("Are you sure you want to clear all jobs from the [%s] queue?", queue)) {
		return 1
	}
	admin, closeConn, err := af.admin(ctx, app, cfg)
	if err != nil {
		return app.errorf("%v", err)
	}
	defer closeConn()
	n, err := admin.Clear(ctx, queue)
	if err != nil {
		return app.errorf("clear %s: %v", queue, err)
	}
	fmt.Fprintf(app.Stdout, "Cleared %d jobs from the [%s] queue\n", n, queue)
	aside, err := admin.ClearInvalid(ctx, queue)
	if err != nil {
		return app.errorf("clear the set-aside payloads of %s: %v", queue, err)
	}
	if aside > 0 {
		fmt.Fprintf(app.Stdout, "Deleted %d set-aside payloads of the [%s] queue\n", aside, queue)
	}
	return 0
}

// confirm asks question as artisan's confirm() does and reports a yes; on anything else
// it prints "Command canceled.".
func (a *App) confirm(question string) bool {
	fmt.Fprintf(a.Stdout, "%s (yes/no) [no]:\n> ", question)
	answer, _ := bufio.NewReader(a.Stdin).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true
	}
	fmt.Fprintln(a.Stdout, "Command canceled.")
	return false
}
