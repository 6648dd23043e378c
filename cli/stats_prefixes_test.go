package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
)

// TestStatsShowsPrefixes: a 13.x application's .env on its own (not in its root, so
// nothing tells 11.x from 13.x) makes laraq guess 11.x and laravel_database_, while PHP
// writes under laravel-database-. `stats` says where the queue keys are and how to pick
// them, in text and JSON, and says nothing more once the prefix is named.
func TestStatsShowsPrefixes(t *testing.T) {
	srv, err := testenv.StartRedis() // a server of its own: stats lists every prefix on it
	if err != nil {
		testenv.Need(t, false, "%v", err)
	}
	t.Cleanup(srv.Stop)
	ctx := context.Background()
	env, err := os.ReadFile(filepath.Join("..", "laravel", "testdata", "skeletons", "laravel-13", ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	envPath := filepath.Join(t.TempDir(), ".env")
	if err := os.WriteFile(envPath, append(env, []byte("REDIS_PORT="+strconv.Itoa(srv.Port)+"\n")...), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct{ prefix, queue string }{
		{"laravel-database-", "default"}, {"laravel-database-", "emails"}, {"other'app:", "default"},
	} {
		r, err := rdb.New(srv.Client(t, 0), rdb.Options{Prefix: q.prefix})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.Push(ctx, q.queue, []byte(`{"uuid":"u","job":"x","attempts":0}`)); err != nil {
			t.Fatal(err)
		}
	}

	out, errOut, rc := opsCLI(t, "", nil, "stats", "--env-file", envPath)
	want := `No queues under the prefix "laravel_database_".

Queue keys in database 0 of this Redis, by prefix (the Laravel release is guessed: 11.x (guessed), inferred from .env keys CACHE_STORE, BROADCAST_CONNECTION, APP_MAINTENANCE_DRIVER; the prefix "laravel_database_" follows from it):
  laravel-database-   default, emails
  'other'\''app:'     default
Hint: --prefix laravel-database- picks another (or --laravel-root DIR, to read the application's config files and framework).
`
	if rc != 0 || out != want {
		t.Errorf("stats: %d %q\n%s\nwant:\n%s", rc, errOut, out, want)
	}

	out, _, rc = opsCLI(t, "", nil, "stats", "--env-file", envPath, "--json")
	var got struct {
		Prefix   string        `json:"prefix"`
		Prefixes []prefixStats `json:"prefixes"`
	}
	if err := json.Unmarshal([]byte(out), &got); rc != 0 || err != nil || len(got.Prefixes) != 2 ||
		got.Prefixes[0].Prefix != "laravel-database-" || strings.Join(got.Prefixes[0].Queues, ",") != "default,emails" || got.Prefixes[0].InUse {
		t.Errorf("--json: %d %v %s", rc, err, out)
	}

	// The prefix it suggests shows the queues, and a named prefix needs no list.
	out, _, rc = opsCLI(t, "", nil, "stats", "--env-file", envPath, "--prefix", "laravel-database-")
	if rc != 0 || !strings.Contains(out, "| default |") || !strings.Contains(out, "| emails  |") || strings.Contains(out, "by prefix") {
		t.Errorf("with --prefix: %d\n%s", rc, out)
	}
	// A named prefix that holds nothing still gets the list.
	out, _, _ = opsCLI(t, "", nil, "stats", "--env-file", envPath, "--prefix", "nothing:")
	if !strings.Contains(out, `by prefix (the prefix "nothing:" (--prefix) holds no queue)`) {
		t.Errorf("empty named prefix:\n%s", out)
	}
}

// TestRedisFlagDatabaseWarning: --redis with a database moves the cache connection as
// Laravel's REDIS_URL does, and the start of the command says so, naming the flag.
func TestRedisFlagDatabaseWarning(t *testing.T) {
	srv := testenv.RedisServer(t)
	env := envFile(t, "APP_NAME=Shop", "REDIS_CACHE_DB=2", "CACHE_STORE=redis", "QUEUE_CONNECTION=redis")
	url := "redis://127.0.0.1:" + strconv.Itoa(srv.Port) + "/3"
	_, errOut, rc := opsCLI(t, "", nil, "stats", "--env-file", env, "--redis", url, "--queue", "default")
	if rc != 0 || !strings.Contains(errOut, `laraq: warning: --redis names database 3: as Laravel does with a REDIS_URL, laraq uses it for the cache connection too, but the application's cache connection "cache" is on database 2 (`) ||
		!strings.Contains(errOut, "set LARAQ_REDIS_CACHE_DB=2") {
		t.Errorf("rc %d stderr %q", rc, errOut)
	}
	_, errOut, _ = opsCLI(t, "", map[string]string{"LARAQ_REDIS_CACHE_DB": "2"}, "stats", "--env-file", env, "--redis", url, "--queue", "default")
	if strings.Contains(errOut, "names database") {
		t.Errorf("with LARAQ_REDIS_CACHE_DB: %q", errOut)
	}
}
