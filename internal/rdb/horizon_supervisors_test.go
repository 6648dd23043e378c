package rdb

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/redis/go-redis/v9"
)

func TestHorizonUpdateMasterAndSupervisor(t *testing.T) {
	ctx := context.Background()
	e := newHzEnv(t, HorizonTrim{})
	e.pipe(t, func(p redis.Pipeliner) error {
		if err := e.h.UpdateMaster(ctx, p, HorizonMaster{Name: "vm-Ab1z", Environment: "laraq", PID: 42,
			Supervisors: []string{"vm-Ab1z:laraq/1"}}); err != nil {
			return err
		}
		return e.h.UpdateSupervisor(ctx, p, HorizonSupervisor{Name: "vm-Ab1z:laraq/1", PID: 42, Paused: true,
			Pools:   []HorizonPool{{Queue: "high", Processes: 2}, {Queue: "default", Processes: 3}},
			Options: HorizonSupervisorOptions{Connection: "redis", Queue: "high,default", Balance: "simple", Timeout: 90, ParentID: 42}})
	})
	got := e.dump(t)
	// EXPIRE counts from the server's clock.
	relativeExpiry(t, got, time.Now().Unix()+HorizonMasterTTL, "master:vm-Ab1z")
	relativeExpiry(t, got, time.Now().Unix()+HorizonSupervisorTTL, "supervisor:vm-Ab1z:laraq/1")
	assertHState(t, "presence", got, hstate{
		"masters":     hzset(0, "vm-Ab1z", float64(e.unix)),
		"supervisors": hzset(0, "vm-Ab1z:laraq/1", float64(e.unix)),
		"master:vm-Ab1z": hhash(time.Now().Unix()+HorizonMasterTTL, "name", "vm-Ab1z", "environment", "laraq", "pid", "42",
			"status", "running", "supervisors", `["vm-Ab1z:laraq\/1"]`),
		"supervisor:vm-Ab1z:laraq/1": hhash(time.Now().Unix()+HorizonSupervisorTTL, "name", "vm-Ab1z:laraq/1", "master", "vm-Ab1z",
			"pid", "42", "status", "paused", "processes", `{"redis:high":2,"redis:default":3}`,
			"options", `{"balance":"simple","connection":"redis","queue":"high,default","backoff":0,"force":false,`+
				`"maxProcesses":1,"minProcesses":1,"maxTries":0,"maxTime":0,"maxJobs":0,"memory":128,"nice":0,`+
				`"name":"vm-Ab1z:laraq\/1","workersName":"default","sleep":3,"timeout":90,"balanceCooldown":3,`+
				`"balanceMaxShift":1,"parentId":42,"rest":0,"autoScalingStrategy":"time"}`),
	})

	e.pipe(t, func(p redis.Pipeliner) error { e.h.ForgetMaster(ctx, p, "vm-Ab1z", "vm-Ab1z:laraq/1"); return nil })
	assertHState(t, "forgotten", e.dump(t), hstate{})

	if err := e.h.UpdateSupervisor(ctx, e.c.Pipeline(), HorizonSupervisor{Name: "nomaster"}); err == nil {
		t.Error("a supervisor name without MASTER: was accepted")
	}
}

func TestHorizonTrimAndFlush(t *testing.T) {
	ctx := context.Background()
	e := newHzEnv(t, HorizonTrim{Recent: 10, Pending: 20, Completed: 30, RecentFailed: 40, Failed: 50, Monitored: 60})
	// Scores are -T: an entry older than the cut has a score above -(now - minutes*60).
	old := func(minutes int) float64 { return -float64(e.unix-int64(minutes)*60) + 1 }
	young := func(minutes int) float64 { return -float64(e.unix-int64(minutes)*60) - 1 }
	seed := hstate{
		"recent_jobs":        hzset(0, "old", old(10), "young", young(10)),
		"pending_jobs":       hzset(0, "old", old(20), "young", young(20)),
		"completed_jobs":     hzset(0, "old", old(30), "young", young(30)),
		"silenced_jobs":      hzset(0, "old", old(30), "young", young(30)),
		"recent_failed_jobs": hzset(0, "old", old(40), "young", young(40)),
		"failed_jobs":        hzset(0, "old", old(50), "young", young(50)),
		"monitored_jobs":     hzset(0, "old", old(60), "young", young(60)),
		// ExpireSupervisors drops scores up to now-14 inclusive.
		"masters":     hzset(0, "old", float64(e.unix-14), "young", float64(e.unix-13)),
		"supervisors": hzset(0, "old", float64(e.unix-14), "young", float64(e.unix-13)),
	}
	e.seed(t, seed)
	e.pipe(t, func(p redis.Pipeliner) error {
		e.h.TrimRecentJobs(ctx, p)
		e.h.TrimFailedJobs(ctx, p)
		e.h.TrimMonitoredJobs(ctx, p)
		e.h.FlushExpiredSupervisors(ctx, p)
		return nil
	})
	want := hstate{}
	for k, v := range seed {
		for _, m := range v.ZSet {
			if m.Member == "young" {
				want[k] = hzset(0, "young", m.Score)
			}
		}
	}
	assertHState(t, "trimmed", e.dump(t), want)
}

func TestHorizonPendingCommands(t *testing.T) {
	ctx := context.Background()
	e := newHzEnv(t, HorizonTrim{})
	key := e.h.Keys().MasterCommands("vm-Ab1z")
	if key != e.prefix+"commands:master:vm-Ab1z" {
		t.Fatalf("key %s", key)
	}
	e.seed(t, hstate{"commands:master:vm-Ab1z": hlist(
		`{"command":"Laravel\\Horizon\\SupervisorCommands\\Terminate","options":{"status":1}}`,
		`not json`,
		`{"command":"Laravel\\Horizon\\SupervisorCommands\\Pause","options":[]}`,
	)})
	cmds, err := e.h.PendingCommands(ctx, e.c, key)
	if err == nil || !strings.Contains(err.Error(), "not json") {
		t.Errorf("error %v, want one about the entry that is not JSON", err)
	}
	if len(cmds) != 2 || cmds[0].Command != `Laravel\Horizon\SupervisorCommands\Terminate` || string(cmds[0].Options) != `{"status":1}` ||
		cmds[1].Command != `Laravel\Horizon\SupervisorCommands\Pause` {
		t.Errorf("commands %+v", cmds)
	}
	assertHState(t, "taken", e.dump(t), hstate{})
	if cmds, err := e.h.PendingCommands(ctx, e.c, key); err != nil || len(cmds) != 0 {
		t.Errorf("empty list: %v %v", cmds, err)
	}
}

// TestHorizonPresenceMatchesPHP writes a master and a supervisor with Horizon's own
// repositories (as `php artisan horizon` does every second) and the same ones with this
// package, and compares the keys and the dashboard's view of them.
func TestHorizonPresenceMatchesPHP(t *testing.T) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	c := srv.Client(t, 0)
	for _, major := range testenv.HorizonMajors {
		for _, paused := range []bool{false, true} {
			t.Run(fmt.Sprintf("laravel-%d/paused=%v", major, paused), func(t *testing.T) {
				base := "lq" + testenv.RandomName(4)
				phpPrefix, goPrefix := base+"a_horizon:", base+"b_horizon:"
				t.Cleanup(func() {
					if keys, _ := testenv.Keys(ctx, c, base); len(keys) > 0 {
						c.Del(ctx, keys...)
					}
				})
				php := testenv.HorizonPHP{Major: major, Redis: srv, Prefix: base + "_database_", HorizonPrefix: phpPrefix}
				opts := map[string]any{"name": "laraq", "connection": "redis", "queue": "default,emails/x",
					"balance": "off", "maxProcesses": 4, "timeout": 90, "memory": 256, "sleep": 1, "parentId": 7}
				var out struct {
					Master, Supervisor string
					PID                int
				}
				php.Run(t, "present", map[string]any{"environment": "laraq", "basename": "vm", "paused": paused, "options": opts}, &out)

				h, err := NewHorizon(HorizonOptions{Prefix: goPrefix})
				if err != nil {
					t.Fatal(err)
				}
				p := c.Pipeline()
				if err := h.UpdateMaster(ctx, p, HorizonMaster{Name: out.Master, Environment: "laraq", PID: out.PID,
					Paused: paused, Supervisors: []string{out.Supervisor}}); err != nil {
					t.Fatal(err)
				}
				if err := h.UpdateSupervisor(ctx, p, HorizonSupervisor{Name: out.Supervisor, PID: out.PID, Paused: paused,
					Pools: []HorizonPool{{Queue: "default,emails/x", Processes: 0}},
					Options: HorizonSupervisorOptions{Connection: "redis", Queue: "default,emails/x", Balance: "off",
						MaxProcesses: 4, Timeout: 90, Memory: 256, Sleep: 1, ParentID: 7}}); err != nil {
					t.Fatal(err)
				}
				if _, err := p.Exec(ctx); err != nil {
					t.Fatal(err)
				}
				norm := func(s hstate) hstate {
					for k, v := range s {
						if v.ExpireAt != 0 {
							v.ExpireAt = 1 // both relative to the server clock; exact TTLs are unit-tested
						}
						for i := range v.ZSet {
							v.ZSet[i].Score = 0 // the second of the write
						}
						s[k] = v
					}
					return s
				}
				assertHState(t, "presence keys", norm(dumpAll(t, c, goPrefix)), norm(dumpAll(t, c, phpPrefix)))

				var phpRead, goRead map[string]any
				php.Run(t, "read", map[string]any{}, &phpRead)
				php.HorizonPrefix = goPrefix
				php.Run(t, "read", map[string]any{}, &goRead)
				for _, k := range []string{"masters", "supervisors", "dashboard_masters", "stats", "workload", "longest_timeout"} {
					g, _ := json.Marshal(goRead[k])
					w, _ := json.Marshal(phpRead[k])
					if string(g) != string(w) {
						t.Errorf("%s:\n  go:  %s\n  php: %s", k, g, w)
					}
				}
				status := goRead["stats"].(map[string]any)["status"]
				if want := map[bool]string{false: "running", true: "paused"}[paused]; status != want {
					t.Errorf("dashboard status %v, want %s", status, want)
				}
				if lt := fmt.Sprint(goRead["longest_timeout"]); lt != "90" {
					t.Errorf("horizon:purge's longest timeout %s, want 90", lt)
				}
			})
		}
	}
}

// TestHorizonWorkloadAndPlanOnDashboard checks what the dashboard derives from a laraq
// supervisor: the workload page (queue length, processes, wait from the runtime metric)
// and the masters page, where an environment of horizon.environments adds the planned
// supervisors as inactive rows.
func TestHorizonWorkloadAndPlanOnDashboard(t *testing.T) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	c := srv.Client(t, 0)
	base := "lq" + testenv.RandomName(4)
	t.Cleanup(func() {
		if keys, _ := testenv.Keys(ctx, c, base); len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	php := testenv.HorizonPHP{Major: 11, Redis: srv, Prefix: base + "_database_", HorizonPrefix: base + "_horizon:"}
	r, _ := New(c, Options{Prefix: php.Prefix})
	h, _ := NewHorizon(HorizonOptions{Prefix: php.HorizonPrefix})
	if err := h.LoadScripts(ctx, c); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		if err := r.Push(ctx, "default", []byte(`{"attempts":0}`)); err != nil {
			t.Fatal(err)
		}
	}
	p := c.Pipeline()
	h.Metrics(ctx, p, "default", "X", h.Now().Add(-2*time.Second)) // runtime 2000 ms
	for _, env := range []string{"laraq", "production"} {
		_ = h.UpdateMaster(ctx, p, HorizonMaster{Name: "vm-" + env, Environment: env, PID: 1, Supervisors: []string{"vm-" + env + ":laraq"}})
		_ = h.UpdateSupervisor(ctx, p, HorizonSupervisor{Name: "vm-" + env + ":laraq", PID: 1,
			Pools: []HorizonPool{{Queue: "default", Processes: 2}}, Options: HorizonSupervisorOptions{Connection: "redis", Queue: "default"}})
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	var read map[string]any
	php.Run(t, "read", map[string]any{}, &read)
	wl, _ := json.Marshal(read["workload"])
	// 6 jobs × 2000 ms ÷ 4 processes = 3 s.
	if want := `[{"length":6,"name":"default","processes":4,"split_queues":null,"wait":3.0}]`; string(wl) != want {
		t.Errorf("workload %s, want %s", wl, want)
	}
	var rows []string
	for _, m := range read["dashboard_masters"].(map[string]any) {
		for _, s := range m.(map[string]any)["supervisors"].([]any) {
			s := s.(map[string]any)
			rows = append(rows, fmt.Sprintf("%s=%s", s["name"], s["status"]))
		}
	}
	got := strings.Join(sortedStrings(rows), " ")
	if want := "vm-laraq:laraq=running vm-production:laraq=running vm-production:supervisor-1=inactive"; got != want {
		t.Errorf("dashboard supervisors %s, want %s", got, want)
	}
	if n := fmt.Sprint(read["stats"].(map[string]any)["processes"]); n != "4" {
		t.Errorf("dashboard processes %s, want 4", n)
	}
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// TestHorizonArtisanSignalsReachGoMaster registers two processes as masters, one named
// after this machine's slugged hostname as a laraq worker would be, and runs the pid
// selection and posix_kill of horizon:pause, horizon:continue and horizon:terminate: the
// first process gets SIGUSR2, SIGCONT and SIGTERM, the other nothing.
func TestHorizonArtisanSignalsReachGoMaster(t *testing.T) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	c := srv.Client(t, 0)
	base := "lq" + testenv.RandomName(4)
	t.Cleanup(func() {
		if keys, _ := testenv.Keys(ctx, c, base); len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	php := testenv.HorizonPHP{Major: 11, Redis: srv, Prefix: base + "_database_", HorizonPrefix: base + "_horizon:"}
	var probe struct {
		Basename  string
		Signalled []int
	}
	php.Run(t, "signal", map[string]any{"command": "continue"}, &probe)
	if probe.Basename == "" || len(probe.Signalled) != 0 {
		t.Fatalf("probe %+v", probe)
	}

	dir := t.TempDir()
	start := func(name string) (*exec.Cmd, string) {
		log := filepath.Join(dir, name)
		cmd := exec.Command("sh", "-c", `trap 'echo USR2 >> "$0"' USR2; trap 'echo CONT >> "$0"' CONT; `+
			`trap 'echo TERM >> "$0"; exit 0' TERM; echo ready >> "$0"; while :; do sleep 0.05; done`, log)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
		waitFor(t, log, "ready\n")
		return cmd, log
	}
	ours, ourLog := start("ours")
	other, otherLog := start("other")

	h, _ := NewHorizon(HorizonOptions{Prefix: php.HorizonPrefix})
	p := c.Pipeline()
	_ = h.UpdateMaster(ctx, p, HorizonMaster{Name: probe.Basename + "-Go12", Environment: "laraq", PID: ours.Process.Pid})
	_ = h.UpdateMaster(ctx, p, HorizonMaster{Name: "elsewhere" + testenv.RandomName(2) + "-abcd", Environment: "laraq", PID: other.Process.Pid})
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	want := "ready\n"
	for _, step := range []struct{ command, signal string }{{"pause", "USR2"}, {"continue", "CONT"}, {"terminate", "TERM"}} {
		var res struct{ Signalled []int }
		php.Run(t, "signal", map[string]any{"command": step.command}, &res)
		if len(res.Signalled) != 1 || res.Signalled[0] != ours.Process.Pid {
			t.Fatalf("horizon:%s signalled %v, want [%d]", step.command, res.Signalled, ours.Process.Pid)
		}
		want += step.signal + "\n"
		waitFor(t, ourLog, want)
	}
	if b, _ := os.ReadFile(otherLog); string(b) != "ready\n" {
		t.Errorf("the other machine's master got %q", b)
	}
}

func waitFor(t *testing.T, file, want string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if b, _ := os.ReadFile(file); strings.HasSuffix(string(b), want) {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	b, _ := os.ReadFile(file)
	t.Fatalf("%s holds %q, want it to end with %q", file, b, want)
}

// TestHorizonCommandsFromPHP reads with PendingCommands what Horizon's command queue
// pushes, and leaves nothing for Horizon's own reader.
func TestHorizonCommandsFromPHP(t *testing.T) {
	ctx := context.Background()
	srv := testenv.RedisServer(t)
	c := srv.Client(t, 0)
	base := "lq" + testenv.RandomName(4)
	t.Cleanup(func() {
		if keys, _ := testenv.Keys(ctx, c, base); len(keys) > 0 {
			c.Del(ctx, keys...)
		}
	})
	php := testenv.HorizonPHP{Major: 10, Redis: srv, Prefix: base + "_database_", HorizonPrefix: base + "_horizon:"}
	php.Run(t, "command", map[string]any{"queue": "master:vm-Go12", "command": `Laravel\Horizon\MasterSupervisorCommands\AddSupervisor`,
		"options": map[string]any{"name": "vm-Go12:s", "queue": "a/b"}}, nil)
	php.Run(t, "command", map[string]any{"queue": "vm-Go12:s", "command": `Laravel\Horizon\SupervisorCommands\Terminate`,
		"options": map[string]any{"status": 1}}, nil)
	h, _ := NewHorizon(HorizonOptions{Prefix: php.HorizonPrefix})
	got, err := h.PendingCommands(ctx, c, h.Keys().MasterCommands("vm-Go12"))
	if err != nil || len(got) != 1 || got[0].Command != `Laravel\Horizon\MasterSupervisorCommands\AddSupervisor` ||
		string(got[0].Options) != `{"name":"vm-Go12:s","queue":"a\/b"}` {
		t.Errorf("master commands %+v %v", got, err)
	}
	got, err = h.PendingCommands(ctx, c, h.Keys().SupervisorCommands("vm-Go12:s"))
	if err != nil || len(got) != 1 || got[0].Command != `Laravel\Horizon\SupervisorCommands\Terminate` || string(got[0].Options) != `{"status":1}` {
		t.Errorf("supervisor commands %+v %v", got, err)
	}
	var left []any
	php.Run(t, "pending", map[string]any{"queue": "master:vm-Go12"}, &left)
	if len(left) != 0 {
		t.Errorf("Horizon still finds %v", left)
	}
}
