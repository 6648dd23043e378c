package chaos

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"time"
)

// scenarios, in the order of README.md. Each dispatches its jobs, runs a fleet, injects
// its faults, waits for the queue to settle and accounts (Env.Finish), which fails the
// test on lost jobs, disallowed second runs, jobs failed without having run, false
// warnings, jobs only in a log and checks over their limits.
var scenarios = []scenario{
	{name: "kill9", short: true, opts: retryAfter(3, 10), run: kill9},
	{name: "sigterm", short: true, opts: retryAfter(10, 10), run: sigterm},
	{name: "redis-restart", short: true, opts: retryAfter(8, 30), run: redisRestart},
	{name: "stall-short", short: true, opts: retryAfter(5, 10), run: stallShort},
	// --timeout 1: an answer held up by a sync on a busy disk would time out.
	{name: "hung", short: true, opts: fastJournal(retryAfter(3, 5)), run: hung},
	{name: "hostile", short: true, opts: retryAfter(3, 10), run: hostile},
	{name: "mixed-fleet", short: true, opts: retryAfter(3, 10), run: mixedFleet},
	{name: "db-blip", short: true, opts: withMariaDB(retryAfter(5, 10)), run: dbBlip},
	// The faults the chaos suite first reproduced (internal/chaos/README.md), now fixed.
	// Jobs of 0 ms: with the journal's sync off the disk, pops are a good part of each
	// job's cycle, so a stall often catches one in flight.
	{name: "stall-pop", short: true, opts: fastJournal(retryAfter(20, 20)), run: stallPop},
	{name: "stall-ack", short: true, opts: retryAfter(60, 60), run: stallAck},
	{name: "outage-acks", short: true, opts: retryAfter(20, 90), run: outageAcks},
	{name: "healthz", short: true, opts: retryAfter(90, 90), run: healthz},
	{name: "faileddb-down", short: true, opts: withMariaDB(retryAfter(15, 90)), run: failedDBDown},
	// SQLite on disk: a failed row takes a few fsyncs, which widens the window.
	{name: "kill9-failing", short: true, opts: retryAfter(5, 5), run: kill9Failing},
	// A master, a replica and three Sentinels: the master fails over mid-run.
	{name: "sentinel-failover", short: true, opts: withSentinel(retryAfter(5, 10)), run: sentinelFailover},
	{name: "sentinel-master-kill", short: true, opts: withSentinel(retryAfter(5, 10)), run: sentinelMasterKill},
	// The same with acknowledgements that wait for the replica (--ack-replicas 1).
	{name: "sentinel-failover-acked", short: true, opts: withSentinel(retryAfter(5, 10)), run: sentinelFailoverAcked},
	{name: "sentinel-master-kill-acked", short: true, opts: withSentinel(retryAfter(5, 10)), run: sentinelMasterKillAcked},
}

func retryAfter(short, long int) func(bool) Options {
	return func(l bool) Options { return Options{RetryAfter: pick(l, short, long)} }
}

func fastJournal(f func(bool) Options) func(bool) Options {
	return func(l bool) Options {
		o := f(l)
		o.FastJournal = true
		return o
	}
}

func withMariaDB(f func(bool) Options) func(bool) Options {
	return func(l bool) Options {
		o := f(l)
		o.MariaDB = true
		return o
	}
}

// quick are jobs that succeed after 0 to maxMS milliseconds.
func quick(maxMS int) func(int) []string {
	return func(i int) []string {
		if ms := rand.IntN(maxMS + 1); ms > 0 {
			return []string{Sleep(time.Duration(ms) * time.Millisecond)}
		}
		return []string{ActOK}
	}
}

// settle waits for the queue to be empty, long enough for reservations of killed workers
// to expire and run again.
func settle(e *Env, extra time.Duration) {
	if !e.WaitSettled(time.Duration(3*e.RetryAfter)*time.Second + extra) {
		e.T.Logf("%s: the queue did not settle; accounting what is left", e.Name)
	}
}

// kill9: Go workers killed with -9 under load and replaced, again and again.
func kill9(e *Env, long bool) {
	n := pick(long, 1500, 20000)
	jobs := e.ChaosJobs("job", n, ViaPHP, quick(pick(long, 20, 40)))
	jobs = append(jobs, e.ChaosJobs("cli", pick(long, 5, 20), ViaLaraq, quick(5))...)
	e.Dispatch(jobs)
	for range 2 {
		e.StartGo("--concurrency", fmt.Sprint(pick(long, 4, 8)), "--tries", "5", "--sleep", "0.2")
	}
	e.WaitRuns(int64(n/10), time.Minute)
	e.KillCycles(pick(long, 4, 20), pick(long, 600*time.Millisecond, time.Second))
	settle(e, 20*time.Second)
	e.Finish(time.Minute)
	// The allowance for second runs reads the acknowledgements from the workers' logs.
	if e.LogCount(MsgProcessed) == 0 {
		e.T.Errorf("no %q line in the workers' JSON logs: the accounting cannot see acknowledgements", MsgProcessed)
	}
}

// sigterm: Go workers drained with SIGTERM and replaced while some jobs outlive the
// shutdown grace (they are interrupted and released) and others finish within it.
func sigterm(e *Env, long bool) {
	n := pick(long, 400, 4000)
	jobs := e.ChaosJobs("job", n, ViaPHP, func(i int) []string {
		if i%25 == 0 {
			return []string{Sleep(3 * time.Second)} // outlives --shutdown-grace 1
		}
		return []string{Sleep(50 * time.Millisecond)}
	})
	e.Dispatch(jobs)
	for range 2 {
		e.StartGo("--concurrency", fmt.Sprint(pick(long, 4, 8)), "--tries", "0", "--shutdown-grace", "1", "--sleep", "0.2")
	}
	e.WaitRuns(int64(n/20), time.Minute)
	for range pick(long, 3, 15) {
		time.Sleep(1500 * time.Millisecond)
		e.TermAndReplace(time.Second, true)
	}
	settle(e, pick(long, 30*time.Second, 90*time.Second))
	e.Finish(time.Minute)
}

// redisRestart: redis-server shut down (SHUTDOWN) and killed with -9 under load, then
// started again on the same port and append-only file.
func redisRestart(e *Env, long bool) {
	n := pick(long, 3000, 20000)
	e.Dispatch(e.ChaosJobs("job", n, ViaPHP, quick(pick(long, 30, 40))))
	for range 2 {
		e.StartGo("--concurrency", fmt.Sprint(pick(long, 3, 8)), "--tries", "5", "--sleep", "0.2")
	}
	e.WaitRuns(int64(n/10), time.Minute)
	// The outages are a few seconds apart: acknowledgements retried with a backoff
	// that has grown through one outage can otherwise land after retry_after (seen once
	// in 20,000 jobs with two 3 s outages 1 s apart and retry_after 10 s).
	down := pick(long, 1500*time.Millisecond, 3*time.Second)
	for range pick(long, 1, 3) {
		e.RedisOutage(Shutdown, down)
		time.Sleep(4 * time.Second)
		e.RedisOutage(Kill9, down)
		time.Sleep(4 * time.Second)
	}
	settle(e, 30*time.Second)
	e.Finish(time.Minute)
}

// stallShort: redis-server frozen (SIGSTOP) for less than the client's read timeout,
// with --tries 1, so that any attempt spent without a run would fail its job.
func stallShort(e *Env, long bool) {
	n := pick(long, 2000, 20000)
	e.Dispatch(e.ChaosJobs("job", n, ViaPHP, quick(10)))
	for range 2 {
		e.StartGo("--concurrency", "3", "--tries", "1", "--sleep", "0.2")
	}
	e.WaitRuns(int64(n/10), time.Minute)
	for range pick(long, 3, 6) {
		e.StallRedis(time.Second) // go-redis' read timeout is 3 s
		time.Sleep(500 * time.Millisecond)
	}
	settle(e, 30*time.Second)
	e.Finish(time.Minute)
}

// hung: handlers that never answer, ended by --timeout: once and then fine (retried
// after retry_after), or always (failed after --tries 2).
func hung(e *Env, long bool) {
	n := pick(long, 200, 2000)
	always := 0
	jobs := e.ChaosJobs("job", n, ViaPHP, func(i int) []string {
		switch {
		case i%25 == 1:
			always++
			return []string{ActHang}
		case i%10 == 0:
			return []string{ActHang, ActOK}
		}
		return quick(10)(i)
	})
	e.Dispatch(jobs)
	for range 2 {
		e.StartGo("--concurrency", fmt.Sprint(pick(long, 4, 16)), "--tries", "2", "--timeout", "1", "--sleep", "0.2")
	}
	settle(e, 30*time.Second)
	res := e.Finish(time.Minute)
	if res.FailedRows != always {
		e.T.Errorf("%d failed rows, want one per always-hanging job: %d", res.FailedRows, always)
	}
}

// hostile: hostile payloads pushed raw between Laravel's jobs; none may be lost, and
// each must end where laraq documents it.
func hostile(e *Env, long bool) {
	n := pick(long, 300, 20000)
	good := e.ChaosJobs("job", n, ViaPHP, quick(5))
	bad := e.HostileJobs(pick(long, 44, 2200))
	e.Dispatch(good[:n/2])
	e.Dispatch(bad)
	e.Dispatch(good[n/2:])
	for range 2 {
		e.StartGo("--concurrency", "4", "--tries", "3", "--sleep", "0.2")
	}
	if long {
		e.WaitRuns(int64(n/10), time.Minute)
		e.KillCycles(3, 2*time.Second)
	}
	settle(e, 30*time.Second)
	e.Finish(time.Minute)
	e.CheckHostile()
}

// mixedFleet: Laravel 8.83's own worker (work.php) beside Go workers on one queue, with
// failing attempts retried by whichever worker pops them next.
func mixedFleet(e *Env, long bool) {
	n := pick(long, 400, 5000)
	alwaysFail := 0
	actions := func(i int) []string {
		switch i % 10 {
		case 6, 7:
			return []string{ActFail, Sleep(5 * time.Millisecond)}
		case 8:
			return []string{ActFail, ActFail, ActOK}
		case 9:
			alwaysFail++
			return []string{ActFail}
		}
		return quick(20)(i)
	}
	jobs := e.ChaosJobs("job", n, ViaPHP, actions)
	jobs = append(jobs, e.ChaosJobs("cli", 10, ViaLaraq, actions)...)
	e.Dispatch(jobs)
	for range pick(long, 1, 2) {
		e.StartPHP("--tries=3", "--backoff=0", "--sleep=0.1", "--timeout=60")
	}
	e.WaitPHPRuns(time.Minute)
	for range pick(long, 1, 2) {
		e.StartGo("--concurrency", "2", "--tries", "3", "--sleep", "0.2")
	}
	if long {
		e.KillCycles(5, 2*time.Second)
	}
	settle(e, 60*time.Second)
	res := e.Finish(time.Minute)
	switch {
	case !long && res.FailedRows != alwaysFail:
		e.T.Errorf("%d failed rows, want one per always-failing job: %d", res.FailedRows, alwaysFail)
	case long && res.FailedRows < alwaysFail:
		e.T.Errorf("%d failed rows, want at least one per always-failing job: %d", res.FailedRows, alwaysFail)
	}
	e.CheckRanOn("go.", "php.")
}

// dbBlip: the failed-job database (MariaDB) stopped for a few seconds while jobs fail:
// the rows are written once it is back, within the worker's retry budget.
func dbBlip(e *Env, long bool) {
	fails := 0
	actions := func(i int) []string {
		if i%2 == 0 {
			fails++
			return []string{ActFail}
		}
		return []string{Sleep(20 * time.Millisecond)}
	}
	e.Dispatch(e.ChaosJobs("before", 100, ViaPHP, actions))
	for range 2 {
		e.StartGo("--concurrency", "2", "--tries", "1", "--sleep", "0.2")
	}
	e.DatabaseOutage(3*time.Second, func() {
		e.Dispatch(e.ChaosJobs("during", 100, ViaPHP, actions))
	})
	settle(e, 30*time.Second)
	res := e.Finish(time.Minute)
	if res.FailedRows != fails {
		e.T.Errorf("%d failed rows, want one per failing job: %d", res.FailedRows, fails)
	}
	if e.LogCount(msgFailedRowRetry) == 0 {
		e.T.Errorf("no failed row was written while the database was down: the scenario did not test the outage")
	}
}

// msgFailedRowRetry is the worker's warning when a failed row could not be written yet.
const msgFailedRowRetry = "writing a failed job failed; retrying"

// The scenarios below reproduce the faults first found by this suite; each failed before
// its fix (numbers in README.md).

// stallPop (fault 1): redis-server frozen for 10 s while pops are in flight. A pop the
// client gave up on runs when Redis resumes (go-redis also sends it again on a new
// connection); nobody receives its job, which comes back after retry_after with an
// attempt spent: with --tries 1 it is failed without having run.
func stallPop(e *Env, long bool) {
	n := pick(long, 4000, 40000)
	e.Dispatch(e.ChaosJobs("job", n, ViaPHP, func(int) []string { return []string{ActOK} }))
	// Several loops make it likely that a pop is in flight when the stall begins.
	for range 4 {
		e.StartGo("--concurrency", "2", "--tries", "1", "--sleep", "0.2")
	}
	e.WaitRuns(int64(n/8), time.Minute)
	for range 3 {
		e.StallRedis(pick(long, 4*time.Second, 10*time.Second))
		time.Sleep(3 * time.Second)
	}
	settle(e, 30*time.Second)
	e.Finish(time.Minute)
}

// stallAck (fault 4): redis-server frozen for 10 s while acknowledgements are in flight.
// A ZREM the client timed out on runs when Redis resumes; the retried ZREM then finds
// nothing and the worker warns that the job "ran longer than retry_after" although it
// ran for 200 ms.
func stallAck(e *Env, long bool) {
	n := pick(long, 600, 3000)
	e.Dispatch(e.ChaosJobs("job", n, ViaPHP, func(int) []string { return []string{Sleep(200 * time.Millisecond)} }))
	e.StartGo("--concurrency", "32", "--tries", "3", "--sleep", "0.2")
	e.WaitRuns(100, time.Minute)
	for range 3 {
		e.StallRedis(pick(long, 4*time.Second, 10*time.Second))
		time.Sleep(3 * time.Second)
	}
	settle(e, 30*time.Second)
	e.Finish(time.Minute)
}

// outageAcks (fault 2): redis-server down for 40 s while jobs finish. Their deletions
// are given up after 30 s although the reservations hold for retry_after (90 s): the
// jobs run again when the reservations expire.
func outageAcks(e *Env, long bool) {
	n := pick(long, 100, 400)
	e.Dispatch(e.ChaosJobs("job", n, ViaPHP, func(int) []string { return []string{Sleep(2 * time.Second)} }))
	e.StartGo("--concurrency", "16", "--tries", "3", "--sleep", "0.2")
	e.WaitRuns(20, time.Minute)
	e.RedisOutage(Shutdown, pick(long, 12*time.Second, 40*time.Second))
	settle(e, 30*time.Second)
	e.Finish(2 * time.Minute)
}

// healthz (fault 3): /healthz of `laraq work --metrics-addr` must turn 503 within about a
// second of Redis not answering (stalled or down) and 200 within about a second of its
// return.
func healthz(e *Env, long bool) {
	port, err := freePort()
	if err != nil {
		e.T.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	e.Dispatch(e.ChaosJobs("job", pick(long, 1000, 3000), ViaPHP, quick(20)))
	e.StartGo("--concurrency", "2", "--tries", "3", "--sleep", "0.2", "--metrics-addr", addr)
	probe := StartHealthProbe("http://" + addr + "/healthz")
	defer probe.Stop()
	const limit = 1500 * time.Millisecond
	measure := func(what string, from, to time.Time) {
		d, ok := probe.Latency(from, to, false)
		e.AddCheck(Check{Name: "healthz 503 after " + what, Value: d, Limit: limit, Never: !ok})
		time.Sleep(pick(long, 4*time.Second, 8*time.Second))
		d, ok = probe.Latency(to, time.Now(), true)
		e.AddCheck(Check{Name: "healthz 200 after " + what, Value: d, Limit: limit, Never: !ok})
	}
	time.Sleep(3 * time.Second)
	from, to := e.StallRedis(pick(long, 5*time.Second, 10*time.Second))
	measure("long stall", from, to)
	from, to = e.StallRedis(3 * time.Second)
	measure("3s stall", from, to)
	from, to = e.RedisOutage(Shutdown, 5*time.Second)
	measure("5s shutdown", from, to)
	settle(e, 30*time.Second)
	e.Finish(time.Minute)
}

// failedDBDown (fault 7): the failed-job database down for 40 s while jobs fail. The
// reserved copy is deleted first, the row retried for 30 s in memory, then the job is
// only in the worker's log; a SIGTERM meanwhile keeps the worker past --shutdown-grace.
func failedDBDown(e *Env, long bool) {
	fails := 0
	actions := func(i int) []string {
		if i%2 == 0 {
			fails++
			return []string{ActFail}
		}
		return []string{Sleep(20 * time.Millisecond)}
	}
	e.Dispatch(e.ChaosJobs("before", 200, ViaPHP, actions))
	for range 2 {
		e.StartGo("--concurrency", "2", "--tries", "1", "--sleep", "0.2", "--shutdown-grace", "5")
	}
	var term sync.WaitGroup
	e.DatabaseOutage(pick(long, 12*time.Second, 40*time.Second), func() {
		e.Dispatch(e.ChaosJobs("during", 400, ViaPHP, actions))
		time.Sleep(5 * time.Second)
		// A replacement could not open the store now. The drain may outlast the outage.
		term.Go(func() { e.TermAndReplace(5*time.Second, false) })
	})
	term.Wait()
	settle(e, 30*time.Second)
	res := e.Finish(time.Minute)
	if res.FailedRows != fails {
		e.T.Errorf("%d failed rows, want one per failing job: %d", res.FailedRows, fails)
	}
}

// kill9Failing (fault 7, under kill -9): failing jobs while Go workers are killed. A job
// is failed by deleting its reserved copy and then writing its failed row; a kill
// between the two loses it.
func kill9Failing(e *Env, long bool) {
	n := pick(long, 1000, 3000)
	e.Dispatch(e.ChaosJobs("job", n, ViaPHP, func(int) []string { return []string{ActFail} }))
	for range 2 {
		// Two tries: a kill between a pop and its run spends an attempt, and the job
		// must still run before it is failed.
		e.StartGo("--concurrency", "4", "--tries", "2", "--sleep", "0.2")
	}
	e.WaitRuns(int64(n/20), time.Minute)
	e.KillCycles(pick(long, 5, 20), 500*time.Millisecond)
	settle(e, 90*time.Second)
	res := e.Finish(time.Minute)
	if res.FailedRows != n {
		e.T.Errorf("%d failed rows, want one per job: %d", res.FailedRows, n)
	}
}
