package laraq

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/internal/rdb"
)

// Horizon's dashboard lists the machines working the queues as master supervisors
// (`php artisan horizon`, one per machine), each with supervisors running pools of
// worker processes per queue; its workload page counts those processes, and
// `php artisan horizon:terminate`, `horizon:pause` and `horizon:continue` signal the pid
// of every master whose name starts with the slug of the machine's hostname. A worker
// with WorkerConfig.HorizonSupervisor set appears there as one master with one
// supervisor, refreshed while it runs and removed when it stops; those artisan commands
// reach it through the signals `laraq work` obeys (TERM, USR2, CONT).

// Defaults of HorizonSupervisor.
const (
	DefaultHorizonSupervisorName = "laraq"
	// DefaultHorizonEnvironment is the master's environment: one that
	// horizon.environments does not plan, so the dashboard lists no planned supervisors
	// of it as "inactive" beside the real one.
	DefaultHorizonEnvironment = "laraq"
	// DefaultHorizonInterval is how often the records are written. Horizon's masters
	// write theirs every second; readers drop a master not written for 14 seconds.
	DefaultHorizonInterval = 2 * time.Second
)

// HorizonSupervisor makes a worker appear in Horizon's dashboard as a master supervisor
// with one supervisor (see WorkerConfig.HorizonSupervisor). It needs Connection.Horizon.
type HorizonSupervisor struct {
	// Master is the master supervisor's name. horizon:terminate, pause and continue
	// signal the masters whose name starts with Str::slug(gethostname()), so it should
	// start with the slug of this machine's hostname. Default: that slug, "-" and four
	// random letters or digits, as `php artisan horizon` names itself.
	Master string
	// Name is the supervisor's key: its record is named Master + ":" + Name, and
	// horizon:list and the dashboard show it. Default DefaultHorizonSupervisorName.
	Name string
	// Environment is the master's environment. Default DefaultHorizonEnvironment.
	Environment string
	// PID is the process the artisan commands signal. Default os.Getpid().
	PID int
	// Interval is how often the records are written, at most 10 s. Default
	// DefaultHorizonInterval.
	Interval time.Duration
	// Trim trims Horizon's job lists as a PHP master does (recent, pending, completed
	// and silenced every minute, failed and monitored every twelfth of their trim
	// minutes) and drops masters and supervisors that stopped writing. Only masters
	// trim: a fleet without a PHP `php artisan horizon` needs one of its Go workers to.
	// Several trimming is harmless. Default false.
	Trim bool
}

// supervisorRun is the state of one worker's supervisor records.
type supervisorRun struct {
	c           *Worker
	cfg         HorizonSupervisor
	name        string // Master:Name
	options     rdb.HorizonSupervisorOptions
	trimmed     [3]time.Time // recent, failed, monitored
	masterCmds  string
	supervisors string
}

// newSupervisorRun checks the configuration and fills in its defaults.
func (c *Worker) newSupervisorRun() (*supervisorRun, error) {
	cfg := *c.s.HorizonSupervisor
	if cfg.Master == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("laraq: Horizon master name: %w", err)
		}
		cfg.Master = HorizonMasterName(host)
	}
	if cfg.Name == "" {
		cfg.Name = DefaultHorizonSupervisorName
	}
	if strings.Contains(cfg.Master, ":") {
		return nil, fmt.Errorf("laraq: Horizon master name %q must not contain ':'", cfg.Master)
	}
	if cfg.Environment == "" {
		cfg.Environment = DefaultHorizonEnvironment
	}
	if cfg.PID == 0 {
		cfg.PID = os.Getpid()
	}
	switch {
	case cfg.Interval == 0:
		cfg.Interval = DefaultHorizonInterval
	case cfg.Interval < 0 || cfg.Interval > 10*time.Second:
		return nil, fmt.Errorf("laraq: HorizonSupervisor.Interval %s: want up to 10s (readers drop a master after %ds)", cfg.Interval, rdb.HorizonMasterWindow)
	}
	s := c.s
	backoff := 0
	if len(s.Backoff) > 0 {
		backoff = s.Backoff[0]
	}
	timeout := int(s.Timeout / time.Second)
	if s.Timeout < 0 {
		timeout = 0
	}
	sr := &supervisorRun{c: c, cfg: cfg, name: cfg.Master + ":" + cfg.Name}
	sr.options = rdb.HorizonSupervisorOptions{
		Connection:   s.connection,
		Queue:        strings.Join(s.Queues, ","),
		Balance:      "off",
		Backoff:      backoff,
		MaxProcesses: s.Concurrency,
		MinProcesses: s.Concurrency,
		MaxTries:     s.tries,
		MaxTime:      int(s.MaxTime / time.Second),
		MaxJobs:      s.MaxJobs,
		Memory:       int(s.MemoryLimit >> 20),
		Sleep:        int(s.Sleep / time.Second),
		Timeout:      timeout,
		ParentID:     cfg.PID,
		Rest:         int(s.Rest / time.Second),
	}
	keys := c.hz.rec.Keys()
	sr.masterCmds, sr.supervisors = keys.MasterCommands(cfg.Master), keys.SupervisorCommands(sr.name)
	return sr, nil
}

// HorizonMasterName is a master supervisor name as `php artisan horizon` makes one on a
// machine named hostname: Str::slug(hostname), "-", four random letters or digits.
func HorizonMasterName(hostname string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return php.Slug(hostname, "-") + "-" + string(b)
}

// startHorizonSupervisor writes the supervisor records until the returned stop is
// called, which removes them (as a terminating master forgets itself). Without
// WorkerConfig.HorizonSupervisor it does nothing.
func (c *Worker) startHorizonSupervisor(r *run) (stop func()) {
	if c.hz == nil {
		return func() {}
	}
	c.log.Info("writing Laravel Horizon's records", "prefix", c.hz.rec.Keys().Prefix)
	sr := c.hz.sup
	if sr == nil {
		return func() {}
	}
	ctx, cancel := context.WithCancel(r.ackCtx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sr.run(ctx, r)
	}()
	return func() {
		cancel()
		<-done
		fctx, fcancel := context.WithTimeout(context.WithoutCancel(r.ackCtx), 2*time.Second)
		defer fcancel()
		c.hz.exec(fctx, "supervisor", func(p redis.Pipeliner) error {
			c.hz.rec.ForgetMaster(fctx, p, sr.cfg.Master, sr.name)
			return nil
		})
		c.log.Info("Horizon master supervisor removed", "master", sr.cfg.Master)
	}
}

func (sr *supervisorRun) run(ctx context.Context, r *run) {
	c := sr.c
	c.hz.exec(ctx, "supervisor", func(p redis.Pipeliner) error {
		c.hz.rec.FlushCommands(ctx, p, sr.masterCmds)
		c.hz.rec.FlushCommands(ctx, p, sr.supervisors)
		return nil
	})
	c.log.Info("registered as a Horizon master supervisor", "master", sr.cfg.Master, "supervisor", sr.name,
		"pid", sr.cfg.PID, "environment", sr.cfg.Environment, "trim", sr.cfg.Trim)
	t := time.NewTicker(sr.cfg.Interval)
	defer t.Stop()
	for {
		sr.beat(ctx, r)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// beat writes the master's and the supervisor's records, reads their command lists and
// trims when due.
func (sr *supervisorRun) beat(ctx context.Context, r *run) {
	c := sr.c
	h := c.hz
	// A worker that stops taking jobs (paused, or draining before it exits) shows as
	// paused, as a terminating Horizon master does.
	paused := c.Paused() || r.ctx.Err() != nil
	pools := []rdb.HorizonPool{{Queue: sr.options.Queue, Processes: c.s.Concurrency}}
	if r.ctx.Err() != nil {
		pools[0].Processes = 0
	}
	now := time.Now()
	h.exec(ctx, "supervisor", func(p redis.Pipeliner) error {
		if err := h.rec.UpdateMaster(ctx, p, rdb.HorizonMaster{Name: sr.cfg.Master, Environment: sr.cfg.Environment,
			PID: sr.cfg.PID, Paused: paused, Supervisors: []string{sr.name}}); err != nil {
			return err
		}
		if err := h.rec.UpdateSupervisor(ctx, p, rdb.HorizonSupervisor{Name: sr.name, PID: sr.cfg.PID, Paused: paused,
			Pools: pools, Options: sr.options}); err != nil {
			return err
		}
		if !sr.cfg.Trim {
			return nil
		}
		h.rec.FlushExpiredSupervisors(ctx, p)
		trim := h.rec.Trim()
		every := [3]time.Duration{time.Minute, max(1, time.Duration(trim.Failed/12)) * time.Minute,
			max(1, time.Duration(trim.Monitored/12)) * time.Minute}
		for i, fn := range []func(context.Context, redis.Pipeliner){h.rec.TrimRecentJobs, h.rec.TrimFailedJobs, h.rec.TrimMonitoredJobs} {
			if sr.trimmed[i].IsZero() || now.Sub(sr.trimmed[i]) >= every[i] {
				fn(ctx, p)
				sr.trimmed[i] = now
			}
		}
		return nil
	})
	for _, list := range []string{sr.masterCmds, sr.supervisors} {
		cmds, err := h.rec.PendingCommands(ctx, h.client, list)
		if err != nil && ctx.Err() == nil {
			h.failed("commands", err)
		}
		for _, cmd := range cmds {
			// Stock Horizon pushes commands only to the masters and supervisors it
			// started; the artisan commands signal the pid instead.
			c.log.Warn("Horizon command for this worker ignored", "list", list, "command", cmd.Command)
		}
	}
}
