package bench

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Usage is a snapshot of the counters a measurement subtracts: the CPU time of this
// process and of the Redis server, the server's script time and command counts, and the
// Go heap's allocations.
type Usage struct {
	GoCPU    time.Duration // user + sys time of this process
	RedisCPU time.Duration // used_cpu_user + used_cpu_sys of the server
	// ScriptTime is the time the server spent in EVAL and EVALSHA (commandstats usec:
	// the scripts' own commands included, the network not).
	ScriptTime  time.Duration
	ScriptCalls int64 // EVAL + EVALSHA calls
	Commands    int64 // every command but INFO, scripts' own commands included
	Mallocs     uint64
	Bytes       uint64 // bytes allocated on the Go heap
}

// Take reads the counters now. On a Redis Cluster the server's counters are the sums over
// its masters. The INFO calls it sends are left out of Commands.
func Take(ctx context.Context, client redis.UniversalClient) (Usage, error) {
	var u Usage
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	u.Mallocs, u.Bytes = ms.Mallocs, ms.TotalAlloc
	u.GoCPU = processCPU()
	infos, err := serverInfos(ctx, client)
	if err != nil {
		return u, fmt.Errorf("bench: INFO: %w", err)
	}
	for _, info := range infos {
		if err := u.addServer(info); err != nil {
			return u, err
		}
	}
	return u, nil
}

// serverInfos is INFO cpu and commandstats of the server, or of every master of a
// cluster.
func serverInfos(ctx context.Context, client redis.UniversalClient) ([]string, error) {
	cluster, ok := client.(*redis.ClusterClient)
	if !ok {
		info, err := client.Info(ctx, "cpu", "commandstats").Result()
		return []string{info}, err
	}
	var mu sync.Mutex
	var infos []string
	err := cluster.ForEachMaster(ctx, func(ctx context.Context, master *redis.Client) error {
		info, err := master.Info(ctx, "cpu", "commandstats").Result()
		mu.Lock()
		infos = append(infos, info)
		mu.Unlock()
		return err
	})
	return infos, err
}

// addServer adds one server's INFO cpu and commandstats to u.
func (u *Usage) addServer(info string) error {
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		name, val, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":")
		if !ok {
			continue
		}
		switch {
		case name == "used_cpu_user" || name == "used_cpu_sys":
			secs, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return fmt.Errorf("bench: INFO cpu %s=%q: %w", name, val, err)
			}
			u.RedisCPU += time.Duration(secs * float64(time.Second))
		case strings.HasPrefix(name, "cmdstat_") && name != "cmdstat_info":
			// cmdstat_evalsha:calls=12,usec=345,usec_per_call=28.75,...
			calls, usec := statField(val, "calls"), statField(val, "usec")
			u.Commands += calls
			if name == "cmdstat_eval" || name == "cmdstat_evalsha" {
				u.ScriptCalls += calls
				u.ScriptTime += time.Duration(usec) * time.Microsecond
			}
		}
	}
	return nil
}

// statField returns the integer field name of a commandstats value, 0 when missing.
func statField(val, name string) int64 {
	for _, f := range strings.Split(val, ",") {
		if v, ok := strings.CutPrefix(f, name+"="); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// Sub is u minus an earlier snapshot.
func (u Usage) Sub(before Usage) Usage {
	return Usage{
		GoCPU: u.GoCPU - before.GoCPU, RedisCPU: u.RedisCPU - before.RedisCPU,
		ScriptTime: u.ScriptTime - before.ScriptTime, ScriptCalls: u.ScriptCalls - before.ScriptCalls,
		Commands: u.Commands - before.Commands, Mallocs: u.Mallocs - before.Mallocs, Bytes: u.Bytes - before.Bytes,
	}
}

// PerJob is a Usage divided by the jobs it served.
type PerJob struct {
	GoCPU, RedisCPU, ScriptTime time.Duration
	ScriptCalls, Commands       float64
	Allocs, Bytes               float64
}

// PerJob divides u by jobs (> 0).
func (u Usage) PerJob(jobs int64) PerJob {
	n := float64(jobs)
	per := func(d time.Duration) time.Duration { return time.Duration(float64(d) / n) }
	return PerJob{
		GoCPU: per(u.GoCPU), RedisCPU: per(u.RedisCPU), ScriptTime: per(u.ScriptTime),
		ScriptCalls: float64(u.ScriptCalls) / n, Commands: float64(u.Commands) / n, Allocs: float64(u.Mallocs) / n,
		Bytes: float64(u.Bytes) / n,
	}
}

// PeakRSS is the process' peak resident set size (VmHWM) in bytes, -1 where
// /proc/self/status cannot tell.
func PeakRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return -1
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				return -1
			}
			return kb * 1024
		}
	}
	return -1
}
