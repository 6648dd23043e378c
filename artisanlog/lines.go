package artisanlog

import (
	"context"
	"log/slog"

	"github.com/laraq/laraq"
)

// JobLines prints queue:work's line per job step from a worker's events: RUNNING when a
// handler starts, DONE when it returned (also after a release it asked for), FAIL when
// the job failed, or when it was released after an exception or a timeout, as Laravel 9+
// prints a JobReleasedAfterException; and HANDED BACK, laraq's own, when a job no Go
// handler takes went back to its queue for the PHP workers. A line whose outcome a
// middleware decided names it: "DONE (released by WithoutOverlapping)".
type JobLines struct {
	log *slog.Logger
}

// NewJobLines writes the job lines to log, a logger on a Handler of this package.
func NewJobLines(log *slog.Logger) *JobLines { return &JobLines{log: log} }

// OnEvent prints the line of one event; pass it (or call it from) laraq.WorkerConfig.OnEvent.
func (l *JobLines) OnEvent(e laraq.Event) {
	j := e.Job
	if j == nil {
		return
	}
	ctx := context.Background()
	by, decision := e.Middleware, string(e.Decision)
	switch e.Kind {
	case laraq.EventProcessing:
		Job(ctx, l.log, Starting, j.ID, j.Name, e.Queue, 0)
	case laraq.EventProcessed:
		JobDecided(ctx, l.log, Success, j.ID, j.Name, e.Queue, e.Runtime, by, decision)
	case laraq.EventFailed:
		JobDecided(ctx, l.log, Failed, j.ID, j.Name, e.Queue, e.Runtime, by, decision)
	case laraq.EventReleased:
		if e.AfterException {
			Job(ctx, l.log, Released, j.ID, j.Name, e.Queue, e.Runtime)
		}
	case laraq.EventHandedBack:
		Job(ctx, l.log, HandedBack, j.ID, j.Name, e.Queue, 0)
	}
}
