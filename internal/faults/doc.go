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
// The library's worker meets the passing faults here too (faults_test.go, package
// faults_test, on the testkit helpers): a Redis stall while pops and acknowledgements
// are in flight loses no job, no attempt and no acknowledgement; a failed row that cannot
// be written keeps its job reserved, also across a stop; refused credentials stop the
// worker; and a job that outlived its reservation is reported. The stall tests pause a
// redis-server of their own (testenv.PrivateRedis); the others use the binary's shared one.
//
//	CI=true go test -count=1 ./internal/faults
package faults
