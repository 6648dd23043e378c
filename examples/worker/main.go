// Command worker is a starting point for a Go worker on a Laravel application's Redis
// queues: it reads the application's .env, runs two job classes with typed Go handlers
// and leaves every other job to the PHP workers on the same queues.
//
//	go run ./examples/worker /var/www/shop
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/laraq/laraq/config"
	"github.com/laraq/laraq/consumer"
	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/handlers"
	"github.com/laraq/laraq/phpser"
)

// SendWelcomeEmail mirrors App\Jobs\SendWelcomeEmail: public $user (SerializesModels),
// protected $locale.
type SendWelcomeEmail struct {
	User   phpser.ModelIdentifier `php:"user"`
	Locale string                 `php:"locale"`
}

// GenerateInvoice mirrors App\Jobs\GenerateInvoice: public int $orderId.
type GenerateInvoice struct {
	OrderID int64 `php:"orderId"`
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	log := slog.Default()
	must := func(err error) {
		if err != nil {
			log.Error("worker", "err", err)
			os.Exit(1)
		}
	}
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	cfg, err := config.Load(config.Sources{LaravelRoot: root}) // its .env, config/*.php, version
	must(err)
	clients, err := cfg.NewClients()
	must(err)
	defer clients.Close()
	store, err := failed.Open(ctx, cfg.FailedDatabase, cfg.FailedOptions()) // the app's failed_jobs
	must(err)
	defer store.Close()

	reg := handlers.NewRegistry()
	handlers.Register(reg, `App\Jobs\SendWelcomeEmail`, func(ctx context.Context, job *SendWelcomeEmail, meta *handlers.Job) error {
		log.Info("welcome mail", "user", job.User.ID, "locale", job.Locale, "attempt", meta.Attempt)
		return nil // done: deleted, like a PHP job whose handle() returned
	})
	handlers.Register(reg, `App\Jobs\GenerateInvoice`, func(ctx context.Context, job *GenerateInvoice, meta *handlers.Job) error {
		log.Info("invoice", "order", job.OrderID)
		return nil // an error would be retried by Laravel's rules (tries, backoff)
	})

	w, err := consumer.New(clients.Queue, consumer.Config{
		Queues: []string{cfg.Queue}, Connection: cfg.Connection, Prefix: cfg.Prefix, Registry: reg,
		RetryAfter: time.Duration(cfg.RetryAfter) * time.Second, Tries: new(3), Failed: store,
		Unhandled: consumer.UnhandledPolicy{Action: consumer.HandBackUnhandled}, // other classes: PHP's
		Cache:     consumer.CacheConfig{Client: clients.Cache, RedisPrefix: &cfg.Prefix, Prefix: cfg.CachePrefix, Separator: cfg.CacheSeparator},
	})
	must(err)
	if err := w.Run(ctx); err != nil { // returns after SIGTERM (nil) or queue:restart
		log.Info("worker stopped", "reason", err)
	}
}
