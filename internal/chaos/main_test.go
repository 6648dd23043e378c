package chaos

import (
	"flag"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

var longForm = flag.Bool("chaos.long", false, "run the long form of the chaos suite (make chaos)")

var (
	binOnce sync.Once
	binDir  string
	binPath string
	binErr  error
)

// laraqBin builds cmd/laraq once per test binary, on first use (fuzz workers, which run
// no scenario, never build it).
func laraqBin(t testing.TB) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "laraq-chaos-bin-"); binErr == nil {
			binPath, binErr = BuildLaraq(binDir)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// scenario is one chaos scenario; run gets long=true in the long form.
type scenario struct {
	name  string
	short bool // part of TestChaos (go test ./...)
	opts  func(long bool) Options
	run   func(e *Env, long bool)
}

// TestChaos is the short form: every scenario marked short, with few jobs and brief
// faults, two at a time. It asserts what must hold today; see README.md.
func TestChaos(t *testing.T) {
	testenv.NeedPHP(t)
	table := &Table{}
	printTable(t, table)
	for _, s := range scenarios {
		if !s.short {
			continue
		}
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			opts := s.opts(false)
			opts.Table = table
			s.run(NewEnv(t, laraqBin(t), opts), false)
		})
	}
}

// TestChaosLong is the long form (make chaos): every scenario with tens of thousands of
// jobs, long outages and the faults still open, one at a time.
func TestChaosLong(t *testing.T) {
	if !*longForm {
		t.Skip("the long form runs with `make chaos` (go test -run TestChaosLong -chaos.long)")
	}
	testenv.NeedPHP(t)
	table := &Table{}
	printTable(t, table)
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			opts := s.opts(true)
			opts.Table = table
			s.run(NewEnv(t, laraqBin(t), opts), true)
		})
	}
}

// printTable prints the results once every scenario of t has finished.
func printTable(t *testing.T, table *Table) {
	t.Cleanup(func() {
		if table.Len() == 0 {
			return
		}
		fmt.Printf("\n%s results:\n%s\n", t.Name(), table)
	})
}

// pick is short or long by form.
func pick[T any](long bool, short, longer T) T {
	if long {
		return longer
	}
	return short
}
