package artisanlog_test

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/laraq/laraq/artisanlog"
)

func Example() {
	h, err := artisanlog.NewHandler(os.Stdout, artisanlog.Options{Format: artisanlog.Artisan, Width: 72, Location: time.UTC})
	if err != nil {
		panic(err)
	}
	// A fixed clock for the example's output; a worker uses the record's own time.
	log := slog.New(clockHandler{h, time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)})
	ctx := context.Background()
	artisanlog.Job(ctx, log, artisanlog.Starting, "a1", `App\Jobs\SendWelcome`, "default", 0)
	artisanlog.Job(ctx, log, artisanlog.Success, "a1", `App\Jobs\SendWelcome`, "default", 12340*time.Microsecond)
	// Output:
	//   2026-11-21 10:00:00 App\Jobs\SendWelcome ................... RUNNING
	//   2026-11-21 10:00:00 App\Jobs\SendWelcome .............. 12.34ms DONE
}

func Example_artisan8() {
	h, _ := artisanlog.NewHandler(os.Stdout, artisanlog.Options{Format: artisanlog.Artisan8, Location: time.UTC})
	log := slog.New(clockHandler{h, time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)})
	ctx := context.Background()
	artisanlog.Job(ctx, log, artisanlog.Starting, "Kq3xCPaG", `App\Jobs\SendWelcome`, "default", 0)
	artisanlog.Job(ctx, log, artisanlog.Failed, "Kq3xCPaG", `App\Jobs\SendWelcome`, "default", time.Second)
	// Output:
	// [2026-11-21 10:00:00][Kq3xCPaG] Processing: App\Jobs\SendWelcome
	// [2026-11-21 10:00:00][Kq3xCPaG] Failed:     App\Jobs\SendWelcome
}

type clockHandler struct {
	slog.Handler
	at time.Time
}

func (c clockHandler) Handle(ctx context.Context, r slog.Record) error {
	r.Time = c.at
	return c.Handler.Handle(ctx, r)
}
