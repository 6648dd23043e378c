package worker

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/laraq/laraq/internal/dispatch"
	"github.com/laraq/laraq/internal/job"
)

// chains continues the chains of jobs that succeeded (Bus::chain, ->chain()).
type chains struct {
	base
	jobs *job.Jobs
}

// continueChain is CallQueuedHandler's ensureNextJobInChainIsDispatched for a job whose
// handler succeeded: when the command's chained list is not empty, its first element is
// dispatched as Bus\Queueable::dispatchNextJobInChain does (dispatch.NextInChain). An
// error is the job's exception, as in PHP, where a dispatch that throws makes the job
// fail or retry.
func (c *chains) continueChain(ctx context.Context, a *attempt) error {
	info := a.job
	env := info.Payload
	if env == nil || !env.IsObjectJob() || !dispatch.MayHaveChain(env.Command) {
		return nil
	}
	cmd, err := info.Value()
	if err != nil {
		return fmt.Errorf("reading the chain of %s: %w", info.Class, err)
	}
	next, err := dispatch.NextInChain(cmd, c.cfg.JobRelease, func(class string) reflect.Type { return job.TypeOf(c.jobs, class) })
	if err != nil {
		return fmt.Errorf("continuing the chain of %s: %w", info.Class, err)
	}
	if next == nil {
		return nil
	}
	class := next.Class
	if next.DecodeErr != nil {
		c.log.Warn("next job of the chain does not fit its Go type; its class defaults or tries(), backoff(), retryUntil() and displayName() are not read",
			"job", info.Name, "id", info.ID, "next", class, "err", next.DecodeErr)
	}
	if len(next.MayLack) > 0 && job.FirstUnknownNext(c.jobs, class) {
		c.log.Warn("next job of the chain has no Go type (laraq.Declare); metadata PHP takes from its class defaults, methods or attributes may be missing",
			"job", info.Name, "next", class, "absent", strings.Join(next.MayLack, ","))
	}
	if name := next.Connection(); name != "" && name != c.cfg.Connection {
		// Laravel would push it through that connection. Queue keys carry no connection
		// name, so another Redis connection on the same database shares these keys.
		c.log.Warn("next job of the chain names another queue connection; pushed to this worker's connection",
			"job", info.Name, "id", info.ID, "next", class, "connection", name, "worker_connection", c.cfg.Connection)
	}
	m, err := c.cfg.Chain.PrepareNext(next)
	if err != nil {
		return fmt.Errorf("dispatching the next job of the chain (%s): %w", class, err)
	}
	if p, err := job.CarryLogContext(c.cfg.Release, env, m.Payload, m.ID); err != nil {
		c.log.Warn("the job's Laravel Context is not carried to the next job of its chain", "job", info.Name, "id", info.ID, "err", err)
	} else {
		m.Payload = p
	}
	m.Payload = c.cfg.Chain.CreatePayload(ctx, info, m.Payload) // dispatched while info runs, as in PHP
	if _, err := c.retry(ctx, a, "dispatching the next job of a chain", func(ctx context.Context) error {
		return c.cfg.Chain.EnqueueOnce(ctx, m, max(2*c.reservation(), time.Minute))
	}); err != nil {
		return fmt.Errorf("dispatching the next job of the chain (%s): %w", class, err)
	}
	c.log.Info("next job of the chain dispatched", "job", info.Name, "id", info.ID,
		"next", class, "next_id", m.ID, "queue", m.Queue, "delayed", m.Delayed)
	return nil
}
