package rdb

// Laravel Horizon's key names (laravel/horizon 5.x), every one under the Horizon prefix P.
// Horizon clones the Redis connection named by horizon.use and sets its prefix to
// horizon.prefix, so P REPLACES the connection prefix (laravel_database_ never appears
// in a Horizon key); phpredis and predis add P to every key, EVAL KEYS included.
//
//	P + ID                      hash  one job: id connection queue name status payload
//	                                  created_at updated_at reserved_at completed_at
//	                                  failed_at exception context retried_by
//	P + "recent_jobs"           zset  every job pushed, score -T (T = push time, seconds)
//	P + "pending_jobs"          zset  pushed and not finished, score -T
//	P + "completed_jobs"        zset  finished, score -T
//	P + "silenced_jobs"         zset  finished silenced jobs, score -T
//	P + "failed_jobs"           zset  failed, score -T
//	P + "recent_failed_jobs"    zset  failed, score -T (the dashboard's "failed jobs" count)
//	P + "monitored_jobs"        zset  finished jobs with a monitored tag, score -T
//	P + "monitoring"            set   the tags being monitored
//	P + TAG                     zset  jobs pushed with a monitored tag, score +T
//	P + "failed:" + TAG         zset  failed jobs per tag, score +T, EXPIRE trim.failed
//	P + "queue:" + Q            hash  throughput, runtime (ms) since the last snapshot
//	P + "job:" + NAME           hash  the same per job name (displayName)
//	P + "measured_queues"       set   of P+"queue:"+Q (members carry the prefix)
//	P + "measured_jobs"         set   of P+"job:"+NAME
//	P + "masters"               zset  master supervisor names, score = last update (Unix s)
//	P + "master:" + M           hash  name environment pid status supervisors; EXPIRE 15
//	P + "supervisors"           zset  supervisor names, score = last update
//	P + "supervisor:" + S       hash  name master pid status processes options; EXPIRE 30
//	P + "commands:" + QUEUE     list  JSON {"command": class, "options": {...}} for a
//	                                  master (QUEUE "master:"+M) or a supervisor (QUEUE S)
//
// Sorting job lists by -T makes ZRANGE 0 49 the newest fifty, which is how the dashboard
// pages them.

// DefaultHorizonPrefix is the prefix Horizon falls back to when horizon.prefix is empty
// (Horizon::use: config('horizon.prefix') ?: 'horizon:'). The stock config/horizon.php
// sets Str::slug(APP_NAME, '_').'_horizon:' instead, e.g. "laravel_horizon:".
const DefaultHorizonPrefix = "horizon:"

const (
	hzRecentJobs       = "recent_jobs"
	hzPendingJobs      = "pending_jobs"
	hzCompletedJobs    = "completed_jobs"
	hzSilencedJobs     = "silenced_jobs"
	hzFailedJobs       = "failed_jobs"
	hzRecentFailedJobs = "recent_failed_jobs"
	hzMonitoredJobs    = "monitored_jobs"
	hzMonitoring       = "monitoring"
	hzFailedTag        = "failed:"
	hzQueueMetrics     = "queue:"
	hzJobMetrics       = "job:"
	hzMeasuredQueues   = "measured_queues"
	hzMeasuredJobs     = "measured_jobs"
	hzMasters          = "masters"
	hzMaster           = "master:"
	hzSupervisors      = "supervisors"
	hzSupervisor       = "supervisor:"
	hzCommands         = "commands:"
)

// HorizonKeys builds Horizon's key names under one prefix.
type HorizonKeys struct {
	// Prefix is P, the Horizon prefix (not the connection prefix). Empty means
	// DefaultHorizonPrefix, as in Horizon.
	Prefix string
}

func (k HorizonKeys) p() string {
	if k.Prefix == "" {
		return DefaultHorizonPrefix
	}
	return k.Prefix
}

// hzFixedKeys are the keys of HorizonKeys that name no job, queue or tag.
type hzFixedKeys struct {
	recent, pending, completed, silenced, monitored, monitoring, measuredQueues, measuredJobs string
}

func (k HorizonKeys) fixed() hzFixedKeys {
	return hzFixedKeys{recent: k.RecentJobs(), pending: k.PendingJobs(), completed: k.CompletedJobs(),
		silenced: k.SilencedJobs(), monitored: k.MonitoredJobs(), monitoring: k.Monitoring(),
		measuredQueues: k.MeasuredQueues(), measuredJobs: k.MeasuredJobs()}
}

// Job is the hash of the job with this id (payload uuid ?? id).
func (k HorizonKeys) Job(id string) string { return k.p() + id }

// RecentJobs is the zset of every job pushed (the dashboard's "jobs past hour").
func (k HorizonKeys) RecentJobs() string { return k.p() + hzRecentJobs }

// PendingJobs is the zset of pushed jobs that have not finished.
func (k HorizonKeys) PendingJobs() string { return k.p() + hzPendingJobs }

// CompletedJobs is the zset of finished jobs.
func (k HorizonKeys) CompletedJobs() string { return k.p() + hzCompletedJobs }

// SilencedJobs is the zset of finished silenced jobs.
func (k HorizonKeys) SilencedJobs() string { return k.p() + hzSilencedJobs }

// FailedJobs is the zset of failed jobs.
func (k HorizonKeys) FailedJobs() string { return k.p() + hzFailedJobs }

// RecentFailedJobs is the zset behind the dashboard's failed-jobs count.
func (k HorizonKeys) RecentFailedJobs() string { return k.p() + hzRecentFailedJobs }

// MonitoredJobs is the zset of finished jobs carrying a monitored tag.
func (k HorizonKeys) MonitoredJobs() string { return k.p() + hzMonitoredJobs }

// Monitoring is the set of monitored tags.
func (k HorizonKeys) Monitoring() string { return k.p() + hzMonitoring }

// Tag is the zset of jobs pushed with a monitored tag.
func (k HorizonKeys) Tag(tag string) string { return k.p() + tag }

// FailedTag is the zset of failed jobs with this tag.
func (k HorizonKeys) FailedTag(tag string) string { return k.p() + hzFailedTag + tag }

// QueueMetrics is the throughput/runtime hash of a bare queue name.
func (k HorizonKeys) QueueMetrics(queue string) string { return k.p() + hzQueueMetrics + queue }

// JobMetrics is the throughput/runtime hash of a job name (displayName).
func (k HorizonKeys) JobMetrics(name string) string { return k.p() + hzJobMetrics + name }

// MeasuredQueues is the set of QueueMetrics keys (prefixed names) with data.
func (k HorizonKeys) MeasuredQueues() string { return k.p() + hzMeasuredQueues }

// MeasuredJobs is the set of JobMetrics keys (prefixed names) with data.
func (k HorizonKeys) MeasuredJobs() string { return k.p() + hzMeasuredJobs }

// Masters is the zset of master supervisor names by last update.
func (k HorizonKeys) Masters() string { return k.p() + hzMasters }

// Master is the hash of one master supervisor.
func (k HorizonKeys) Master(name string) string { return k.p() + hzMaster + name }

// Supervisors is the zset of supervisor names by last update.
func (k HorizonKeys) Supervisors() string { return k.p() + hzSupervisors }

// Supervisor is the hash of one supervisor.
func (k HorizonKeys) Supervisor(name string) string { return k.p() + hzSupervisor + name }

// MasterCommands is the command list a master supervisor reads
// (MasterSupervisor::commandQueueFor: "master:" + name).
func (k HorizonKeys) MasterCommands(master string) string {
	return k.p() + hzCommands + hzMaster + master
}

// SupervisorCommands is the command list a supervisor reads (its own name).
func (k HorizonKeys) SupervisorCommands(supervisor string) string {
	return k.p() + hzCommands + supervisor
}
