package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

// TestWorkSeesRestartOfUnnamedVersion: the application's .env names no Laravel version
// and has none of the keys that tell the skeletons apart, so laraq assumes 11.x and its
// own restart key has no ":" after the cache prefix. Laravel 8's `queue:restart` (run by
// PHP) writes the 8.x key instead; the worker watches every version's key and exits 0,
// but not when a restart key of another cache prefix changes.
func TestWorkSeesRestartOfUnnamedVersion(t *testing.T) {
	testenv.NeedPHP(t)
	srv := testenv.RedisServer(t)
	ctx := context.Background()
	name := "Lq" + testenv.RandomName(4)
	slug := strings.ToLower(name)
	envFile := filepath.Join(t.TempDir(), ".env")
	content := fmt.Sprintf("APP_NAME=%s\nREDIS_HOST=127.0.0.1\nREDIS_PORT=%d\n", name, srv.Port)
	if err := os.WriteFile(envFile, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	// Laravel 8's skeleton for the same APP_NAME: slug_database_ + slug_cache + ":".
	php8 := testenv.PHPEnv{Redis: srv, Prefix: slug + "_database_", CachePrefix: slug + "_cache"}
	key8 := slug + "_database_" + slug + "_cache:illuminate:queue:restart"
	cache := srv.Client(t, 1)
	t.Cleanup(func() {
		keys, _ := testenv.Keys(context.Background(), cache, slug)
		if len(keys) > 0 {
			cache.Del(context.Background(), keys...)
		}
	})

	wctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	var out, errOut syncBuf
	done := make(chan int, 1)
	go func() {
		done <- Main(wctx, []string{"work", "--env-file", envFile, "--database", "null", "--sleep", "0.05",
			"--log-level", "debug", "--log-format", "text"},
			WithIO(strings.NewReader(""), &out, &errOut), WithGetenv(func(string) string { return "" }))
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(errOut.String(), "worker started") {
		select {
		case rc := <-done:
			t.Fatalf("worker exited with %d before starting:\n%s", rc, errOut.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("worker did not start:\n%s", errOut.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	log := errOut.String()
	// The assumed version is the default, so without the other schemes key8 would go unseen.
	if !strings.Contains(log, `release="11.x (guessed)" from=default`) || !strings.Contains(log, key8) {
		t.Fatalf("the log does not show the 8.x restart key watched next to the 11.x one:\n%s", log)
	}

	// A restart under a cache prefix of no scheme of this application changes nothing.
	testenv.PHPEnv{Redis: srv, Prefix: slug + "_database_", CachePrefix: slug + "_other"}.Run(t, nil, "queue_op.php", "restart")
	if v := cache.Get(ctx, slug+"_database_"+slug+"_other:illuminate:queue:restart").Val(); v == "" {
		t.Fatal("PHP wrote no unrelated restart key")
	}
	select {
	case rc := <-done:
		t.Fatalf("worker exited (%d) on an unrelated key:\n%s", rc, errOut.String())
	case <-time.After(2500 * time.Millisecond): // more than two signal reads
	}

	php8.Run(t, nil, "queue_op.php", "restart")
	if v := cache.Get(ctx, key8).Val(); v == "" {
		t.Fatalf("PHP did not write %s", key8)
	}
	select {
	case rc := <-done:
		if rc != 0 {
			t.Fatalf("worker exited %d after queue:restart:\n%s", rc, errOut.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("worker did not stop on Laravel 8's queue:restart:\n%s", errOut.String())
	}
	if !strings.Contains(errOut.String(), "queue restart signal received") {
		t.Errorf("no restart message in the log:\n%s", errOut.String())
	}
}
