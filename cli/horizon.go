package cli

import (
	"errors"
	"flag"
	"strings"

	"github.com/laraq/laraq"
)

func init() {
	// --horizon is a setting of the application's configuration, as LARAQ_HORIZON.
	flagKeys["horizon"] = "LARAQ_HORIZON"
}

// horizonUsage is the Horizon part of the work and dispatch usage.
const horizonUsage = `Horizon: when the application uses Laravel Horizon (laravel/horizon under --laravel-root:
vendor/laravel/horizon, composer.json, composer.lock or config/horizon.php), laraq writes
the records Horizon's dashboard reads, as Horizon's PHP queue does: pushed, reserved,
released, completed and failed jobs, tags, runtimes and throughput, with the prefix, trim
and silenced classes of config/horizon.php. --horizon on writes them without an
application that shows Horizon (Horizon's defaults, HORIZON_PREFIX), --horizon off never.`

// horizonFlags are the Horizon flags of work (all) and dispatch (--horizon).
type horizonFlags struct {
	mode       string
	supervisor supervisorFlag
	trim       bool
}

// supervisorFlag is --horizon-supervisor[=NAME]: a boolean flag that also takes a name.
type supervisorFlag struct {
	on   bool
	name string
}

func (f *supervisorFlag) String() string {
	if f == nil || !f.on {
		return ""
	}
	return f.name
}

func (f *supervisorFlag) Set(s string) error {
	switch strings.ToLower(s) {
	case "true", "1":
		f.on, f.name = true, ""
	case "false", "0":
		f.on, f.name = false, ""
	default:
		if strings.Contains(s, ":") {
			return errors.New("a supervisor name must not contain ':'")
		}
		f.on, f.name = true, s
	}
	return nil
}

func (f *supervisorFlag) IsBoolFlag() bool { return true }

// addHorizonFlags registers --horizon, and with supervisor the flags of the supervisor
// records.
func addHorizonFlags(fs *flag.FlagSet, supervisor bool) *horizonFlags {
	h := &horizonFlags{}
	fs.StringVar(&h.mode, "horizon", "auto", "write Laravel Horizon's records: `auto` (when the application uses Horizon), on or off\n(default: LARAQ_HORIZON, else auto)")
	if supervisor {
		fs.Var(&h.supervisor, "horizon-supervisor", "list this worker in Horizon's dashboard as a master supervisor with a supervisor named\n`NAME` (default laraq) while it runs; php artisan horizon:terminate, horizon:pause and\nhorizon:continue on this machine reach it")
		fs.BoolVar(&h.trim, "horizon-trim", true, "with --horizon-supervisor, trim Horizon's job lists as a PHP master does (needed when no\n'php artisan horizon' runs)")
	}
	return h
}

// apply sets the worker's supervisor records; the Horizon records themselves come with
// the connection (laravel.Config.Connect).
func (h *horizonFlags) apply(cfg *laraq.WorkerConfig, conn *laraq.Connection) error {
	if conn.Horizon == nil {
		if h.supervisor.on {
			return errors.New("--horizon-supervisor: the application does not use Horizon (name its root with --laravel-root, or pass --horizon on)")
		}
		return nil
	}
	if h.supervisor.on {
		cfg.HorizonSupervisor = &laraq.HorizonSupervisor{Name: h.supervisor.name, Trim: h.trim}
	}
	return nil
}
