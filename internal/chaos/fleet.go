package chaos

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// Worker is one worker process of a Fleet: `laraq work --forward` (Go) or
// testdata/php/work.php (PHP, Laravel 8.83's own Worker).
type Worker struct {
	*Proc
	PHP    bool
	Args   []string // the scenario's flags, to start a replacement alike
	Record string   // PHP workers: the journal jobs_chaos.php writes
}

// Kill is a kill -9 of a worker.
type Kill struct {
	Worker string
	At     time.Time
}

// Fleet starts and stops the workers of one scenario and remembers every kill. Worker
// names are unique for the life of the fleet (a restarted worker is a new name), so
// every run is attributed to exactly one process.
type Fleet struct {
	Dir      string // logs and PHP journals
	Bin      string // the laraq binary
	RedisURL string
	// RedisArgs, when set, replace "--redis RedisURL" (the Sentinel flags).
	RedisArgs []string
	Prefix    string
	Recorder  *Recorder
	PHPEnv    func(worker, record string) []string // the environment of a PHP worker

	mu      sync.Mutex
	workers []*Worker
	seq     map[string]int
}

// StartGo starts `laraq work` forwarding to the recorder as worker base.N, with the
// fleet's Redis and prefix, JSON logs and args appended.
func (f *Fleet) StartGo(base string, args ...string) (*Worker, error) {
	name := f.next(base)
	redisArgs := f.RedisArgs
	if redisArgs == nil {
		redisArgs = []string{"--redis", f.RedisURL}
	}
	all := append(append([]string{"work"}, redisArgs...), append([]string{"--prefix", f.Prefix,
		"--forward", f.Recorder.URL(name), "--log-format", "json", "--verbose"}, args...)...)
	cmd := exec.Command(f.Bin, all...)
	// A clean environment: no LARAQ_* or REDIS_* of the machine, HOME for the local store.
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + f.Dir}
	p, err := StartProc(f.Dir, name, cmd)
	if err != nil {
		return nil, err
	}
	w := &Worker{Proc: p}
	f.add(w)
	return w, nil
}

// StartPHP starts testdata/php/work.php as worker base.N with args (work.php's flags).
func (f *Fleet) StartPHP(script string, base string, args ...string) (*Worker, error) {
	name := f.next(base)
	record := filepath.Join(f.Dir, name+".journal")
	cmd := exec.Command("php", append([]string{script}, args...)...)
	cmd.Env = f.PHPEnv(name, record)
	p, err := StartProc(f.Dir, name, cmd)
	if err != nil {
		return nil, err
	}
	w := &Worker{Proc: p, PHP: true, Record: record}
	f.add(w)
	return w, nil
}

func (f *Fleet) next(base string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.seq == nil {
		f.seq = map[string]int{}
	}
	f.seq[base]++
	return base + "." + strconv.Itoa(f.seq[base])
}

func (f *Fleet) add(w *Worker) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.workers = append(f.workers, w)
}

// Workers returns every worker started, running or not.
func (f *Fleet) Workers() []*Worker {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*Worker(nil), f.workers...)
}

// Running returns the workers still running.
func (f *Fleet) Running() []*Worker {
	var out []*Worker
	for _, w := range f.Workers() {
		if w.Running() {
			out = append(out, w)
		}
	}
	return out
}

// Kills lists every kill -9, in order.
func (f *Fleet) Kills() []Kill {
	var out []Kill
	for _, w := range f.Workers() {
		if at := w.KilledAt(); !at.IsZero() {
			out = append(out, Kill{Worker: w.Name, At: at})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// StopAll sends SIGTERM to every running worker and waits up to d for each; a worker
// still running then is killed with -9 and reported.
func (f *Fleet) StopAll(d time.Duration) error {
	running := f.Running()
	for _, w := range running {
		_ = w.Signal(syscall.SIGTERM)
	}
	var late []string
	for _, w := range running {
		if _, err := w.Wait(d); err != nil {
			w.Kill9()
			late = append(late, w.Name)
		}
	}
	if len(late) > 0 {
		return fmt.Errorf("chaos: workers %v did not stop within %s of SIGTERM and were killed", late, d)
	}
	return nil
}

// KillAll kills every running worker with -9 (the end of a test that failed).
func (f *Fleet) KillAll() {
	for _, w := range f.Running() {
		w.Kill9()
	}
}
