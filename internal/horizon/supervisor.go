package horizon

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"math/big"
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
// with a Supervisor appears there as one master with one
// supervisor, refreshed while it runs and removed when it stops; those artisan commands
// reach it through the signals `laraq work` obeys (TERM, USR2, CONT).

// Defaults of SupervisorOptions (laraq.HorizonSupervisor).
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

// SupervisorOptions are laraq.HorizonSupervisor's settings (see its fields); zero
// fields take the defaults above.
type SupervisorOptions struct {
	Master      string
	Name        string
	Environment string
	PID         int
	Interval    time.Duration
	Trim        bool
}

// Supervisor writes one worker's master and supervisor records.
type Supervisor struct {
	h           *Recorder
	cfg         SupervisorOptions
	name        string // Master:Name
	options     rdb.HorizonSupervisorOptions
	trimmed     [3]time.Time // recent, failed, monitored
	masterCmds  string
	supervisors string
	log         *slog.Logger
}

// Status is what a worker's records say of it at each beat: its concurrency, whether it
// is paused, and whether it drains (takes no more jobs before it exits).
type Status func() (processes int, paused, draining bool)

// NewSupervisor checks the options and fills in their defaults. work is what the worker
// works, as Horizon lists a supervisor's options.
func NewSupervisor(h *Recorder, cfg SupervisorOptions, work rdb.HorizonSupervisorOptions, log *slog.Logger) (*Supervisor, error) {
	if cfg.Master == "" {
		host, err := os.Hostname()
		if err != nil {
			return nil, fmt.Errorf("laraq: Horizon master name: %w", err)
		}
		cfg.Master = MasterName(host)
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
	work.ParentID = cfg.PID
	s := &Supervisor{h: h, cfg: cfg, name: cfg.Master + ":" + cfg.Name, options: work, log: log}
	keys := h.Rec.Keys()
	s.masterCmds, s.supervisors = keys.MasterCommands(cfg.Master), keys.SupervisorCommands(s.name)
	return s, nil
}

// MasterName is a master supervisor name as `php artisan horizon` makes one on a
// machine named hostname: Str::slug(hostname), "-", four random letters or digits.
func MasterName(hostname string) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	b := make([]byte, 4)
	for i := range b {
		n, err := rand.Int(rand.Reader, big.NewInt(int64(len(alphabet))))
		if err != nil {
			n = big.NewInt(int64(i))
		}
		b[i] = alphabet[n.Int64()]
	}
	return php.Slug(hostname, "-") + "-" + string(b)
}

// Start writes the records until the returned stop is called, which removes them (as a
// terminating master forgets itself). ctx bounds every write, the removal included.
func (sr *Supervisor) Start(ctx context.Context, status Status) (stop func()) {
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sr.run(rctx, status)
	}()
	return func() {
		cancel()
		<-done
		fctx, fcancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer fcancel()
		sr.h.Exec(fctx, "supervisor", func(p redis.Pipeliner) error {
			sr.h.Rec.ForgetMaster(fctx, p, sr.cfg.Master, sr.name)
			return nil
		})
		sr.log.Info("Horizon master supervisor removed", "master", sr.cfg.Master)
	}
}

func (sr *Supervisor) run(ctx context.Context, status Status) {
	h := sr.h
	h.Exec(ctx, "supervisor", func(p redis.Pipeliner) error {
		h.Rec.FlushCommands(ctx, p, sr.masterCmds)
		h.Rec.FlushCommands(ctx, p, sr.supervisors)
		return nil
	})
	sr.log.Info("registered as a Horizon master supervisor", "master", sr.cfg.Master, "supervisor", sr.name,
		"pid", sr.cfg.PID, "environment", sr.cfg.Environment, "trim", sr.cfg.Trim)
	t := time.NewTicker(sr.cfg.Interval)
	defer t.Stop()
	for {
		sr.beat(ctx, status)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// beat writes the master's and the supervisor's records, reads their command lists and
// trims when due.
func (sr *Supervisor) beat(ctx context.Context, status Status) {
	h := sr.h
	// A worker that stops taking jobs (paused, or draining before it exits) shows as
	// paused, as a terminating Horizon master does.
	processes, paused, draining := status()
	paused = paused || draining
	pools := []rdb.HorizonPool{{Queue: sr.options.Queue, Processes: processes}}
	if draining {
		pools[0].Processes = 0
	}
	now := time.Now()
	h.Exec(ctx, "supervisor", func(p redis.Pipeliner) error {
		if err := h.Rec.UpdateMaster(ctx, p, rdb.HorizonMaster{Name: sr.cfg.Master, Environment: sr.cfg.Environment,
			PID: sr.cfg.PID, Paused: paused, Supervisors: []string{sr.name}}); err != nil {
			return err
		}
		if err := h.Rec.UpdateSupervisor(ctx, p, rdb.HorizonSupervisor{Name: sr.name, PID: sr.cfg.PID, Paused: paused,
			Pools: pools, Options: sr.options}); err != nil {
			return err
		}
		if !sr.cfg.Trim {
			return nil
		}
		h.Rec.FlushExpiredSupervisors(ctx, p)
		trim := h.Rec.Trim()
		every := [3]time.Duration{time.Minute, max(1, time.Duration(trim.Failed/12)) * time.Minute,
			max(1, time.Duration(trim.Monitored/12)) * time.Minute}
		for i, fn := range []func(context.Context, redis.Pipeliner){h.Rec.TrimRecentJobs, h.Rec.TrimFailedJobs, h.Rec.TrimMonitoredJobs} {
			if sr.trimmed[i].IsZero() || now.Sub(sr.trimmed[i]) >= every[i] {
				fn(ctx, p)
				sr.trimmed[i] = now
			}
		}
		return nil
	})
	for _, list := range []string{sr.masterCmds, sr.supervisors} {
		cmds, err := h.Rec.PendingCommands(ctx, h.Client, list)
		if err != nil && ctx.Err() == nil {
			h.Failed("commands", err)
		}
		for _, cmd := range cmds {
			// Stock Horizon pushes commands only to the masters and supervisors it
			// started; the artisan commands signal the pid instead.
			sr.log.Warn("Horizon command for this worker ignored", "list", list, "command", cmd.Command)
		}
	}
}
