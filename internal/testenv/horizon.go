package testenv

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// HorizonMajors are the Laravel majors laravel/horizon 5.29 supports among the peers
// (its composer.json: illuminate ^9.21|^10|^11).
var HorizonMajors = []int{10, 11}

// HorizonPHP runs testdata/php/horizon/op.php: laravel/horizon's own PHP code booted on
// the Laravel peer of one major (see testdata/php/horizon/bootstrap.php).
type HorizonPHP struct {
	Major         int      // 10 or 11
	Redis         *Redis   // the server; DB 0 for the queue and Horizon, DB 1 for the cache
	Prefix        string   // the queue connection prefix ("" for none)
	HorizonPrefix string   // horizon.prefix
	Silenced      []string // horizon.silenced
	Trim          map[string]int
	Extra         map[string]string
}

// Command builds `php testdata/php/horizon/op.php OP` with the environment the harness
// and op.php read. It fails the test (or skips outside CI) when PHP or the peers are
// missing.
func (h HorizonPHP) Command(t testing.TB, op string) *exec.Cmd {
	t.Helper()
	NeedPHP(t)
	peers := PeersDir(t)
	harness := filepath.Join(LaravelPeerDir(), "harness", "bootstrap.php")
	if _, err := os.Stat(harness); err != nil {
		Need(t, false, "Laravel peer harness: %v", err)
	}
	cmd := exec.Command("php", Testdata("php", "horizon", "op.php"), op)
	env := append(os.Environ(),
		"LARAQ_PEERS_DIR="+peers,
		"LARAQ_HARNESS="+harness,
		"LARAQ_PEER_MAJOR="+strconv.Itoa(h.Major),
		"LARAQ_REDIS_HOST=127.0.0.1",
		"LARAQ_REDIS_PORT="+strconv.Itoa(h.Redis.Port),
		"LARAQ_REDIS_DB=0",
		"LARAQ_CACHE_DB=1",
		"LARAQ_HORIZON_PREFIX="+h.HorizonPrefix,
	)
	prefix := h.Prefix
	if prefix == "" {
		prefix = "-"
	}
	env = append(env, "LARAQ_REDIS_PREFIX="+prefix)
	if h.Silenced != nil {
		b, _ := json.Marshal(h.Silenced)
		env = append(env, "LARAQ_HORIZON_SILENCED="+string(b))
	}
	if h.Trim != nil {
		b, _ := json.Marshal(h.Trim)
		env = append(env, "LARAQ_HORIZON_TRIM="+string(b))
	}
	for k, v := range h.Extra {
		env = append(env, k+"="+v)
	}
	cmd.Env = env
	return cmd
}

// Run runs op with in as JSON on stdin and decodes its JSON output into out (when not
// nil). A failing run fails the test with PHP's stderr.
func (h HorizonPHP) Run(t testing.TB, op string, in, out any) {
	t.Helper()
	stdin, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	cmd := h.Command(t, op)
	var stdout, stderr bytes.Buffer
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("php horizon/op.php %s (Laravel %d): %v\nstdin: %s\nstderr:\n%s\nstdout:\n%s", op, h.Major, err, stdin, stderr.String(), stdout.String())
	}
	if out != nil {
		d := json.NewDecoder(&stdout)
		d.UseNumber()
		if err := d.Decode(out); err != nil {
			t.Fatalf("php horizon/op.php %s: decoding %q: %v", op, stdout.String(), err)
		}
	}
}
