package encryption_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// peer is one Laravel release the interop tests run testdata/encryption/encrypter.php on.
type peer struct {
	name  string // subtest name
	major int    // 8: Debian's php-illuminate-* 8.83; 10–13: the shared peer trees
	tree  string // LARAQ_PEER_TREE, for a second tree of a major
}

var peers = []peer{
	{name: "8.83", major: 8},
	{name: "10", major: 10},
	{name: "11", major: 11},
	{name: "12", major: 12},
	{name: "13", major: 13},
	// 13.4.0 still has the 11.4–13.5 key loop that 13.6 replaced.
	{name: "13.4", major: 13, tree: "13.4"},
}

// phpProc is a running encrypter.php: requests go to its stdin, answers come back one
// JSON line each.
type phpProc struct {
	t       testing.TB
	mu      sync.Mutex
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	stderr  *bytes.Buffer
	laravel string // the release, as Config.Laravel takes it
	php     string // PHP_VERSION
	major   int
}

// phpResult is every field an answer may have.
type phpResult struct {
	OK               *bool          `json:"ok"`
	Value            string         `json:"value"`
	Payload          string         `json:"payload"`
	Serialized       string         `json:"serialized"`
	Class            string         `json:"class"`
	Message          string         `json:"message"`
	DecryptException bool           `json:"decryptException"`
	Decrypted        bool           `json:"decrypted"`
	Props            map[string]any `json:"props"`
	Appears          bool           `json:"appears"`
	RetryUntil       *int64         `json:"retryUntil"`
	IsArray          bool           `json:"isArray"`
	Fields           map[string]struct {
		Set, String, Empty bool
		Value              string
	} `json:"fields"`
	Version string `json:"version"`
	PHP     string `json:"php"`
}

func (r phpResult) ok() bool { return r.OK == nil || *r.OK }

// startPHP starts encrypter.php for p; it is stopped when the test ends.
func startPHP(t *testing.T, p peer) *phpProc {
	t.Helper()
	testenv.NeedPHP(t)
	env := os.Environ()
	if p.major >= 10 {
		harness := filepath.Join(testenv.LaravelPeerDir(), "harness", "autoload.php")
		_, err := os.Stat(harness)
		testenv.Need(t, err == nil, "Laravel peer harness: %v", err)
		env = append(env, "LARAQ_HARNESS="+harness, "LARAQ_PEERS_DIR="+testenv.PeersDir(t),
			"LARAQ_PEER_MAJOR="+strconv.Itoa(p.major), "LARAQ_PEER_TREE="+p.tree)
	}
	cmd := exec.Command("php", testenv.Testdata("encryption", "encrypter.php"))
	cmd.Env = env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &bytes.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("php: %v", err)
	}
	proc := &phpProc{t: t, cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), stderr: stderr, major: p.major}
	t.Cleanup(func() {
		_ = in.Close()
		_ = cmd.Wait()
	})
	v := proc.call(map[string]any{"op": "version"})
	proc.php = v.PHP
	proc.laravel = strings.TrimPrefix(v.Version, "debian-")
	if p.major >= 10 && !strings.HasPrefix(v.Version, "v"+strconv.Itoa(p.major)+".") {
		t.Fatalf("peer %s reports version %q", p.name, v.Version)
	}
	return proc
}

// call sends one request and returns the answer.
func (p *phpProc) call(req map[string]any) phpResult {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	line, err := json.Marshal(req)
	if err != nil {
		p.t.Fatal(err)
	}
	if _, err := p.in.Write(append(line, '\n')); err != nil {
		p.t.Fatalf("php write: %v\n%s", err, p.stderr)
	}
	ans, err := p.out.ReadBytes('\n')
	if err != nil {
		p.t.Fatalf("php read: %v\nstderr: %s", err, p.stderr)
	}
	var r phpResult
	if err := json.Unmarshal(ans, &r); err != nil {
		p.t.Fatalf("php answer %q: %v", ans, err)
	}
	return r
}

// keyReq is the key part of a request.
func keyReq(op, cipher string, key []byte, previous ...[]byte) map[string]any {
	prev := []string{}
	for _, k := range previous {
		prev = append(prev, b64(k))
	}
	return map[string]any{"op": op, "cipher": cipher, "key": b64(key), "previous": prev}
}

func (p *phpProc) encrypt(cipher string, key, value []byte, serialize bool) string {
	p.t.Helper()
	req := keyReq("encrypt", cipher, key)
	req["value"], req["serialize"] = b64(value), serialize
	r := p.call(req)
	if !r.ok() || r.Payload == "" {
		p.t.Fatalf("php encrypt: %s: %s", r.Class, r.Message)
	}
	return r.Payload
}

func (p *phpProc) decrypt(cipher string, key []byte, previous [][]byte, payload string, unserialize bool) phpResult {
	p.t.Helper()
	req := keyReq("decrypt", cipher, key, previous...)
	req["payload"], req["unserialize"] = payload, unserialize
	return p.call(req)
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

func unb64(t testing.TB, s string) []byte {
	t.Helper()
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatalf("base64 %q: %v", s, err)
	}
	return b
}
