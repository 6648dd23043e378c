package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"syscall"
	"time"
)

// The fault injectors act on the scenario's real processes and count what they did
// (Env.Fault), which the table shows.

// KillAndReplace kills a running Go worker with -9 (picked at random) and starts a new
// one with the same flags.
func (e *Env) KillAndReplace() {
	e.T.Helper()
	var gos []*Worker
	for _, w := range e.Fleet.Running() {
		if !w.PHP {
			gos = append(gos, w)
		}
	}
	if len(gos) == 0 {
		e.T.Fatal("chaos: no Go worker running to kill")
	}
	w := gos[rand.IntN(len(gos))]
	w.Kill9()
	e.Fault("kill -9")
	e.StartGo(w.Args...)
}

// KillCycles kills and replaces a Go worker n times, every interval.
func (e *Env) KillCycles(n int, interval time.Duration) {
	for range n {
		time.Sleep(interval)
		e.KillAndReplace()
	}
}

// TermAndReplace sends SIGTERM to a running Go worker, waits for it to drain and exit
// (recording the stop time against its --shutdown-grace plus two seconds), and, when
// replace is set, starts a new one alike.
func (e *Env) TermAndReplace(grace time.Duration, replace bool) {
	e.T.Helper()
	for _, w := range e.Fleet.Running() {
		if w.PHP {
			continue
		}
		_ = w.Signal(syscall.SIGTERM)
		e.Fault("SIGTERM drain")
		if _, err := w.Wait(grace + 60*time.Second); err != nil {
			e.T.Error(err)
			w.Kill9()
		}
		e.Check("SIGTERM drain", w.StopTime(), grace+2*time.Second)
		if replace {
			e.StartGo(w.Args...)
		}
		return
	}
	e.T.Fatal("chaos: no Go worker running to stop")
}

// StallRedis freezes redis-server for d (SIGSTOP, then SIGCONT) and returns when the
// stall began and ended.
func (e *Env) StallRedis(d time.Duration) (from, to time.Time) {
	e.T.Helper()
	if err := e.Redis.Stall(); err != nil {
		e.T.Fatal(err)
	}
	from = time.Now()
	e.Fault(fmt.Sprintf("redis SIGSTOP %s", d))
	time.Sleep(d)
	if err := e.Redis.Resume(); err != nil {
		e.T.Fatal(err)
	}
	return from, time.Now()
}

// Redis outages: how the server goes away.
const (
	Shutdown = "SHUTDOWN" // the SHUTDOWN command: AOF synced, clients refused
	Kill9    = "kill -9"  // SIGKILL: whatever was acknowledged is in the AOF
)

// RedisOutage takes redis-server down (how: Shutdown or Kill9) for d, then starts it
// again on the same port and directory; it returns when the outage began and ended.
func (e *Env) RedisOutage(how string, d time.Duration) (from, to time.Time) {
	e.T.Helper()
	from = time.Now()
	switch how {
	case Shutdown:
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		err := e.Redis.Shutdown(ctx)
		cancel()
		if err != nil {
			e.T.Fatal(err)
		}
	case Kill9:
		e.Redis.Kill()
	default:
		e.T.Fatalf("chaos: unknown outage %q", how)
	}
	e.Fault(fmt.Sprintf("redis %s down %s", how, d))
	time.Sleep(d)
	if err := e.Redis.Start(); err != nil {
		e.T.Fatal(err)
	}
	return from, time.Now()
}

// DatabaseOutage stops the scenario's MariaDB for d, running during (if not nil) while
// it is down, then starts it again.
func (e *Env) DatabaseOutage(d time.Duration, during func()) {
	e.T.Helper()
	if e.MariaDB == nil {
		e.T.Fatal("chaos: the scenario has no MariaDB (Options.MariaDB)")
	}
	if err := e.MariaDB.Stop(); err != nil {
		e.T.Fatal(err)
	}
	e.Fault(fmt.Sprintf("mariadb down %s", d))
	end := time.Now().Add(d)
	if during != nil {
		during()
	}
	time.Sleep(time.Until(end))
	if err := e.MariaDB.Start(); err != nil {
		e.T.Fatal(err)
	}
}
