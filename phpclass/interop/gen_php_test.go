package interop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/cli"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpclass"
	"github.com/laraq/laraq/phpser"
)

// TestMain stops the shared redis-server after the tests.
func TestMain(m *testing.M) { testenv.Main(m) }

// appKey is the harness's APP_KEY on every release (LARAQ_APP_KEY's default).
const appKey = "base64:bGFyYXEtcGVlci10ZXN0LWtleS0zMi1ieXRlcyEhISE="

// now is the clock of every dispatch: PHP's Carbon::setTestNow and Go's WithClock.
var now = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)

// sample is one object of testdata/php/jobs_classes_samples.json: a dispatch.php request.
type sample struct {
	Name  string          `json:"name"`
	Class string          `json:"class"`
	Props json.RawMessage `json:"props,omitempty"`
	Args  json.RawMessage `json:"args,omitempty"`
}

func samples(t *testing.T) []sample {
	t.Helper()
	b, err := os.ReadFile(testenv.Testdata("php", "jobs_classes_samples.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []sample
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// methodAnswers are what `laraq dispatch --classes` is told of the PHP methods that name
// a unique lock, per sample: UniqueMethodJob's uniqueId() and uniqueFor() (which 8.x does
// not call: its lock lasts the uniqueFor property, here none).
func methodAnswers(major int, name string) []string {
	switch {
	case name != "unique-method":
		return nil
	case major < 9:
		return []string{"--unique-id", "order-9"}
	}
	return []string{"--unique-id", "order-9", "--unique-for", "45"}
}

// ports are what a person writes for the PHP methods gen leaves to port (the Go bodies
// of the methods that panic until written), keyed by the method.
var ports = map[string]string{
	`App\Jobs\Classes\MethodsJob::tries()`:          "return 5",
	`App\Jobs\Classes\MethodsJob::backoff()`:        "return []int{1, 5}",
	`App\Jobs\Classes\MethodsJob::retryUntil()`:     fmt.Sprintf("return time.Unix(%d, 0).AddDate(10, 0, 0)", now.Unix()),
	`App\Jobs\Classes\MethodsJob::displayName()`:    `return "Methods " + m.Label.Str()`,
	`App\Jobs\Classes\UniqueMethodJob::uniqueId()`:  `return "order-" + itoa(u.OrderID)`,
	`App\Jobs\Classes\UniqueMethodJob::uniqueFor()`: "return 45 * time.Second",
}

// program is the main package built beside the generated types: it decodes each PHP
// command into its class's Go type, prints the payload Go's Dispatcher prepares for that
// value, and dispatches it for real (a unique job takes its lock).
const program = `package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/encryption"
	"github.com/laraq/laraq/phpser"
	"github.com/redis/go-redis/v9"
)

// itoa is PHP's (string) of an int property, for the ported methods.
func itoa(v *phpser.Value) string { return strconv.FormatInt(v.Int(), 10) }

type input struct {
	Release, Redis, Prefix, CachePrefix, AppKey string
	Now                                         int64
	Cases                                       []struct{ Name, Class, Command string }
}

func decode[T any](cmd string) (any, error) {
	var v T
	err := phpser.Unmarshal([]byte(cmd), &v)
	return v, err
}

func main() {
	var in input
	if err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
		panic(err)
	}
	rel, err := laraq.ParseRelease(in.Release)
	if err != nil {
		panic(err)
	}
	key, err := encryption.ParseKey(in.AppKey)
	if err != nil {
		panic(err)
	}
	enc, err := encryption.New(key, "AES-256-CBC")
	if err != nil {
		panic(err)
	}
	client := redis.NewClient(&redis.Options{Addr: in.Redis})
	conn := &laraq.Connection{Client: client, Prefix: in.Prefix, Release: rel, Encrypter: enc, Cache: laraq.CacheStore{Prefix: in.CachePrefix}}
	clock := time.Unix(in.Now, 0)
	n := 0
	d, err := laraq.NewDispatcher(conn, laraq.WithClock(func() time.Time { return clock }),
		laraq.WithIDs(func() string { n++; return fmt.Sprintf("go-%d", n) }, func() string { return "uuid" }))
	if err != nil {
		panic(err)
	}
	out := json.NewEncoder(os.Stdout)
	for _, c := range in.Cases {
		res := map[string]string{"name": c.Name}
		v, err := decoders[c.Class](c.Command)
		if err == nil {
			var m *laraq.Message
			if m, err = d.Prepare(v); err == nil {
				res["payload"] = string(m.Payload)
				res["id"], err = d.Dispatch(context.Background(), v)
			}
		}
		if err != nil {
			res["error"] = err.Error()
		}
		_ = out.Encode(res)
	}
}
`

// TestGeneratedTypesSpeakForTheClasses: on every release, the facts PHP gives of the
// classes of jobs_classes.php make Go types (laraq gen) that compile; each object PHP
// dispatched decodes into its type, and Go's dispatch of that value is PHP's payload
// byte for byte (uuid and id aside, encrypted commands compared decrypted); Laravel's
// Worker runs what Go queued and sees the very properties it sees in PHP's own jobs; the
// unique locks Go takes are those the worker releases. And `laraq dispatch --classes`
// with the same properties given by plain name writes PHP's bytes too (13.x attributes
// read from the facts), except where PHP computes metadata in methods (said in a
// warning); its unique locks too are those the worker releases.
func TestGeneratedTypesSpeakForTheClasses(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		testenv.Since(t, major, testenv.ClassSamples)
		ctx := context.Background()
		peer := testenv.Peer(t, major)
		release := releaseOf(t, major)
		var classes []string
		for _, s := range samples(t) {
			classes = append(classes, s.Class)
		}
		manifest, m := extractManifest(t, major, classes...)

		// PHP dispatches every sample.
		phpPrefix, goPrefix, cliPrefix := testenv.Prefix(t), testenv.Prefix(t), testenv.Prefix(t)
		cacheDB := 2 + major // unique locks of one release must not meet another's
		var reqs []string
		for _, s := range samples(t) {
			b, _ := json.Marshal(s)
			reqs = append(reqs, string(b))
		}
		penv := func(prefix, records string) testenv.PHPEnv {
			return testenv.PHPEnv{Major: major, Redis: srv, Prefix: prefix, CacheDB: cacheDB, Record: records, FailedDB: testenv.SQLite(t)}
		}
		php := penv(phpPrefix, "").Dispatch(t, []string{fmt.Sprint("--now=", now.Unix())}, reqs...)

		// Go: the generated types, built with a program that decodes and dispatches.
		bin := buildGenerated(t, m)
		type goCase struct{ Name, Class, Command string }
		var cases []goCase
		for i, s := range samples(t) {
			cases = append(cases, goCase{s.Name, s.Class, plainCommand(t, php[i].Payload)})
		}
		// PeerInfo's cache prefix is RedisStore's, with the ':' of 8.83 and 10 appended; the
		// cache scheme of the connection adds that itself.
		cachePrefix := peer.CachePrefix
		if major <= 10 {
			cachePrefix = strings.TrimSuffix(cachePrefix, ":")
		}
		in, _ := json.Marshal(map[string]any{"Release": release, "Redis": srv.Addr, "Prefix": goPrefix, "CachePrefix": cachePrefix,
			"AppKey": appKey, "Now": now.Unix(), "Cases": cases})
		cmd := exec.Command(bin)
		cmd.Stdin = bytes.NewReader(in)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("the generated program: %v\n%s", err, stderrOf(err))
		}
		for i, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
			var res map[string]string
			if err := json.Unmarshal(line, &res); err != nil {
				t.Fatal(err)
			}
			name := samples(t)[i].Name
			if res["error"] != "" {
				t.Errorf("%s: Go: %s", name, res["error"])
				continue
			}
			samePayload(t, "go "+name, res["payload"], php[i].Payload, false)
		}
		// The locks Go took are held until Laravel's worker runs the jobs.
		if locks := uniqueLocks(t, srv, goPrefix); len(locks) != 2 {
			t.Errorf("Go's dispatch holds %d unique locks, want 2: %v", len(locks), locks)
		}

		// laraq dispatch --classes, the properties given by plain name as 'laraq decode'
		// shows them.
		differs := map[string]bool{"methods": true} // tries(), backoff(), retryUntil(), displayName()
		for i, s := range samples(t) {
			props := readableProps(t, cases[i].Command)
			var stdout, stderr bytes.Buffer
			rc := cli.Main(ctx, append([]string{"dispatch", "--redis", "redis://" + srv.Addr + "/0", "--prefix", cliPrefix,
				"--laravel-version", release, "--classes", manifest, s.Class, "--props", "-"}, methodAnswers(major, s.Name)...),
				cli.WithIO(bytes.NewReader(props), &stdout, &stderr), cli.WithGetenv(func(k string) string {
					if k == "LARAQ_APP_KEY" {
						return appKey
					}
					return ""
				}))
			if rc != 0 {
				t.Errorf("%s: laraq dispatch --classes: exit %d: %s", s.Name, rc, stderr.String())
				continue
			}
			id := strings.TrimSpace(stdout.String())
			if strings.HasPrefix(s.Name, "unique-") {
				// The lock is in the payload (the owner, 11.39+'s hidden Context), which
				// dispatchToQueue here does not take: TestDispatchClassesTakesUniqueLocks
				// compares these with PHP's dispatch().
				continue
			}
			if differs[s.Name] {
				if !strings.Contains(stderr.String(), "warning:") {
					t.Errorf("%s: no warning that PHP's methods or attributes are not run: %q", s.Name, stderr.String())
				}
				continue
			}
			// The command line runs on the real clock: createdAt aside.
			samePayload(t, "cli "+s.Name, queuedPayload(t, srv, cliPrefix, id), php[i].Payload, true)
		}
		if locks := uniqueLocks(t, srv, cliPrefix); len(locks) != 2 {
			t.Errorf("laraq dispatch --classes holds %d unique locks, want 2: %v", len(locks), locks)
		}
		if t.Failed() {
			return
		}

		// Laravel's worker runs all three sets; each job holds the same properties. A job
		// without InteractsWithQueue knows no job id, so the records are compared by class.
		records := map[string]map[string][]string{} // prefix → class → props, sorted
		for _, prefix := range []string{phpPrefix, goPrefix, cliPrefix} {
			file := filepath.Join(t.TempDir(), "records.jsonl")
			wout := penv(prefix, file).Run(t, nil, "work.php", "--stop-when-empty", "--sleep=0", fmt.Sprint("--now=", now.Unix()))
			if n := strings.Count(string(wout), "Processed:"); n != len(samples(t)) || strings.Contains(string(wout), "Failed:") {
				t.Errorf("Laravel's worker processed %d jobs, want %d:\n%s", n, len(samples(t)), wout)
			}
			records[prefix] = map[string][]string{}
			for _, r := range testenv.ReadRecords(t, file) {
				records[prefix][r.Class] = append(records[prefix][r.Class], recordProps(r.Fields["props"]))
			}
			for _, props := range records[prefix] {
				sort.Strings(props)
			}
		}
		for _, class := range uniq(classes) {
			want := strings.Join(records[phpPrefix][class], "\n")
			if got := strings.Join(records[goPrefix][class], "\n"); got != want {
				t.Errorf("%s: Laravel saw\n%s\nin Go's jobs, and\n%s\nin PHP's", class, got, want)
			}
			if got := strings.Join(records[cliPrefix][class], "\n"); got != want {
				t.Errorf("%s: Laravel saw\n%s\nin laraq dispatch's jobs, and\n%s\nin PHP's", class, got, want)
			}
		}
		if locks := uniqueLocks(t, srv, goPrefix); len(locks) != 0 {
			t.Errorf("unique locks left after Laravel ran the jobs (Go locked under another key than PHP releases): %v", locks)
		}
		if locks := uniqueLocks(t, srv, cliPrefix); len(locks) != 0 {
			t.Errorf("unique locks left after Laravel ran laraq dispatch's jobs (locked under another key than PHP releases): %v", locks)
		}
	})
}

// buildGenerated writes gen's types and the program into a package of the module and
// builds it, with the ported methods filled in.
func buildGenerated(t *testing.T, m *phpclass.Manifest) string {
	t.Helper()
	g, err := phpclass.Generate(m, phpclass.GenOptions{Package: "main"})
	if err != nil {
		t.Fatal(err)
	}
	src := string(g.Source)
	for _, todo := range g.Todo {
		body, ok := ports[todo]
		if !ok {
			t.Fatalf("no port for %s", todo)
		}
		stub := "panic(" + strconv.Quote("laraq gen: port "+todo+" to Go") + ")"
		if !strings.Contains(src, stub) {
			t.Fatalf("gen wrote no stub %s", stub)
		}
		src = strings.Replace(src, stub, body, 1)
	}
	var decoders []string
	for class, name := range g.Types {
		decoders = append(decoders, fmt.Sprintf("\t%s: decode[%s],\n", strconv.Quote(class), name))
	}
	sort.Strings(decoders)
	dir, err := os.MkdirTemp(filepath.Join(testenv.RepoRoot(), "phpclass", "interop"), "_gen")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	files := map[string]string{
		"jobs.go": src,
		"main.go": program + "\nvar decoders = map[string]func(string) (any, error){\n" + strings.Join(decoders, "") + "}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(t.TempDir(), "gen")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the generated types do not build: %v\n%s\n%s", err, out, src)
	}
	vet := exec.Command("go", "vet", ".")
	vet.Dir = dir
	if out, err := vet.CombinedOutput(); err != nil {
		t.Fatalf("go vet of the generated types: %v\n%s", err, out)
	}
	return bin
}

// plainCommand is the serialized command of a payload, decrypted when encrypted.
func plainCommand(t *testing.T, raw string) string {
	t.Helper()
	env, err := payload.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(env.Command, "O:") {
		return env.Command
	}
	plain, err := testenv.DecryptLaravel(appKey, env.Command)
	if err != nil {
		t.Fatal(err)
	}
	v, err := phpser.DecodeString(plain)
	if err != nil {
		t.Fatal(err)
	}
	return v.Str()
}

// readableProps are the properties of a command as 'laraq decode' shows them: plain
// names, visibility left out.
func readableProps(t *testing.T, command string) []byte {
	t.Helper()
	v, err := phpser.DecodeString(command)
	if err != nil {
		t.Fatal(err)
	}
	b, err := phpser.MarshalReadable(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// samePayload compares two payloads with uuid and id (and createdAt when told) left out
// and encrypted commands decrypted.
func samePayload(t *testing.T, what, got, want string, noCreatedAt bool) {
	t.Helper()
	g, w := normalized(t, got, noCreatedAt), normalized(t, want, noCreatedAt)
	if g != w {
		t.Errorf("%s: payload\n%s\nwant (PHP's)\n%s", what, g, w)
	}
}

func normalized(t *testing.T, raw string, noCreatedAt bool) string {
	t.Helper()
	doc, err := payload.DecodeValue([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"uuid", "id", "createdAt"} {
		if k == "createdAt" && !noCreatedAt {
			continue
		}
		if doc.Get(k) != nil {
			doc.Set(k, payload.Value{Kind: payload.KindString, Str: "…"})
		}
	}
	if data := doc.Get("data"); data != nil && data.Get("command") != nil {
		data.Set("command", payload.Value{Kind: payload.KindString, Str: plainCommand(t, raw)})
	}
	b, err := doc.AppendJSON(nil, payload.JSONUnescapedUnicode)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// queuedPayload finds the job with this id on queues:default.
func queuedPayload(t *testing.T, srv *testenv.Redis, prefix, id string) string {
	t.Helper()
	items, err := srv.Client(t, 0).LRange(context.Background(), prefix+"queues:default", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range items {
		if env, err := payload.Parse([]byte(it)); err == nil && env.ID == id {
			return it
		}
	}
	t.Fatalf("job %s is not on %squeues:default", id, prefix)
	return ""
}

// uniqueLocks are the unique-job locks under a prefix.
func uniqueLocks(t *testing.T, srv *testenv.Redis, prefix string) []string {
	t.Helper()
	keys, err := srv.Client(t, 0).Keys(context.Background(), testenv.EscapeGlob(prefix)+"*laravel_unique_job*").Result()
	if err != nil {
		t.Fatal(err)
	}
	return keys
}

func uniq(xs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

// recordProps is a record's properties as JSON, the owner of a unique lock left out: Go's
// dispatch takes the lock (13.24+ writes its owner into uniqueLockOwner), PHP's
// dispatchToQueue, which the byte comparison needs, takes none.
func recordProps(props any) string {
	list, _ := props.([]any)
	for _, p := range list {
		if m, ok := p.(map[string]any); ok && m["k"] == "uniqueLockOwner" {
			m["v"] = "(the lock's owner)"
		}
	}
	b, _ := json.Marshal(props)
	return string(b)
}
