// Package faults proves, against real redis-servers, what `laraq work` does when Redis
// refuses it for a reason no retry heals, each as an operator would meet it: a worker
// pointed at a replica (READONLY) or whose master turns replica for a while, a Redis
// Cluster with a Laravel 13.4 queue name that has no hash tag (CROSSSLOT), an ACL user
// denied EVALSHA (NOPERM), a server without EVALSHA, and a queue one of whose four keys
// someone overwrote with a string (WRONGTYPE).
//
// The package holds tests only. Each starts its own servers (internal/testenv), runs
// the command in the test process (cli.Main, the same code the binary's exit status
// comes from) with a JSON log and a metrics listener, and checks the exit status or the
// skipped queue, the one line the command ends with, the /healthz answer and the
// metrics, and the jobs' state in Redis: none lost, changed, or left reserved unrun.
//
//	go test ./internal/faults
package faults
