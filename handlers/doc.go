// Package handlers routes Laravel queue jobs to Go functions by their PHP class name and
// defines what a handler can tell the worker to do with a job.
//
// # Routing
//
// A Registry maps class names to handlers by exact match, never by prefix: an object job
// (dispatch(new SendInvoice(...))) is routed by data.commandName
// (`App\Jobs\SendInvoice`), a string job (Queue::push('App\Jobs\Report@build', $data))
// by its whole job string. Alias keeps jobs of a renamed PHP class flowing to the new
// handler while old payloads are still queued.
//
// Register is the typed way in: the command is unserialized into a fresh struct of the
// handler's type before each call, fields tagged `php:"name"` taking the PHP property
// whatever its visibility (see package phpser):
//
//	type SendInvoice struct {
//		InvoiceID int64                  `php:"invoiceId"`
//		Customer  phpser.ModelIdentifier `php:"customer"` // a SerializesModels model
//	}
//	handlers.Register(reg, `App\Jobs\SendInvoice`, func(ctx context.Context, cmd *SendInvoice, job *handlers.Job) error {
//		return billing.Send(ctx, cmd.InvoiceID)
//	})
//
// Handle and HandleFunc take untyped handlers that read job.Command() or job.Bind
// themselves.
//
// # Outcomes
//
// Control flow out of a handler is typed, as in a PHP job's handle():
//
//	return nil                        // done: the job is deleted (its chain continues)
//	return err                        // retry by Laravel's rules (tries, backoff, maxExceptions)
//	return handlers.Release(30*time.Second) // $this->release(30)
//	return handlers.Fail(err)         // $this->fail($e): failed store, no more tries
//	return handlers.Delete()          // $this->delete(): gone, not failed
//
// A panic is recovered (Call) and becomes a *PanicError carrying the stack, handled like
// an ordinary error. A command that cannot be decoded is a *DecodeError, which fails the
// job at once: the same bytes cannot decode on the next try either. The Outcome
// constants document, for each case, what happens to the attempts count, the reserved
// set and the failed store; OutcomeOf classifies an error.
//
// The handler's context ends when the job's timeout (payload timeout, else the
// worker's) passes or the worker is stopped for good; a handler should return soon
// after. A Job carries the metadata PHP's $job offers: id, uuid, the 1-based attempt,
// queue and connection names, the display name, and the exact bytes the worker will
// acknowledge.
package handlers
