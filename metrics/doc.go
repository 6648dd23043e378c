// Package metrics exports a laraq worker's Prometheus metrics and health, from a private
// registry (no global state), over HTTP (`--metrics-addr :9090`: /metrics and /healthz).
//
// The worker feeds it its events (laraq.WorkerConfig{OnEvent: m.OnEvent}), one per thing
// it did; each names its Kind (the worker's event names: processing, processed, failed,
// released, exception, timed_out, migrated, handed_back, invalid, unknown_properties,
// queue_skipped, queue_resumed) plus a Loop heartbeat per worker-loop iteration (and
// every few seconds while the loop waits). From them come:
//
//	laraq_jobs_processed_total{queue,class}      handler returned without error
//	laraq_jobs_failed_total{queue,class}         failed and written to the failed store
//	laraq_jobs_released_total{queue,class}       released for another attempt
//	laraq_job_exceptions_total{queue,class}      attempts whose handler errored or panicked
//	laraq_jobs_timed_out_total{queue,class}      attempts past their timeout
//	laraq_jobs_handed_back_total{queue,class}    jobs without a Go handler given back
//	laraq_jobs_invalid_total{queue}              payloads moved to queues:NAME:invalid
//	laraq_command_unknown_properties_total{queue,class}  properties of decoded commands
//	                                             no field of the Go type takes
//	laraq_jobs_migrated_total{queue,from}        from="reserved": reservations that expired
//	                                             (retry_after) and went back to ready;
//	                                             from="delayed": due delayed jobs
//	laraq_job_duration_seconds{queue,class,outcome}  handler run time per attempt
//	laraq_jobs_running{queue}                    handlers running now
//	laraq_queue_skipped{queue}                   1 while the queue is skipped because a key
//	                                             of it holds the wrong type, 0 once resumed
//	laraq_worker_last_loop_timestamp_seconds, laraq_redis_last_ok_timestamp_seconds
//
// class is the job's name as Laravel reports it (displayName). With a QueueSizer
// (*laraq.Admin), each scrape also reads the queues' depths from Redis under the request's
// context and Config.ScrapeTimeout:
//
//	laraq_queue_jobs{queue,state="ready|delayed|reserved"}
//	laraq_queue_depth_up                         0 when that read failed
//
// laraq_jobs_running follows attempts (Event.Attempt), not event kinds: each Processing
// is matched by exactly one decrement, at the first event that ends its attempt, however
// it ends, and an event of an attempt never marked Processing changes nothing.
//
// /healthz answers 200 with a short JSON body when the worker loop's last heartbeat is
// within Config.HealthMaxAge and Redis answers: the last heartbeat carried no error and
// one without error came within Config.HealthMaxAge. Otherwise it answers 503 with the
// reason ("redis unreachable: dial tcp …: connection refused" as soon as a heartbeat
// reports the error, until one reports none), for container liveness and readiness
// probes. With Config.Pinger each request also pings Redis (one ping at a time, shared
// by concurrent requests): a Redis that stalls turns /healthz 503 within
// Config.HealthProbeTimeout, and it answers 200 as soon as Redis answers again.
//
// A Redis that answers but refuses every pop, being at maxmemory under the noeviction
// policy ("OOM command not allowed…"), keeps /healthz at 503 with
// "redis_refuses_pops": true and the reason "cannot take jobs: redis is out of memory…"
// although it answers the ping: the worker takes no job until memory is freed and a
// pop succeeds. So does a replica refusing the pops with READONLY while the worker waits
// out a failover (WorkerConfig.ReadOnlyGrace).
//
// A queue the worker skips because a key of it holds the wrong type is named, with why,
// under "skipped_queues". A worker that skips some of its queues stays healthy (200): it
// works the others, and a restart would not repair the key; laraq_queue_skipped is the
// alarm. One that skips every queue answers 503, "cannot take jobs: every queue is
// skipped …".
package metrics
