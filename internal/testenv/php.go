package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

var (
	phpOnce sync.Once
	phpErr  error
)

// NeedPHP makes sure php-cli with the redis extension and Laravel 8's queue components is
// installed: a failure in CI, a skip elsewhere. NeedPeer checks any major of the matrix.
func NeedPHP(t testing.TB) {
	t.Helper()
	phpOnce.Do(func() {
		if _, err := exec.LookPath("php"); err != nil {
			phpErr = fmt.Errorf("php not in PATH (apt-get install php-cli)")
			return
		}
		out, err := exec.Command("php", "-r",
			`require "Illuminate/Queue/autoload.php"; require "Illuminate/Redis/autoload.php"; require "Illuminate/Config/autoload.php";`+
				`echo (class_exists("Illuminate\\Queue\\Worker") && extension_loaded("redis") && class_exists("Illuminate\\Config\\Repository")) ? "ok" : "missing";`).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("ok")) {
			phpErr = fmt.Errorf("php-redis or php-illuminate-* missing: %s %v", bytes.TrimSpace(out), err)
		}
	})
	if phpErr != nil {
		Need(t, false, "%v", phpErr)
	}
}

// PHPEnv describes which Laravel release the PHP harness (testdata/php/bootstrap.php) boots
// and how it connects. Every script of testdata/php runs unchanged on every major:
//
//	out := testenv.PHPEnv{Major: 12, Redis: r, Prefix: p}.Run(t, stdin, "dispatch.php")
//
// Call NeedPeer(t, major) first (ForEachMajor does), so that a major that cannot boot is a
// failure in CI and a skip elsewhere rather than a PHP error.
type PHPEnv struct {
	// Major is the Laravel major: 0 or 8 for Debian's 8.83 packages, 5, 6, 7, 9, 10, 11, 12
	// or 13 for the shared peers (5.8.38, 6.20.44, 7.30.7, 9.52.22, 10.50.3, 11.56.0,
	// 12.67.0, 13.26.1).
	Major int
	// Tree picks another unpacked tree of that major: "13.4" boots 13.4.0 (LARAQ_PEER_TREE).
	Tree         string
	Redis        *Redis
	DB           int    // Redis database of the queue connection
	CacheDB      int    // Redis database of the cache connection (default 1 when zero and CacheDBSet is false)
	Prefix       string // connection prefix (options.prefix); "" is none on every major
	Client       string // "phpredis" (default) or "predis"
	CachePrefix  string // cache store prefix (default: the major's skeleton, PeerInfo.CachePrefix)
	RetryAfter   int    // seconds; default 90
	BlockFor     *int   // nil: never block
	FailedDB     string // sqlite path or mysql:// / pgsql:// spec for the failed-job provider and job_batches
	CacheStoreDB string // sqlite path or mysql:// / pgsql:// spec: the default cache store is the database store there
	Record       string // file the test jobs append records to
	Extra        map[string]string
}

// Environ returns the process environment for a PHP harness run.
func (e PHPEnv) Environ() []string {
	env := os.Environ()
	set := func(k, v string) { env = append(env, k+"="+v) }
	// Always set, so that a value inherited from the caller's shell never picks the release.
	set("LARAQ_PEER_MAJOR", strconv.Itoa(e.major()))
	set("LARAQ_PEER_TREE", e.Tree)
	if e.major() != 8 {
		dir, _ := peersDir() // NeedPeer reports the error; bootstrap_peer.php names what is missing
		set("LARAQ_PEERS_DIR", dir)
		set("LARAQ_PEER_HARNESS", filepath.Join(LaravelPeerDir(), "harness"))
	}
	if e.Redis != nil {
		set("LARAQ_REDIS_HOST", "127.0.0.1")
		set("LARAQ_REDIS_PORT", strconv.Itoa(e.Redis.Port))
	}
	set("LARAQ_REDIS_DB", strconv.Itoa(e.DB))
	cacheDB := e.CacheDB
	if cacheDB == 0 {
		cacheDB = 1
	}
	set("LARAQ_CACHE_DB", strconv.Itoa(cacheDB))
	set("LARAQ_REDIS_PREFIX", e.Prefix)
	if e.Client != "" {
		set("LARAQ_REDIS_CLIENT", e.Client)
	}
	if e.CachePrefix != "" {
		set("LARAQ_CACHE_PREFIX", e.CachePrefix)
	}
	if e.RetryAfter != 0 {
		set("LARAQ_RETRY_AFTER", strconv.Itoa(e.RetryAfter))
	}
	if e.BlockFor != nil {
		set("LARAQ_BLOCK_FOR", strconv.Itoa(*e.BlockFor))
	}
	if e.FailedDB != "" {
		set("LARAQ_FAILED_DB", e.FailedDB)
	}
	if e.CacheStoreDB != "" {
		set("LARAQ_CACHE_DATABASE", e.CacheStoreDB)
	}
	if e.Record != "" {
		set("LARAQ_RECORD", e.Record)
	}
	for k, v := range e.Extra {
		set(k, v)
	}
	return env
}

func (e PHPEnv) major() int {
	if e.Major == 0 {
		return 8
	}
	return e.Major
}

// Command builds (without starting) `php testdata/php/<script> args...`.
func (e PHPEnv) Command(script string, args ...string) *exec.Cmd {
	cmd := exec.Command("php", append([]string{Testdata("php", script)}, args...)...)
	cmd.Env = e.Environ()
	return cmd
}

// Run runs a harness script to completion with stdin and returns its stdout; a non-zero
// exit fails the test with the script's stderr.
func (e PHPEnv) Run(t testing.TB, stdin []byte, script string, args ...string) []byte {
	t.Helper()
	cmd := e.Command(script, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("php %s %s: %v\nstderr:\n%s\nstdout:\n%s", script, strings.Join(args, " "), err, stderr.String(), stdout.String())
	}
	return stdout.Bytes()
}
