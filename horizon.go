package laraq

import (
	"log/slog"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/horizon"
	"github.com/laraq/laraq/internal/rdb"
)

// DefaultHorizonPrefix is the prefix Horizon falls back to when horizon.prefix is empty.
// The stock config/horizon.php sets Str::slug(APP_NAME, '_').'_horizon:' (for
// APP_NAME=Laravel: laravel_horizon:), which package laravel reads.
const DefaultHorizonPrefix = rdb.DefaultHorizonPrefix

// HorizonOptions are the settings of config/horizon.php a Go worker or dispatcher needs
// to write Horizon's records as the application's Horizon does. laravel.Load reads them
// from an application that uses Horizon.
type HorizonOptions struct {
	// Client is the Redis connection Horizon keeps its records on (horizon.use, a
	// connection of config/database.php; "default" in the stock config). Default:
	// Connection.Client. On the queue's own client the records share the queue's round
	// trips; on another they cost one more.
	Client redis.UniversalClient
	// Prefix is horizon.prefix. It replaces the connection prefix for Horizon's keys.
	// Default DefaultHorizonPrefix.
	Prefix string
	// Trim is horizon.trim. Zero fields take Horizon's defaults.
	Trim HorizonTrim
	// Silenced is horizon.silenced: job classes whose completed runs are listed as
	// silenced instead of completed. Applies to what Go dispatches (Horizon decides at
	// push time). Default none.
	Silenced []string
}

// HorizonTrim is horizon.trim: how many minutes Horizon keeps each kind of record. A
// zero field takes Horizon's default.
type HorizonTrim struct {
	Recent       int // recent_jobs; default 60
	Pending      int // a pending job's hash; default 60
	Completed    int // completed and silenced jobs; default 60
	RecentFailed int // recent_failed_jobs; default Failed
	Failed       int // failed jobs; default 10080 (a week)
	Monitored    int // jobs of monitored tags; default 10080
}

func (t HorizonTrim) rdb() rdb.HorizonTrim {
	return rdb.HorizonTrim{Recent: t.Recent, Pending: t.Pending, Completed: t.Completed,
		RecentFailed: t.RecentFailed, Failed: t.Failed, Monitored: t.Monitored}
}

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
	DefaultHorizonSupervisorName = horizon.DefaultHorizonSupervisorName
	// DefaultHorizonEnvironment is the master's environment: one that
	// horizon.environments does not plan, so the dashboard lists no planned supervisors
	// of it as "inactive" beside the real one.
	DefaultHorizonEnvironment = horizon.DefaultHorizonEnvironment
	// DefaultHorizonInterval is how often the records are written. Horizon's masters
	// write theirs every second; readers drop a master not written for 14 seconds.
	DefaultHorizonInterval = horizon.DefaultHorizonInterval
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

// HorizonMasterName is a master supervisor name as `php artisan horizon` makes one on a
// machine named hostname: Str::slug(hostname), "-", four random letters or digits.
func HorizonMasterName(hostname string) string { return horizon.MasterName(hostname) }

// horizon builds the Horizon bookkeeping of a worker or dispatcher on the connection
// (see HorizonOptions); nil when Connection.Horizon is nil.
func (c *Connection) horizon(now func() time.Time, log *slog.Logger) (*horizon.Recorder, error) {
	o := c.Horizon
	if o == nil {
		return nil, nil
	}
	return horizon.New(horizon.Options{Client: o.Client, QueueClient: c.Client, Prefix: o.Prefix, Trim: o.Trim.rdb(),
		Silenced: o.Silenced, Connection: c.name(), Now: now, Log: log})
}
