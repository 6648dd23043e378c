package testenv

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
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
// installed: a failure in CI, a skip elsewhere.
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

// PHPEnv describes how the PHP harness (testdata/php/bootstrap.php) connects.
type PHPEnv struct {
	Redis       *Redis
	DB          int    // Redis database of the queue connection
	CacheDB     int    // Redis database of the cache connection (default 1 when zero and CacheDBSet is false)
	Prefix      string // connection prefix (options.prefix)
	Client      string // "phpredis" (default) or "predis"
	CachePrefix string // cache store prefix (default laravel_cache)
	RetryAfter  int    // seconds; default 90
	BlockFor    *int   // nil: never block
	FailedDB    string // sqlite path or mysql:// / pgsql:// spec for the failed-job provider
	Record      string // file the test jobs append records to
	Extra       map[string]string
}

// Environ returns the process environment for a PHP harness run.
func (e PHPEnv) Environ() []string {
	env := os.Environ()
	set := func(k, v string) { env = append(env, k+"="+v) }
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
	if e.Record != "" {
		set("LARAQ_RECORD", e.Record)
	}
	for k, v := range e.Extra {
		set(k, v)
	}
	return env
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
