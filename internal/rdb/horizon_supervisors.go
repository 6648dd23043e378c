package rdb

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/laraq/laraq/payload"
	"github.com/redis/go-redis/v9"
)

// Horizon's process tree, as its dashboard and artisan commands read it: one master
// supervisor per machine (`php artisan horizon`), named Str::slug(gethostname()) + "-" +
// four random characters, with supervisors named MASTER + ":" + KEY (the keys of
// horizon.environments), each running pools of worker processes per queue. Both kinds
// rewrite their hash every second of their loop, with a short TTL, and their name's score
// in a zset; readers list the names updated in the last 14 (masters) or 29 (supervisors)
// seconds. A laraq worker appears as one master with one supervisor.
//
// horizon:terminate, horizon:pause and horizon:continue do not write Redis: they send
// SIGTERM, SIGUSR2 and SIGCONT to the pid of every listed master whose name starts with
// the slug of the machine's hostname (and terminate also writes illuminate:queue:restart
// to the cache). They reach a laraq worker that registered its own pid under such a name
// on the same machine; those are the signals `laraq work` already obeys as queue:work
// does. horizon:pause-supervisor / continue-supervisor signal a supervisor's pid likewise.

const (
	// HorizonMasterTTL is the EXPIRE Horizon gives a master's hash (seconds).
	HorizonMasterTTL = 15
	// HorizonSupervisorTTL is the EXPIRE Horizon gives a supervisor's hash (seconds).
	HorizonSupervisorTTL = 30
	// HorizonMasterWindow is how old a master's score may be for the dashboard, the
	// artisan commands and ExpireSupervisors to still list it (seconds). Refresh well
	// within it; Horizon refreshes every second.
	HorizonMasterWindow = 14
	// HorizonSupervisorWindow is the same for supervisors (RedisSupervisorRepository::names).
	HorizonSupervisorWindow = 29
)

// HorizonMaster is a master supervisor's record (RedisMasterSupervisorRepository::update).
type HorizonMaster struct {
	// Name must start with the slug of the machine's hostname for horizon:terminate,
	// pause and continue to reach PID (laraq.HorizonMasterName builds one).
	Name string
	// Environment is the master's environment. The dashboard adds the supervisors that
	// horizon.environments plans for it as "inactive" rows; an environment the
	// application does not configure (e.g. "laraq") shows only the real supervisors.
	Environment string
	PID         int
	Paused      bool     // status paused (horizon:pause) instead of running
	Supervisors []string // the names of its supervisors
}

// HorizonPool is one pool of worker processes of a supervisor.
type HorizonPool struct {
	// Queue is what the pool works: one queue, or the supervisor's comma-separated list
	// when it does not balance. The dashboard's processes key is CONNECTION:Queue, which
	// the workload page splits at the first ":" and measures with LLEN queues:QUEUE.
	Queue     string
	Processes int
}

// HorizonSupervisor is a supervisor's record (RedisSupervisorRepository::update).
type HorizonSupervisor struct {
	Name    string // MASTER + ":" + a key; horizon:list prints what follows the first ":"
	PID     int
	Paused  bool
	Pools   []HorizonPool
	Options HorizonSupervisorOptions
}

// HorizonSupervisorOptions is SupervisorOptions::toArray, the options JSON the dashboard
// (queue, balance), horizon:supervisors (balance) and horizon:purge (timeout) read. The
// zero values are SupervisorOptions' defaults where Horizon has one.
type HorizonSupervisorOptions struct {
	Connection          string // queue connection, e.g. "redis"
	Queue               string // comma-separated queues
	Balance             string // "off" (default), "simple", "auto"
	Backoff             int
	Force               bool
	MaxProcesses        int // default 1
	MinProcesses        int // default 1
	MaxTries            int
	MaxTime             int
	MaxJobs             int
	Memory              int // MB, default 128
	Nice                int
	WorkersName         string // default "default"
	Sleep               int    // default 3
	Timeout             int    // seconds, default 60; horizon:purge waits this long for orphans
	BalanceCooldown     int    // default 3
	BalanceMaxShift     int    // default 1
	ParentID            int    // the master's pid
	Rest                int
	AutoScalingStrategy string // default "time"
}

// appendJSON writes the options in SupervisorOptions::toArray's key order with
// json_encode's escaping.
func (o HorizonSupervisorOptions) appendJSON(b []byte, name string) []byte {
	def := func(v, d int) int {
		if v == 0 {
			return d
		}
		return v
	}
	defs := func(v, d string) string {
		if v == "" {
			return d
		}
		return v
	}
	str := func(key, v string) {
		b = append(b, ',', '"')
		b = append(b, key...)
		b = append(b, '"', ':')
		b, _ = payload.AppendJSONString(b, v, 0)
	}
	num := func(key string, v int) {
		b = append(b, ',', '"')
		b = append(b, key...)
		b = append(b, '"', ':')
		b = strconv.AppendInt(b, int64(v), 10)
	}
	b = append(b, `{"balance":`...)
	b, _ = payload.AppendJSONString(b, defs(o.Balance, "off"), 0)
	str("connection", o.Connection)
	str("queue", o.Queue)
	num("backoff", o.Backoff)
	b = append(b, `,"force":`...)
	b = strconv.AppendBool(b, o.Force)
	num("maxProcesses", def(o.MaxProcesses, 1))
	num("minProcesses", def(o.MinProcesses, 1))
	num("maxTries", o.MaxTries)
	num("maxTime", o.MaxTime)
	num("maxJobs", o.MaxJobs)
	num("memory", def(o.Memory, 128))
	num("nice", o.Nice)
	str("name", name)
	str("workersName", defs(o.WorkersName, "default"))
	num("sleep", def(o.Sleep, 3))
	num("timeout", def(o.Timeout, 60))
	num("balanceCooldown", def(o.BalanceCooldown, 3))
	num("balanceMaxShift", def(o.BalanceMaxShift, 1))
	num("parentId", o.ParentID)
	num("rest", o.Rest)
	str("autoScalingStrategy", defs(o.AutoScalingStrategy, "time"))
	return append(b, '}')
}

func hzStatus(paused bool) string {
	if paused {
		return "paused"
	}
	return "running"
}

// UpdateMaster queues a master's heartbeat: HSET P master:NAME name environment pid
// status supervisors (JSON list); ZADD P masters NOW NAME; EXPIRE P master:NAME 15. Call
// it at least every few seconds (see HorizonMasterWindow).
func (h *Horizon) UpdateMaster(ctx context.Context, p redis.Pipeliner, m HorizonMaster) error {
	if m.Name == "" {
		return fmt.Errorf("rdb: horizon master without a name")
	}
	sup := []byte{'['}
	for i, s := range m.Supervisors {
		if i > 0 {
			sup = append(sup, ',')
		}
		sup, _ = payload.AppendJSONString(sup, s, 0)
	}
	sup = append(sup, ']')
	key := h.keys.Master(m.Name)
	p.HSet(ctx, key, "name", m.Name, "environment", m.Environment, "pid", m.PID,
		"status", hzStatus(m.Paused), "supervisors", sup)
	p.ZAdd(ctx, h.keys.Masters(), redis.Z{Score: float64(h.now().Unix()), Member: m.Name})
	p.Expire(ctx, key, time.Duration(HorizonMasterTTL)*time.Second)
	return nil
}

// UpdateSupervisor queues a supervisor's heartbeat: HSET P supervisor:NAME name master
// (NAME up to its last ":") pid status processes (JSON {"CONNECTION:QUEUE": n}, [] when
// there are no pools) options (JSON, see HorizonSupervisorOptions); ZADD P supervisors
// NOW NAME; EXPIRE P supervisor:NAME 30.
func (h *Horizon) UpdateSupervisor(ctx context.Context, p redis.Pipeliner, s HorizonSupervisor) error {
	cut := strings.LastIndexByte(s.Name, ':')
	if cut <= 0 {
		return fmt.Errorf("rdb: horizon supervisor name %q must be MASTER:NAME", s.Name)
	}
	procs := []byte("[]")
	if len(s.Pools) > 0 {
		procs = append(procs[:0], '{')
		for i, pool := range s.Pools {
			if i > 0 {
				procs = append(procs, ',')
			}
			procs, _ = payload.AppendJSONString(procs, s.Options.Connection+":"+pool.Queue, 0)
			procs = append(procs, ':')
			procs = strconv.AppendInt(procs, int64(pool.Processes), 10)
		}
		procs = append(procs, '}')
	}
	key := h.keys.Supervisor(s.Name)
	p.HSet(ctx, key, "name", s.Name, "master", s.Name[:cut], "pid", s.PID, "status", hzStatus(s.Paused),
		"processes", procs, "options", s.Options.appendJSON(nil, s.Name))
	p.ZAdd(ctx, h.keys.Supervisors(), redis.Z{Score: float64(h.now().Unix()), Member: s.Name})
	p.Expire(ctx, key, time.Duration(HorizonSupervisorTTL)*time.Second)
	return nil
}

// ForgetMaster queues the removal of a master and its supervisors, what a stopping
// master does (MasterSupervisor::terminate: RedisMasterSupervisorRepository::forget):
// DEL P supervisor:S for each, ZREM P supervisors S…, DEL P master:NAME, ZREM P masters
// NAME.
func (h *Horizon) ForgetMaster(ctx context.Context, p redis.Pipeliner, name string, supervisors ...string) {
	if len(supervisors) > 0 {
		keys := make([]string, len(supervisors))
		members := make([]any, len(supervisors))
		for i, s := range supervisors {
			keys[i], members[i] = h.keys.Supervisor(s), s
		}
		p.Del(ctx, keys...)
		p.ZRem(ctx, h.keys.Supervisors(), members...)
	}
	p.Del(ctx, h.keys.Master(name))
	p.ZRem(ctx, h.keys.Masters(), name)
}

// HorizonCommand is one entry of a Horizon command list: the PHP class of the command
// (e.g. Laravel\Horizon\SupervisorCommands\Terminate) and its options.
type HorizonCommand struct {
	Command string          `json:"command"`
	Options json.RawMessage `json:"options"`
}

// ParseHorizonCommand reads one command list entry as RedisHorizonCommandQueue::pending
// does (json_decode to an object with command and options).
func ParseHorizonCommand(raw []byte) (HorizonCommand, error) {
	var c HorizonCommand
	if err := json.Unmarshal(raw, &c); err != nil {
		return HorizonCommand{}, fmt.Errorf("rdb: horizon command %.80q: %w", raw, err)
	}
	if c.Command == "" {
		return HorizonCommand{}, fmt.Errorf("rdb: horizon command %.80q: no command class", raw)
	}
	return c, nil
}

// PendingCommands takes every command waiting in a command list, as a master
// (HorizonKeys.MasterCommands) or a supervisor (SupervisorCommands) does once per loop:
// LRANGE 0 -1 and DEL in one MULTI, so a command pushed meanwhile is either taken now or
// left for the next call (Horizon's LLEN/LRANGE/LTRIM pipeline is not atomic). Stock
// Horizon only pushes to the lists of the masters and supervisors it started itself
// (AddSupervisor on deploy, Terminate on restart), so a laraq master normally finds none;
// entries that are not valid commands are returned as errors after the valid ones were
// taken.
func (h *Horizon) PendingCommands(ctx context.Context, c redis.Cmdable, listKey string) ([]HorizonCommand, error) {
	var lr *redis.StringSliceCmd
	_, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		lr = p.LRange(ctx, listKey, 0, -1)
		p.Del(ctx, listKey)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("rdb: horizon commands %s: %w", listKey, err)
	}
	var out []HorizonCommand
	var bad error
	for _, raw := range lr.Val() {
		cmd, err := ParseHorizonCommand([]byte(raw))
		if err != nil {
			if bad == nil {
				bad = err
			}
			continue
		}
		out = append(out, cmd)
	}
	return out, bad
}

// FlushCommands queues DEL of a command list, what masters and supervisors do when they
// start.
func (h *Horizon) FlushCommands(ctx context.Context, p redis.Pipeliner, listKey string) {
	p.Del(ctx, listKey)
}

// TrimRecentJobs queues RedisJobRepository::trimRecentJobs: recent_jobs, pending_jobs,
// completed_jobs, silenced_jobs and recent_failed_jobs lose the entries older than their
// trim minutes (ZREMRANGEBYSCORE key -(now - minutes*60) +inf). The hashes expire on
// their own; the lists only shrink by trimming, which PHP masters do every minute. A
// laraq master should too when no PHP master runs.
func (h *Horizon) TrimRecentJobs(ctx context.Context, p redis.Pipeliner) {
	now := h.now().Unix()
	cut := func(minutes int) string { return strconv.FormatInt(-(now - int64(minutes)*60), 10) }
	p.ZRemRangeByScore(ctx, h.keys.RecentJobs(), cut(h.trim.Recent), "+inf")
	p.ZRemRangeByScore(ctx, h.keys.RecentFailedJobs(), cut(h.trim.RecentFailed), "+inf")
	p.ZRemRangeByScore(ctx, h.keys.PendingJobs(), cut(h.trim.Pending), "+inf")
	p.ZRemRangeByScore(ctx, h.keys.CompletedJobs(), cut(h.trim.Completed), "+inf")
	p.ZRemRangeByScore(ctx, h.keys.SilencedJobs(), cut(h.trim.Completed), "+inf")
}

// TrimFailedJobs queues RedisJobRepository::trimFailedJobs (PHP masters: every
// trim.failed/12 minutes).
func (h *Horizon) TrimFailedJobs(ctx context.Context, p redis.Pipeliner) {
	now := h.now().Unix()
	p.ZRemRangeByScore(ctx, h.keys.FailedJobs(), strconv.FormatInt(-(now-int64(h.trim.Failed)*60), 10), "+inf")
}

// TrimMonitoredJobs queues RedisJobRepository::trimMonitoredJobs (PHP masters: every
// trim.monitored/12 minutes).
func (h *Horizon) TrimMonitoredJobs(ctx context.Context, p redis.Pipeliner) {
	now := h.now().Unix()
	p.ZRemRangeByScore(ctx, h.keys.MonitoredJobs(), strconv.FormatInt(-(now-int64(h.trim.Monitored)*60), 10), "+inf")
}

// FlushExpiredSupervisors queues ExpireSupervisors: masters and supervisors whose score is
// older than 14 seconds leave their zsets (their hashes expire by TTL).
func (h *Horizon) FlushExpiredSupervisors(ctx context.Context, p redis.Pipeliner) {
	cut := strconv.FormatInt(h.now().Unix()-HorizonMasterWindow, 10)
	p.ZRemRangeByScore(ctx, h.keys.Masters(), "-inf", cut)
	p.ZRemRangeByScore(ctx, h.keys.Supervisors(), "-inf", cut)
}
