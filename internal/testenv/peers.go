package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// The Laravel 5.8–7.x and 9.x–13.x peers and Horizon live beside the repository, in the shared
// directory (../shared from the repository root, or LARAQ_SHARED_DIR): the unmodified
// src/Illuminate trees of each major as tarballs, the harness that boots them on Debian's
// PHP 8.2, and laravel/horizon's source. The tests unpack them once into a cache
// directory (LARAQ_PEERS_DIR, else the user's cache directory) shared by every test
// binary; a file lock keeps parallel binaries from unpacking at the same time.

// Majors are the Laravel majors the interop tests run against: 8 is Debian's
// php-illuminate-* 8.83 packages, 5 (5.8), 6, 7 and 9–13 the shared peers. LARAQ_MAJORS
// ("8,10-13") narrows the list for a run (majors.go).
var Majors = selectMajors(os.Getenv("LARAQ_MAJORS"), []int{5, 6, 7, 8, 9, 10, 11, 12, 13})

// treeMajors are the majors of the shared peers' trees (laravel-<major>/).
var treeMajors = []int{5, 6, 7, 9, 10, 11, 12, 13}

// knownMajor reports whether a peer of this major exists: 8 (Debian's) or a tree's.
func knownMajor(major int) bool { return major == 8 || slices.Contains(treeMajors, major) }

// SharedDir returns the shared directory holding peers/laravel and peers/horizon.
func SharedDir() string {
	if d := os.Getenv("LARAQ_SHARED_DIR"); d != "" {
		return d
	}
	return filepath.Join(RepoRoot(), "..", "shared")
}

// LaravelPeerDir returns the directory of the Laravel peers' harness, README and trees.
func LaravelPeerDir() string { return filepath.Join(SharedDir(), "peers", "laravel") }

// HorizonPeerDir returns the directory holding laravel/horizon's source tarball.
func HorizonPeerDir() string { return filepath.Join(SharedDir(), "peers", "horizon") }

var (
	unpackOnce sync.Once
	unpacked   string
	unpackErr  error
)

// PeersDir returns the directory the Laravel trees (laravel-5/ … laravel-13.4/) and
// Horizon (horizon/) are unpacked in, unpacking them on first use: a failure in CI, a
// skip elsewhere.
func PeersDir(t testing.TB) string {
	t.Helper()
	dir, err := peersDir()
	if err != nil {
		Need(t, false, "Laravel peers: %v", err)
	}
	return dir
}

// peersDir unpacks the peers once per test binary and returns their directory.
func peersDir() (string, error) {
	unpackOnce.Do(func() { unpacked, unpackErr = unpackPeers() })
	return unpacked, unpackErr
}

func unpackPeers() (string, error) {
	script := filepath.Join(LaravelPeerDir(), "unpack.sh")
	if _, err := os.Stat(script); err != nil {
		return "", fmt.Errorf("%s not found (the shared peers belong beside the repository, or set LARAQ_SHARED_DIR)", script)
	}
	dir := os.Getenv("LARAQ_PEERS_DIR")
	if dir == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return "", err
		}
		dir = filepath.Join(cache, "laraq", "peers")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", err
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("locking %s: %w", dir, err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN) //nolint:errcheck // released on close anyway
	if out, err := exec.Command("sh", script, dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("%s: %v: %s", script, err, strings.TrimSpace(string(out)))
	}
	if err := unpackHorizon(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// unpackHorizon unpacks the Horizon tarball into dir/horizon once per tarball.
func unpackHorizon(dir string) error {
	tarballs, _ := filepath.Glob(filepath.Join(HorizonPeerDir(), "horizon-*.tar.gz"))
	if len(tarballs) != 1 {
		return fmt.Errorf("want one horizon-*.tar.gz in %s, found %d", HorizonPeerDir(), len(tarballs))
	}
	stamp := filepath.Join(dir, "horizon", ".from-"+filepath.Base(tarballs[0]))
	if _, err := os.Stat(stamp); err == nil {
		return nil
	}
	tmp := filepath.Join(dir, "horizon.tmp")
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	if out, err := exec.Command("tar", "-xzf", tarballs[0], "-C", tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("unpacking %s: %v: %s", tarballs[0], err, strings.TrimSpace(string(out)))
	}
	_ = os.RemoveAll(filepath.Join(dir, "horizon"))
	if err := os.Rename(tmp, filepath.Join(dir, "horizon")); err != nil {
		return err
	}
	return os.WriteFile(stamp, nil, 0o644)
}
