// Package artisanlog writes a worker's log the way `php artisan queue:work` prints it, or
// as structured slog output, behind one slog.Handler chosen by Format:
//
//	artisan   Laravel 9+:  "  2026-11-21 10:00:00 App\Jobs\SendWelcome ........ RUNNING"
//	                       "  2026-11-21 10:00:00 App\Jobs\SendWelcome .. 12.34ms DONE"
//	artisan8  Laravel 8:   "[2026-11-21 10:00:00][<job id>] Processing: App\Jobs\SendWelcome"
//	json      slog.NewJSONHandler: one object per record
//	text      slog.NewTextHandler: key=value
//
// The worker logs each job step with Job, which writes an ordinary slog record (message
// "Processing", "Processed", "Failed" or "Released" and the attributes job_status,
// job_id, job, queue, runtime); the artisan handlers recognise it by job_status and lay it
// out like WorkCommand::writeOutput, colours included when Options.Color is set (use
// IsTerminal). The Artisan8 lines are checked byte for byte against Laravel 8's own
// WorkCommand, with and without colours. Laravel 8 prints no line for a job released
// after an exception; Laravel 9+ prints FAIL in yellow. Other records (warnings, errors)
// come out as "[date] LEVEL: message k=v" (artisan8) or "  LEVEL  message k=v" (artisan).
package artisanlog
