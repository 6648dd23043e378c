package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"
)

func withSentinel(f func(bool) Options) func(bool) Options {
	return func(l bool) Options {
		o := f(l)
		o.Sentinel = true
		return o
	}
}

// failoverJobs are the jobs of a Sentinel scenario: most succeed after 0 to 10 ms, one in
// ten always fails (two tries, then a failed row: a job the failover brings back must
// not get a second one).
func failoverJobs(i int) []string {
	if i%10 == 3 {
		return []string{ActFail}
	}
	return quick(10)(i)
}

// sentinelFailover: SENTINEL FAILOVER while two workers run jobs and more are pushed.
func sentinelFailover(e *Env, long bool) {
	runFailover(e, long, "sentinel failover", false, func(ctx context.Context) error { return e.Sentinels.Failover(ctx) })
}

// sentinelMasterKill: the master is killed with -9 while two workers run jobs and more
// are pushed; the Sentinels promote the replica after down-after-milliseconds.
func sentinelMasterKill(e *Env, long bool) {
	runFailover(e, long, "master kill -9", false, func(context.Context) error { e.Redis.Kill(); return nil })
}

// sentinelFailoverAcked is sentinelFailover with the workers' acknowledgements waiting
// for the replica (--ack-replicas 1): a job runs again only if it was in flight at the
// switch.
func sentinelFailoverAcked(e *Env, long bool) {
	runFailover(e, long, "sentinel failover", true, func(ctx context.Context) error { return e.Sentinels.Failover(ctx) })
}

// sentinelMasterKillAcked is sentinelMasterKill with --ack-replicas 1.
func sentinelMasterKillAcked(e *Env, long bool) {
	runFailover(e, long, "master kill -9", true, func(context.Context) error { e.Redis.Kill(); return nil })
}

// The Sentinel scenarios' workers: two processes of concurrency 8.
const (
	failoverWorkers     = 2
	failoverConcurrency = 8
)

// runFailover is a Sentinel scenario: jobs dispatched by Laravel and seen on the replica
// (WAIT) before the workers start, more pushed in batches throughout (each batch
// confirmed on a replica or remembered as unconfirmed), then the fault, the queue
// settling and the accounting. Duplicates are tolerated (acknowledgements the old master
// took and never replicated make a job run again: the at-least-once contract under
// asynchronous replication), but only for jobs whose first success ended shortly
// before the switch; lost jobs, second failed rows and jobs left behind fail.
//
// With acked (--ack-replicas 1) a job may run again only when it was in flight at the
// switch: at most as many as the workers run at once.
func runFailover(e *Env, long bool, fault string, acked bool, do func(context.Context) error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	n, late := pick(long, 1500, 10000), pick(long, 300, 2000)
	e.Dispatch(e.ChaosJobs("job", n, ViaPHP, failoverJobs))
	if got, err := e.Client.Do(ctx, "WAIT", 1, 10000).Int(); err != nil || got < 1 {
		e.T.Fatalf("the replica did not acknowledge the dispatched jobs: %d, %v", got, err)
	}
	pushed := e.ChaosJobs("late", late, ViaPHP, failoverJobs)
	payloads, err := e.StagePHP(ctx, pushed)
	if err != nil {
		e.T.Fatal(err)
	}
	args := []string{"--concurrency", strconv.Itoa(failoverConcurrency), "--tries", "2", "--sleep", "0.1"}
	if acked {
		args = append(args, "--ack-replicas", "1")
	}
	for range failoverWorkers {
		e.StartGo(args...)
	}
	var wg sync.WaitGroup
	var unconfirmed int
	wg.Add(1)
	go func() {
		defer wg.Done()
		// Spread over the run, the fault in the middle of it.
		unconfirmed = e.PushConfirmed(ctx, pushed, payloads, 10, pick(long, 40*time.Millisecond, 20*time.Millisecond))
	}()
	e.WaitRuns(int64(n/3), 2*time.Minute)
	before, err := e.Sentinels.MasterAddr(ctx)
	if err != nil {
		e.T.Fatal(err)
	}
	from := time.Now()
	if err := do(ctx); err != nil {
		e.T.Fatalf("%s: %v", fault, err)
	}
	e.Fault(fault)
	after, err := e.Sentinels.WaitMaster(ctx, before)
	if err != nil {
		e.T.Fatal(err)
	}
	to := time.Now()
	e.Check("new master within", to.Sub(from), pick(long, 15*time.Second, 15*time.Second))
	e.T.Logf("%s: master %s -> %s in %s; %d of %d late pushes unconfirmed so far", e.Name, before, after, to.Sub(from).Round(time.Millisecond), unconfirmed, late)
	wg.Wait()
	settle(e, 30*time.Second)
	if acked {
		e.Tolerate(ProblemRunTwice, "jobs in flight at the switch (bounded below)")
	} else {
		e.Tolerate(ProblemRunTwice, "acknowledgements the old master took in the moments before the switch and never replicated (asynchronous replication; --ack-replicas bounds them)")
	}
	res := e.Finish(time.Minute)
	e.T.Logf("%s: %d late pushes unconfirmed, %d of them lost by Redis; %d jobs ran again after a success", e.Name, unconfirmed, res.LostByRedis, res.RunTwice)
	if inFlight := failoverWorkers * failoverConcurrency; acked && res.RunTwice > inFlight {
		e.T.Errorf("%d jobs ran again after a success with --ack-replicas 1; at most the %d in flight at the switch may", res.RunTwice, inFlight)
	}
	// A success whose deletion was lost ended on the old master before the switch; a
	// killed master is declared down a second after its death, so the window starts a
	// little before the fault.
	if odd := DuplicatesOutside(e.inputs, from.Add(-3*time.Second), to.Add(time.Second)); len(odd) > 0 {
		e.T.Errorf("%d jobs ran again after a success the failover does not explain:\n%s", len(odd), strings.Join(odd[:min(8, len(odd))], "\n"))
	}
	if left := res.Left[LeftReady] + res.Left[LeftDelayed] + res.Left[LeftReserved]; left > 0 {
		e.T.Errorf("%s jobs left in Redis (ready/delayed/reserved/invalid) after the queue settled", fmt.Sprint(res.leftText()))
	}
}
