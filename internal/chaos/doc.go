// Package chaos proves with real processes that laraq loses no job and runs none twice
// beyond what the at-least-once contract allows.
//
// The parts are small and reusable:
//
//   - Journal and Record: the durable run records (one JSON line per run start and end,
//     fsync'd before the job goes on). testdata/php/jobs_chaos.php writes the same lines
//     from PHP workers.
//   - Recorder: the HTTP service `laraq work --forward URL` posts jobs to. It journals
//     every run, attributes it to the worker named in the URL path and acts as the job's
//     properties say (ok, fail, sleep:MS, release:S, hang).
//   - Redis, MariaDB: servers owned by a scenario that can be stalled (SIGSTOP), shut
//     down, killed and started again on the same port and data directory.
//   - Fleet: `laraq work` and PHP work.php processes, with kill -9, SIGTERM drains and
//     their logs, and the times of every kill.
//   - Dispatch, Hostile: jobs through Laravel's own Bus dispatcher (dispatch_chaos.php),
//     `laraq dispatch`, and raw pushes of hostile payloads.
//   - Account: the end-of-scenario accounting (lost, run twice with and without the
//     contract's leave, left in Redis, failed rows, failed without having run) and the
//     table of results.
//
// Env ties them together for one scenario. The scenarios themselves are tests:
// TestChaos (the short form, part of go test ./...) and TestChaosLong (`make chaos`).
// README.md in this directory describes every scenario and how to read the table.
package chaos
