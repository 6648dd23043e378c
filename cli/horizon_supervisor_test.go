package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

// hzRead is the part of op.php read the supervisor tests look at.
type hzRead struct {
	Masters []struct {
		Name        string
		Environment string
		PID         json.Number `json:"pid"`
		Status      string
		Supervisors []string
	}
	Supervisors []struct {
		Name      string
		Master    string
		PID       json.Number `json:"pid"`
		Status    string
		Processes map[string]json.Number
		Options   map[string]any
	}
	LongestTimeout json.Number `json:"longest_timeout"`
	Workload       []map[string]any
	// DashboardMasters is MasterSupervisorController::index: masters by name, each
	// with its supervisors (a JSON list when there are none).
	DashboardMasters any `json:"dashboard_masters"`
	Stats            map[string]any
}

func (a *hzApp) read(t *testing.T) hzRead {
	t.Helper()
	var out hzRead
	a.php.Run(t, "read", map[string]any{}, &out)
	return out
}

// waitRead reads the dashboard until cond holds.
func (a *hzApp) waitRead(t *testing.T, what string, cond func(hzRead) bool) hzRead {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := a.read(t)
		if cond(r) {
			return r
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; the dashboard reads %+v", what, r)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// TestHorizonSupervisorGoOnlyFleet runs the laraq binary as a Go-only fleet would:
// `laraq work --horizon-supervisor` on an application that uses Horizon, no PHP master.
// Horizon's repositories and controllers must list it (masters, supervisors, the
// masters page, workload, stats), and the process selection and signals of
// horizon:pause, horizon:continue and horizon:terminate on this machine must pause it
// (status paused), resume it and stop it (exit 0, its records gone).
func TestHorizonSupervisorGoOnlyFleet(t *testing.T) {
	bin := buildLaraq(t)
	for _, major := range testenv.HorizonMajors {
		t.Run(fmt.Sprintf("laravel-%d", major), func(t *testing.T) {
			a := newHzApp(t, major, nil)
			// Three jobs wait for the worker, which has no handler for them: with
			// --unhandled hand-back and a long delay it leaves them queued.
			a.php.Run(t, "dispatch", map[string]any{"jobs": []hzJob{{}, {}, {}}}, nil)
			w := startWorker(t, bin, a.workArgs("--horizon-supervisor", "--concurrency", "3", "--queue", "default",
				"--unhandled", "hand-back", "--unhandled-delay", "3600", "--timeout", "45", "--tries", "2")[1:]...)
			pid := strconv.Itoa(w.cmd.Process.Pid)

			r := a.waitRead(t, "the master", func(r hzRead) bool { return len(r.Masters) == 1 && len(r.Supervisors) == 1 })
			m, s := r.Masters[0], r.Supervisors[0]
			if m.PID.String() != pid || m.Status != "running" || m.Environment != "laraq" || fmt.Sprint(m.Supervisors) != "["+m.Name+":laraq]" {
				t.Errorf("master %+v, want pid %s, running, environment laraq, supervisor %s:laraq", m, pid, m.Name)
			}
			if s.Name != m.Name+":laraq" || s.Master != m.Name || s.PID.String() != pid || s.Status != "running" ||
				fmt.Sprint(s.Processes) != "map[redis:default:3]" {
				t.Errorf("supervisor %+v", s)
			}
			for k, want := range map[string]string{"queue": "default", "balance": "off", "connection": "redis",
				"maxProcesses": "3", "timeout": "45", "maxTries": "2", "parentId": pid, "name": s.Name} {
				if got := fmt.Sprint(s.Options[k]); got != want {
					t.Errorf("supervisor option %s = %s, want %s", k, got, want)
				}
			}
			if r.LongestTimeout.String() != "45" {
				t.Errorf("longest active timeout %s, want 45", r.LongestTimeout)
			}
			dm, _ := r.DashboardMasters.(map[string]any)[m.Name].(map[string]any)
			if sups, _ := dm["supervisors"].([]any); len(sups) != 1 || sups[0].(map[string]any)["status"] != "running" ||
				sups[0].(map[string]any)["name"] != s.Name {
				t.Errorf("masters page: %+v (no planned inactive supervisor may show)", r.DashboardMasters)
			}
			if len(r.Workload) != 1 || fmt.Sprint(r.Workload[0]["name"]) != "default" ||
				fmt.Sprint(r.Workload[0]["processes"]) != "3" || fmt.Sprint(r.Workload[0]["length"]) != "3" {
				t.Errorf("workload %+v, want default with 3 processes and 3 jobs", r.Workload)
			}
			if r.Stats["status"] != "running" || fmt.Sprint(r.Stats["processes"]) != "3" {
				t.Errorf("stats status %v, processes %v", r.Stats["status"], r.Stats["processes"])
			}

			signal := func(command string) {
				t.Helper()
				var out struct {
					Basename  string
					Signalled []int
				}
				a.php.Run(t, "signal", map[string]any{"command": command}, &out)
				if !strings.HasPrefix(m.Name, out.Basename+"-") || fmt.Sprint(out.Signalled) != "["+pid+"]" {
					t.Fatalf("horizon:%s signalled %v (masters starting with %s), want [%s] (%s)", command, out.Signalled, out.Basename, pid, m.Name)
				}
			}
			signal("pause")
			a.waitRead(t, "status paused", func(r hzRead) bool {
				return len(r.Masters) == 1 && r.Masters[0].Status == "paused" && len(r.Supervisors) == 1 && r.Supervisors[0].Status == "paused"
			})
			signal("continue")
			a.waitRead(t, "status running", func(r hzRead) bool {
				return len(r.Masters) == 1 && r.Masters[0].Status == "running" && r.Supervisors[0].Status == "running"
			})
			signal("terminate")
			if rc := w.exitCode(t, 20*time.Second); rc != 0 {
				t.Fatalf("exit status %d after horizon:terminate:\n%s", rc, w.stderr.String())
			}
			r = a.read(t)
			if len(r.Masters) != 0 || len(r.Supervisors) != 0 || r.Stats["status"] != "inactive" {
				t.Errorf("after terminate: masters %+v, supervisors %+v, status %v", r.Masters, r.Supervisors, r.Stats["status"])
			}
			if n := a.pending(t); n != 3 {
				t.Errorf("%d jobs left, want the 3 handed back", n)
			}
		})
	}
}

// TestHorizonFlags: --horizon takes auto, on or off, and --horizon-supervisor needs an
// application that uses Horizon (or --horizon on).
func TestHorizonFlags(t *testing.T) {
	srv := testenv.RedisServer(t)
	base := []string{"work", "--redis", "redis://" + srv.Addr + "/0", "--prefix", testenv.Prefix(t), "--no-cache",
		"--database", "null", "--stop-when-empty"}
	for _, tc := range []struct {
		args []string
		rc   int
		want string
	}{
		{[]string{"--horizon", "sometimes"}, 1, "--horizon"},
		{[]string{"--horizon-supervisor"}, 1, "does not use Horizon"},
		{[]string{"--horizon-supervisor=a:b"}, 2, "must not contain"},
		{[]string{"--horizon", "off", "--horizon-supervisor=web"}, 1, "does not use Horizon"},
		{[]string{"--horizon", "on", "--horizon-supervisor=web"}, 0, "registered as a Horizon master supervisor"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		_, stderr, done := mainAsync(ctx, append(append([]string(nil), base...), tc.args...), WithGetenv(noEnv))
		rc := <-done
		cancel()
		if rc != tc.rc || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", tc.args, rc, tc.rc, tc.want, stderr.String())
		}
	}
}
