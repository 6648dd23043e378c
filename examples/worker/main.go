// Command worker is a starting point for a Go worker on a Laravel application's Redis
// queues: it reads the application's .env and config files as `laraq work --laravel-root`
// does, runs two job classes with typed Go handlers, and leaves every other job to the
// PHP workers on the same queues.
//
//	go run ./examples/worker /var/www/shop
package main

import (
	"context"
	"log"
	"os"
	"os/signal"
	"syscall"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/laravel"
	"github.com/laraq/laraq/phpser"
)

// SendWelcomeEmail mirrors App\Jobs\SendWelcomeEmail: public $user (SerializesModels),
// protected $locale.
type SendWelcomeEmail struct {
	User   phpser.ModelIdentifier `php:"user"`
	Locale string                 `php:"locale,protected"`
	laraq.Queueable
}

func (SendWelcomeEmail) PHPClass() string { return `App\Jobs\SendWelcomeEmail` }

// GenerateInvoice mirrors App\Jobs\GenerateInvoice: public int $orderId.
type GenerateInvoice struct {
	OrderID int64 `php:"orderId"`
	laraq.Queueable
}

func (GenerateInvoice) PHPClass() string { return `App\Jobs\GenerateInvoice` }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	root := "."
	if len(os.Args) > 1 {
		root = os.Args[1]
	}
	conn, err := laravel.Connect(ctx, laravel.App{Root: root}) // Redis, prefix, release, cache, failed_jobs
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[SendWelcomeEmail]) error {
		log.Printf("welcome mail to %s #%v in %q, attempt %d", job.Command.User.Class, job.Command.User.ID, job.Command.Locale, job.Attempt)
		return nil // done: deleted, like a PHP job whose handle() returned
	})
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[GenerateInvoice]) error {
		log.Printf("invoice for order %d", job.Command.OrderID)
		return nil // an error would be retried by Laravel's rules (tries, backoff)
	})

	cfg := laraq.QueueWork() // queue:work's options, as `laraq work` starts from
	cfg.Tries = 3
	cfg.Unhandled = laraq.UnhandledPolicy{Action: laraq.HandBackUnhandled} // other classes: PHP's
	w, err := laraq.NewWorker(conn, jobs, cfg)
	if err != nil {
		log.Fatal(err)
	}
	err = w.Run(ctx) // nil after SIGTERM, laraq.ErrRestart after queue:restart, ...
	if err != nil && laraq.ExitStatus(err) != 0 {
		log.Print(err)
	}
	os.Exit(laraq.ExitStatus(err)) // 0; 12 over the memory limit, as queue:work; 3 for a Redis setup no retry fixes
}
