package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// deadPid returns the pid of a process that has exited and been reaped.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatalf("run true: %v", err)
	}
	return cmd.Process.Pid
}

func mkdir(t *testing.T, root, name string, age time.Duration) string {
	t.Helper()
	dir := filepath.Join(root, name)
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "redis.log"), []byte("log\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if age > 0 {
		old := time.Now().Add(-age)
		for _, p := range []string{filepath.Join(dir, "redis.log"), dir} {
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func TestSweepStaleDirs(t *testing.T) {
	root := t.TempDir()
	self := strconv.Itoa(os.Getpid())
	dead := strconv.Itoa(deadPid(t))

	// A process working in an old directory: what a surviving redis-server looks like.
	busy := mkdir(t, root, "laraq-redis-1234567", 3*time.Hour)
	sleeper := exec.Command("sleep", "60")
	sleeper.Dir = busy
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() })
	// pid 1 always exists (kill(1, 0) gives EPERM to a non-root user: still alive).
	live := mkdir(t, root, "laraq-redis-1-777", 3*time.Hour)

	want := map[string]bool{ // name → kept
		filepath.Base(mkdir(t, root, "laraq-redis-"+dead+"-123", 0)):           false,
		filepath.Base(mkdir(t, root, "laraq-redis-"+self+"-456", 3*time.Hour)): true,
		filepath.Base(live): true,
		filepath.Base(mkdir(t, root, "laraq-redis-2871", 10*time.Minute)): true,
		filepath.Base(mkdir(t, root, "laraq-redis-2872", 2*time.Hour)):    false,
		filepath.Base(busy): true,
		filepath.Base(mkdir(t, root, "laraq-mariadb-"+dead+"-9", 0)):          true, // another kind
		filepath.Base(mkdir(t, root, "laraq-redis-x"+dead+"-9", 3*time.Hour)): true, // not a pid
	}
	// A file matching the pattern is not a directory of ours.
	if err := os.WriteFile(filepath.Join(root, "laraq-redis-"+dead+"-file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	want["laraq-redis-"+dead+"-file"] = true

	sweepStaleDirs(root, "redis")
	for name, kept := range want {
		_, err := os.Lstat(filepath.Join(root, name))
		if exists := err == nil; exists != kept {
			t.Errorf("%s: exists %v after the sweep, want %v", name, exists, kept)
		}
	}
}

func TestStartRedisRemovesItsDirectory(t *testing.T) {
	r, err := StartRedis()
	if err != nil {
		Need(t, false, "redis-server: %v", err)
	}
	dir := r.dir
	if want := "laraq-redis-" + strconv.Itoa(os.Getpid()) + "-"; !strings.HasPrefix(filepath.Base(dir), want) {
		t.Errorf("directory %s does not start with %s", dir, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "redis.log")); err != nil {
		t.Errorf("no log in %s: %v", dir, err)
	}
	runningMu.Lock()
	tracked := running[r]
	runningMu.Unlock()
	if !tracked {
		t.Error("a started server is not tracked for Main")
	}
	r.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s still exists after Stop: %v", dir, err)
	}
	runningMu.Lock()
	tracked = running[r]
	runningMu.Unlock()
	if tracked {
		t.Error("a stopped server is still tracked")
	}
	r.Stop() // a second Stop does nothing
}
