package laraq_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/laraqtest"
	"github.com/laraq/laraq/phpser"
)

// SendInvoice stands for the PHP class App\Jobs\SendInvoice:
//
//	class SendInvoice implements ShouldQueue {
//	    use InteractsWithQueue, Queueable, SerializesModels;
//	    public $invoiceId;
//	    protected $customer; // an Eloquent model
//	}
type SendInvoice struct {
	InvoiceID int64                  `php:"invoiceId"`
	Customer  phpser.ModelIdentifier `php:"customer"`
}

func (SendInvoice) PHPClass() string { return `App\Jobs\SendInvoice` }

func ExampleHandle() {
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[SendInvoice]) error {
		fmt.Printf("invoice %d for %s #%v, attempt %d on %s\n",
			job.Command.InvoiceID, job.Command.Customer.Class, job.Command.Customer.ID, job.Attempt, job.Queue)
		return nil
	})

	job, _ := laraqtest.NewObjectJob(SendInvoice{
		InvoiceID: 1042,
		Customer:  phpser.ModelIdentifier{Class: `App\Models\Customer`, ID: int64(7), Relations: []string{}},
	})
	res, _ := laraqtest.Run(context.Background(), jobs, job)
	fmt.Println(res.Outcome)
	// Output:
	// invoice 1042 for App\Models\Customer #7, attempt 1 on default
	// done
}

func ExampleReleaseAfter() {
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[SendInvoice]) error {
		if job.Attempt < 3 {
			// Like $this->release(30): back to the queue, available in 30 s.
			return laraq.ReleaseAfter(30 * time.Second)
		}
		return laraq.Fail(errors.New("mail server refuses us"))
	})
	for _, attempt := range []int{1, 3} {
		job, _ := laraqtest.NewObjectJob(SendInvoice{InvoiceID: 1}, laraqtest.Attempt(attempt))
		res, _ := laraqtest.Run(context.Background(), jobs, job)
		fmt.Println(attempt, res.Outcome, res.Delay, res.Err)
	}
	// Output:
	// 1 release 30s release the job after 30s
	// 3 fail 0s mail server refuses us
}

func ExampleJobs_Alias() {
	jobs := laraq.NewJobs()
	jobs.HandleFunc(`App\Jobs\Billing\SendInvoice`, func(ctx context.Context, job *laraq.JobInfo) error { return nil })
	// Jobs queued before the class moved still carry the old name.
	jobs.Alias(`App\Jobs\SendInvoice`, `App\Jobs\Billing\SendInvoice`)

	as, ok := jobs.Handles(`App\Jobs\SendInvoice`)
	fmt.Println(as, ok)
	_, ok = jobs.Handles(`App\Jobs\Unknown`)
	fmt.Println(ok)
	// Output:
	// App\Jobs\Billing\SendInvoice true
	// false
}

func ExampleOutcomeOf() {
	for _, err := range []error{
		nil,
		errors.New("timeout talking to the bank"),
		laraq.ReleaseAfter(time.Minute),
		fmt.Errorf("rate limited: %w", laraq.ReleaseAfter(5*time.Second)),
		laraq.Fail(errors.New("card declined")),
		laraq.Delete(),
	} {
		o, d := laraq.OutcomeOf(err)
		fmt.Println(o, d)
	}
	// Output:
	// done 0s
	// retry 0s
	// release 1m0s
	// release 5s
	// fail 0s
	// delete 0s
}
