package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Every server keeps its files in a temporary directory named laraq-KIND-PID-RANDOM, PID
// being the test binary's. A binary that dies without running Main's clean-up (a test
// timeout, a panic, a fuzz worker killed by its coordinator, ^C) cannot remove its
// directories, and its servers die with it (parent-death signal); the next binary that
// creates a directory of the same kind, and every Main on its way out, removes them.

// legacyStaleAge is how old a directory without a pid in its name (laraq-KIND-RANDOM, as
// earlier versions named them) must be before a sweep removes it: its owner cannot be
// asked, and no test binary runs that long.
const legacyStaleAge = time.Hour

// scratchDir creates a fresh directory for one server of this kind under root, after
// removing the stale ones earlier binaries left there.
func scratchDir(root, kind string) (string, error) {
	sweepStaleDirs(root, kind)
	return os.MkdirTemp(root, fmt.Sprintf("laraq-%s-%d-", kind, os.Getpid()))
}

// sweepStaleDirs removes root's laraq-KIND-* directories that no running process works
// in or holds a file of, and whose binary has exited (its pid is gone) or, for a name
// without a pid, that were last changed more than legacyStaleAge ago. Directories of
// this binary and of live binaries stay.
func sweepStaleDirs(root, kind string) {
	matches, _ := filepath.Glob(filepath.Join(root, "laraq-"+kind+"-*"))
	var used []string // read from /proc only once something looks stale
	scanned := false
	for _, dir := range matches {
		if !looksStale(dir, kind, time.Now()) {
			continue
		}
		if !scanned {
			used, scanned = processPaths(), true
		}
		if inUse(dir, used) {
			continue
		}
		_ = os.RemoveAll(dir)
	}
}

// looksStale applies the name and age rules of sweepStaleDirs (not the in-use one).
func looksStale(dir, kind string, now time.Time) bool {
	fi, err := os.Lstat(dir)
	if err != nil || !fi.IsDir() {
		return false // a symlink or file that merely matches the pattern is not ours
	}
	rest := strings.TrimPrefix(filepath.Base(dir), "laraq-"+kind+"-")
	if pidText, _, ok := strings.Cut(rest, "-"); ok {
		pid, err := strconv.Atoi(pidText)
		if err != nil || pid <= 0 {
			return false
		}
		// EPERM means the process exists under another user: alive.
		return pid != os.Getpid() && syscall.Kill(pid, 0) == syscall.ESRCH
	}
	return now.Sub(lastChange(dir, fi.ModTime())) > legacyStaleAge
}

// lastChange is the newest modification time of dir and the files directly in it (a log
// being written keeps a directory's own time unchanged).
func lastChange(dir string, t time.Time) time.Time {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.ModTime().After(t) {
			t = fi.ModTime()
		}
	}
	return t
}

// processPaths returns the working directories and open files of every process this
// user may inspect (a redis-server, mariadbd or postgres works in its directory; a test
// binary holds its SQLite file open). Without /proc it returns nothing.
func processPaths() []string {
	procs, _ := os.ReadDir("/proc")
	var paths []string
	for _, p := range procs {
		if _, err := strconv.Atoi(p.Name()); err != nil {
			continue
		}
		base := filepath.Join("/proc", p.Name())
		if cwd, err := os.Readlink(filepath.Join(base, "cwd")); err == nil {
			paths = append(paths, cwd)
		}
		fds, _ := os.ReadDir(filepath.Join(base, "fd"))
		for _, fd := range fds {
			if target, err := os.Readlink(filepath.Join(base, "fd", fd.Name())); err == nil && strings.HasPrefix(target, "/") {
				paths = append(paths, target)
			}
		}
	}
	return paths
}

// inUse reports whether one of paths is dir or lies inside it.
func inUse(dir string, paths []string) bool {
	for _, p := range paths {
		if p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// sweepAll runs sweepStaleDirs for every kind of directory this package creates.
func sweepAll() {
	sweepStaleDirs(os.TempDir(), "redis")
	root := scratchRoot()
	for _, kind := range []string{"mariadb", "postgres", "sqlite"} {
		sweepStaleDirs(root, kind)
	}
}
