package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// dispatchCase is one `laraq dispatch` run and the same dispatch done by Laravel.
type dispatchCase struct {
	name  string
	class string
	props string   // hand-written, the way a user writes a props file
	args  []string // extra flags
	queue string   // where the job must land
	delay int64    // > 0: must land in :delayed, about now + delay
	php   map[string]any
}

func dispatchCases() []dispatchCase {
	return []dispatchCase{
		{name: "visibility", class: `App\Jobs\VisibilityJob`, queue: "default",
			props: `{"pub": 1, "\u0000*\u0000prot": [1.5, "two"], "\u0000App\\Jobs\\VisibilityJob\u0000priv": {"k": true}}`},
		{name: "nested", class: `App\Jobs\NestedJob`, queue: "default",
			props: `{
  "list": [1, [2, [3, "drei"]], {"a": null}],
  "map": {"z": 1, "a": 2, "-5": "neg", "007": "bond"},
  "object": {"@class": "App\\Support\\Address", "street": "Hauptstraße 1",
             "\u0000*\u0000zip": "10115", "\u0000App\\Support\\Address\u0000geo": [52.52, 13.405]},
  "deep": {"l1": {"l2": {"l3": []}}, "@@at": "escaped"},
  "text": "日本語 \u00e9 \ud83d\ude00 </script> \"q\" \\ \u2028 tab\there"
}`},
		{name: "numbers", class: `App\Jobs\NumbersJob`, queue: "default",
			props: `{"negZero": -0.0, "big": 1e100, "tenth": 0.1, "maxInt": 9223372036854775807,
  "minInt": -9223372036854775808, "floats": [0.30000000000000004, 5e-324, 1.0, 1e15, -1.5E-7]}`},
		{name: "enum", class: `App\Jobs\EnumJob`, queue: "default",
			props: `{"status": {"@enum": "App\\Enums\\Status:Active"}, "suit": {"@enum": "App\\Enums\\Suit:Spades"}, "typed": null}`},
		{name: "carbon", class: `App\Jobs\CarbonJob`, queue: "default",
			props: `{"when": {"@class": "Illuminate\\Support\\Carbon", "date": "2022-11-01 10:00:00.000000", "timezone_type": 3, "timezone": "UTC"},
  "date": {"@class": "DateTimeImmutable", "date": "2024-02-29 23:59:59.500000", "timezone_type": 1, "timezone": "+02:00"}}`},
		{name: "model", class: `App\Jobs\ModelJob`, queue: "default",
			props: `{"user": {"@class": "Illuminate\\Contracts\\Database\\ModelIdentifier", "class": "App\\Models\\User", "id": 4, "relations": [], "connection": "laraq_models"}, "note": "n"}`},
		{name: "meta", class: `App\Jobs\MetaJob`, queue: "default",
			props: `{"tries": 3, "maxExceptions": 2, "backoff": [1, 5, 10], "timeout": 20, "failOnTimeout": true,
  "retryUntil": {"@class": "Illuminate\\Support\\Carbon", "date": "2030-01-01 00:00:00.000000", "timezone_type": 3, "timezone": "UTC"}, "label": "m"}`},
		{name: "queue-prop", class: `App\Jobs\PlainJob`, queue: "emails",
			props: `{"name": "p", "count": 1, "ratio": 1.5, "flag": true, "nothing": null, "tags": [], "meta": {}, "queue": "emails"}`},
		{name: "flags", class: `App\Jobs\PlainJob`, queue: "high", delay: 1, args: []string{"--queue", "high", "--delay", "1"},
			props: `{"name": "f", "count": -1, "ratio": 0.0, "flag": false, "nothing": null, "tags": ["x"], "meta": {"k": "v"}}`,
			php:   map[string]any{"queue": "high", "delay": 1}},
		{name: "delay-prop", class: `App\Jobs\ChainStep`, queue: "default", delay: 1, props: `{"step": 9, "delay": 1}`},
		{name: "full-reverse", class: `App\Jobs\ReverseTraitsJob`, queue: "default",
			props: `{"userId": 5, "connection": null, "queue": null, "chainConnection": null, "chainQueue": null,
  "chainCatchCallbacks": null, "delay": null, "afterCommit": null, "middleware": [], "chained": [], "job": null}`},
		{name: "object-form", class: "", queue: "default",
			props: `{"@class": "App\\Jobs\\ChainStep", "step": 3}`},
	}
}

// TestDispatchMatchesLaravel runs `laraq dispatch` on hand-written properties and
// Laravel's own dispatcher on the same object, compares the payloads byte for byte
// (uuid and id aside), and lets Laravel's Worker run all of them.
func TestDispatchMatchesLaravel(t *testing.T) {
	testenv.NeedPHP(t)
	r := testenv.RedisServer(t)
	ctx := context.Background()
	client := r.Client(t, 0)
	prefix := testenv.Prefix(t)
	redisURL := fmt.Sprintf("redis://%s/0", r.Addr)
	env := testenv.PHPEnv{Redis: r, Prefix: prefix, Record: filepath.Join(t.TempDir(), "records.jsonl")}

	cases := dispatchCases()
	goIDs := make([]string, len(cases))
	var reqs []any
	for i, c := range cases {
		// The release is named: these payloads are compared with Laravel 8.83's bytes.
		args := []string{"dispatch", "--redis", redisURL, "--prefix", prefix, "--laravel-version", "8.83"}
		if c.class != "" {
			args = append(args, c.class)
		}
		args = append(args, "--props", "-")
		args = append(args, c.args...)
		out, errOut, rc := runCLI(t, []byte(c.props), args...)
		if rc != 0 {
			t.Fatalf("%s: laraq %s: exit %d: %s", c.name, strings.Join(args, " "), rc, errOut)
		}
		goIDs[i] = strings.TrimSpace(out)
		if len(goIDs[i]) != 32 {
			t.Fatalf("%s: printed %q, want a 32-character id", c.name, out)
		}
		class := c.class
		props := json.RawMessage(c.props)
		if class == "" {
			var top map[string]any
			_ = json.Unmarshal(props, &top)
			class = top["@class"].(string)
		}
		req := map[string]any{"class": class, "props": props}
		for k, v := range c.php {
			req[k] = v
		}
		reqs = append(reqs, req)
	}
	now := time.Now().Unix()
	php := phpDispatchLines(t, env, reqs)
	for i, c := range cases {
		goPayload, delayed, score := findPayload(t, client, prefix, c.queue, goIDs[i])
		if goPayload == nil {
			t.Errorf("%s: job %s not found in queue %s", c.name, goIDs[i], c.queue)
			continue
		}
		if delayed != (c.delay > 0) || (delayed && (score < now+c.delay-2 || score > now+c.delay+2)) {
			t.Errorf("%s: delayed=%v score=%d, want delay %d from %d", c.name, delayed, score, c.delay, now)
		}
		p := php[i]
		if p.Queue != c.queue || p.Delayed != delayed {
			t.Errorf("%s: Laravel queued on %s (delayed %v)", c.name, p.Queue, p.Delayed)
		}
		sameBytesExceptIDs(t, c.name, goPayload, []byte(p.Payload))
	}

	// Feeding `laraq decode` output back reproduces a job with public properties.
	decoded, errOut, rc := runCLI(t, []byte(php[7].Payload), "decode")
	if rc != 0 {
		t.Fatalf("decode: %s", errOut)
	}
	out, errOut, rc := runCLI(t, []byte(decoded), "dispatch", "--redis", redisURL, "--prefix", prefix, "--laravel-version", "8.83", "--payload", "-")
	if rc != 0 {
		t.Fatalf("dispatch of decode output: %s", errOut)
	}
	again, _, _ := findPayload(t, client, prefix, "emails", strings.TrimSpace(out))
	sameBytesExceptIDs(t, "decode output fed back", again, []byte(php[7].Payload))

	// Laravel's worker runs everything; the Go-dispatched twin of each job must arrive
	// exactly like the PHP-dispatched one.
	total := 2*len(cases) + 1
	time.Sleep(1100 * time.Millisecond) // let the 1 s delays expire
	wout := runPHPWorker(t, env, "--queue=default,high,emails", fmt.Sprintf("--max-jobs=%d", total), "--sleep=0.1")
	if n := strings.Count(wout, "Processed:"); n != total {
		t.Fatalf("worker processed %d jobs, want %d:\n%s", n, total, wout)
	}
	recs := readJobRecords(t, env.Record)
	byID := map[string]jobRecord{}
	for _, rc := range recs {
		byID[rc.ID] = rc
	}
	for i, c := range cases {
		g, ok1 := byID[goIDs[i]]
		p, ok2 := byID[php[i].ID]
		if !ok1 || !ok2 {
			t.Errorf("%s: did not run (go %v, php %v)", c.name, ok1, ok2)
			continue
		}
		if string(g.Props) != string(p.Props) || g.Class != p.Class || g.Queue != p.Queue {
			t.Errorf("%s: PHP received\n%s\nfrom laraq, and\n%s\nfrom Laravel", c.name, g.Props, p.Props)
		}
	}
	keys, err := testenv.Keys(ctx, client, prefix)
	if err != nil || len(keys) != 0 {
		t.Errorf("keys left: %v %v", keys, err)
	}
}

type phpLine struct {
	ID      string `json:"id"`
	Queue   string `json:"queue"`
	Payload string `json:"payload"`
	Delayed bool   `json:"delayed"`
	Error   string `json:"error"`
}

func phpDispatchLines(t *testing.T, env testenv.PHPEnv, reqs []any) []phpLine {
	t.Helper()
	var in bytes.Buffer
	for _, r := range reqs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		in.Write(b)
		in.WriteByte('\n')
	}
	out := env.Run(t, in.Bytes(), "dispatch.php")
	var res []phpLine
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var l phpLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Error != "" {
			t.Fatalf("dispatch.php: %s %v", sc.Text(), err)
		}
		res = append(res, l)
	}
	if len(res) != len(reqs) {
		t.Fatalf("dispatch.php answered %d of %d", len(res), len(reqs))
	}
	return res
}

// findPayload returns the payload with this id from queues:NAME or its :delayed set.
func findPayload(t *testing.T, c *redis.Client, prefix, queue, id string) (p []byte, delayed bool, score int64) {
	t.Helper()
	ctx := context.Background()
	needle := `"id":"` + id + `"`
	list, err := c.LRange(ctx, prefix+"queues:"+queue, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range list {
		if strings.Contains(s, needle) {
			return []byte(s), false, 0
		}
	}
	zs, err := c.ZRangeWithScores(ctx, prefix+"queues:"+queue+":delayed", 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, z := range zs {
		if s := z.Member.(string); strings.Contains(s, needle) {
			return []byte(s), true, int64(z.Score)
		}
	}
	return nil, false, 0
}

func sameBytesExceptIDs(t *testing.T, what string, got, want []byte) {
	t.Helper()
	ids := func(b []byte) (string, string) {
		v, err := payload.DecodeValue(b)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v.Get("uuid").Str, v.Get("id").Str
	}
	gu, gi := ids(got)
	wu, wi := ids(want)
	norm := bytes.Replace(want, []byte(`"uuid":"`+wu+`"`), []byte(`"uuid":"`+gu+`"`), 1)
	norm = bytes.Replace(norm, []byte(`"id":"`+wi+`"`), []byte(`"id":"`+gi+`"`), 1)
	if !bytes.Equal(got, norm) {
		i := 0
		for i < len(got) && i < len(norm) && got[i] == norm[i] {
			i++
		}
		lo := max(0, i-60)
		t.Errorf("%s: differs from Laravel's payload at byte %d:\nlaraq:   …%q\nLaravel: …%q", what, i, got[lo:min(len(got), i+100)], norm[lo:min(len(norm), i+100)])
	}
}

type jobRecord struct {
	Class string          `json:"class"`
	ID    string          `json:"id"`
	Queue string          `json:"queue"`
	Props json.RawMessage `json:"props"`
}

func readJobRecords(t *testing.T, file string) []jobRecord {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var out []jobRecord
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var r jobRecord
		if err := json.Unmarshal(l, &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

func runPHPWorker(t *testing.T, env testenv.PHPEnv, args ...string) string {
	t.Helper()
	cmd := env.Command("work.php", args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("work.php: %v\n%s\n%s", err, stdout.String(), stderr.String())
		}
	case <-time.After(60 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("work.php did not finish:\n%s\n%s", stdout.String(), stderr.String())
	}
	return stdout.String()
}

func TestDispatchPropsForms(t *testing.T) {
	for _, tc := range []struct {
		name, class, props string
		want               string // Encode of the object, NULs as \0
		err                string
	}{
		{"plain", `A\B`, `{"x": 1, "\u0000*\u0000y": 2.0}`, `O:3:"A\B":2:{s:1:"x";i:1;s:4:"\0*\0y";d:2;}`, ""},
		{"empty", `A\B`, ` {} `, `O:3:"A\B":0:{}`, ""},
		{"numeric names stay property names", `A`, `{"0": "zero", "12": true}`, `O:1:"A":2:{s:1:"0";s:4:"zero";s:2:"12";b:1;}`, ""},
		{"object form", ``, `{"@class": "C\\D", "p": null}`, `O:3:"C\D":1:{s:1:"p";N;}`, ""},
		{"object form with same class", `C\D`, `{"@class": "C\\D"}`, `O:3:"C\D":0:{}`, ""},
		{"decode document", ``, `{"uuid": "u", "job": "Illuminate\\Queue\\CallQueuedHandler@call", "data": {"commandName": "E", "command": {"@class": "E", "v": [1]}}}`,
			"", "give it with --payload"},
		// A queued listener's properties include data and job: they are properties.
		{"listener properties", `Illuminate\Events\CallQueuedListener`, `{"class": "App\\Listeners\\L", "method": "handle", "data": [{"@class": "App\\Events\\E", "id": 1}], "job": null}`,
			`O:36:"Illuminate\Events\CallQueuedListener":4:{s:5:"class";s:15:"App\Listeners\L";s:6:"method";s:6:"handle";s:4:"data";a:1:{i:0;O:12:"App\Events\E":1:{s:2:"id";i:1;}}s:3:"job";N;}`, ""},
		{"a data property without a command", `X`, `{"job": "Illuminate\\Queue\\CallQueuedHandler@call", "data": {"x": 1}}`,
			`O:1:"X":2:{s:3:"job";s:39:"Illuminate\Queue\CallQueuedHandler@call";s:4:"data";a:1:{s:1:"x";i:1;}}`, ""},
		{"class mismatch", `X`, `{"@class": "Y"}`, "", "--props describes a Y, not a X"},
		{"no class", ``, `{"a": 1}`, "", "give the job CLASS"},
		{"not an object", `X`, `[1]`, "", "want a JSON object"},
		{"bad JSON", `X`, `{"a": }`, "", "invalid JSON at offset 6"},
		{"bad value offset", `X`, "  {\"a\": 1, \"b\": 99999999999999999999}", "", "at offset 16"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, err := commandFromProps(tc.class, []byte(tc.props))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			b, err := phpser.Encode(v)
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.ReplaceAll(string(b), "\x00", `\0`); got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestDispatchPayloadDocument(t *testing.T) {
	doc := `{"uuid": "u", "job": "Illuminate\\Queue\\CallQueuedHandler@call", "data": {"commandName": "E", "command": {"@class": "E", "v": [1]}}}`
	v, err := commandFromPayload("", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := phpser.Encode(v); string(b) != `O:1:"E":1:{s:1:"v";a:1:{i:0;i:1;}}` {
		t.Errorf("got %s", b)
	}
	for in, want := range map[string]string{
		`{"a": 1}`: "a payload document needs data.command",
		`{"job": "Illuminate\\Queue\\CallQueuedHandler@call", "data": {"command": "eyJpdiI6"}}`: "not a readable object",
		`[1]`: "want the JSON document",
	} {
		if _, err := commandFromPayload("", []byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", in, err, want)
		}
	}
	if _, err := commandFromPayload("F", []byte(doc)); err == nil || !strings.Contains(err.Error(), "describes a E, not a F") {
		t.Errorf("class mismatch: %v", err)
	}
}

// TestDispatchFlags checks the flag handling that needs no peer, on a Redis of its own.
func TestDispatchFlags(t *testing.T) {
	r := testenv.RedisServer(t)
	client := r.Client(t, 0)
	prefix := testenv.Prefix(t)
	url := fmt.Sprintf("redis://%s/0", r.Addr)
	base := []string{"dispatch", "--redis", url, "--prefix", prefix, "--laravel-version", "8.83"}

	// Flags after CLASS, a --queue that sets the property, --no-queueable.
	out, errOut, rc := runCLI(t, []byte(`{"a": 1}`), append(base, `App\Jobs\X`, "--props", "-", "--queue", "q1")...)
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut)
	}
	p, _, _ := findPayload(t, client, prefix, "q1", strings.TrimSpace(out))
	env, err := payload.Parse(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(env.Command, `s:5:"queue";s:2:"q1";`) || !strings.HasPrefix(env.Command, `O:10:"App\Jobs\X":11:{s:1:"a";i:1;s:3:"job";N;`) {
		t.Errorf("command %q", env.Command)
	}

	// A queue property wins for the property, --queue still picks the Redis queue.
	out, errOut, rc = runCLI(t, []byte(`{"queue": "fromprops"}`), append(base, "--no-queueable", "--queue", "q2", "--props", "-", `App\Jobs\X`)...)
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut)
	}
	p, _, _ = findPayload(t, client, prefix, "q2", strings.TrimSpace(out))
	if env, err = payload.Parse(p); err != nil || env.Command != `O:10:"App\Jobs\X":1:{s:5:"queue";s:9:"fromprops";}` {
		t.Errorf("command %q %v", env.Command, err)
	}

	// --delay sets the delay property and sends the job to :delayed.
	before := time.Now().Unix()
	out, errOut, rc = runCLI(t, nil, append(base, "--delay", "30", `App\Jobs\X`)...)
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut)
	}
	p, delayed, score := findPayload(t, client, prefix, "default", strings.TrimSpace(out))
	if !delayed || score < before+30 || score > time.Now().Unix()+30 || !bytes.Contains(p, []byte(`s:5:\"delay\";i:30;`)) {
		t.Errorf("delayed %v score %d payload %s", delayed, score, p)
	}

	// 12.x shapes.
	out, errOut, rc = runCLI(t, nil, append(base, "--laravel-version", "12.51", `App\Jobs\X`)...)
	if rc != 0 {
		t.Fatalf("exit %d: %s", rc, errOut)
	}
	p, _, _ = findPayload(t, client, prefix, "default", strings.TrimSpace(out))
	if env, err = payload.Parse(p); err != nil || env.CreatedAt == nil || !bytes.Contains(p, []byte(`"batchId":null`)) ||
		!strings.Contains(env.Command, `s:12:"messageGroup";N;s:12:"deduplicator";N;s:5:"delay";N;`) {
		t.Errorf("12.51 payload %s (%v)", p, err)
	}

	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"--delay", "-1", "X"}, "--delay"},
		{[]string{"--delay", "1.5", "X"}, "--delay"},
		{[]string{"--queue", "a,b", "X"}, "takes one queue"},
		{[]string{"--laravel-version", "5.7", "X"}, "Laravel 5.8 and later"},
		{[]string{"--props", "/nonexistent/props.json", "X"}, "--props"},
		{[]string{"--connection", "other", "X"}, ""},
	} {
		_, errOut, rc := runCLI(t, []byte(`{"connection": "redis"}`), append(base, bad.args...)...)
		if bad.args[0] == "--connection" {
			// The job names connection "redis", the flag another one: refused.
			_, errOut, rc = runCLI(t, []byte(`{"connection": "redis"}`), append(base, "--connection", "other", "--props", "-", "X")...)
			bad.want = `queue connection "redis"`
		}
		if rc == 0 || !strings.Contains(errOut, bad.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error about %q", bad.args, rc, errOut, bad.want)
		}
	}
	if _, errOut, rc := runCLI(t, nil, "dispatch", "--redis", "http://x", "X"); rc == 0 || !strings.Contains(errOut, "--redis") {
		t.Errorf("bad URL: %d %q", rc, errOut)
	}
}

// FuzzDispatchProps feeds arbitrary --props input to the parser: no panic, and an
// accepted document is an object of the class asked for.
func FuzzDispatchProps(f *testing.F) {
	for _, c := range dispatchCases() {
		f.Add(c.class, []byte(c.props))
	}
	f.Add("", []byte(`{"uuid":"u","job":"j","data":{"command":{"@class":"E"}}}`))
	f.Add("X", []byte(`{"a": [1, {"@binary": "AAE="}], "@@b": {"@serialized": "x"}}`))
	f.Fuzz(func(t *testing.T, class string, props []byte) {
		if v, err := commandFromPayload(class, props); err == nil && (v.Kind() != phpser.KindObject || class != "" && v.Class() != strings.TrimPrefix(class, `\`)) {
			t.Fatalf("--payload accepted %q for %q as %v %q", props, class, v.Kind(), v.Class())
		}
		v, err := commandFromProps(class, props)
		if err != nil {
			return
		}
		// A leading backslash (a fully qualified name, `\App\Jobs\X`) is not part of the class.
		if v.Kind() != phpser.KindObject || (class != "" && v.Class() != strings.TrimPrefix(class, `\`)) {
			t.Fatalf("accepted %q for %q as %v %q", props, class, v.Kind(), v.Class())
		}
	})
}

func TestClassNames(t *testing.T) {
	for _, ok := range []string{`A`, `App\Jobs\SendWelcome`, `\App\Jobs\X`, `_x\Ünïcode\日本`, `a1\b2`} {
		if _, err := commandFromProps(ok, []byte(`{}`)); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}
	for _, bad := range []string{`1A`, `App\\Jobs`, `App\`, `A-B`, "A\x8e", `A B`, `App/Jobs`} {
		if _, err := commandFromProps(bad, []byte(`{}`)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if v, _ := commandFromProps(`\A\B`, []byte(`{"@class": "A\\B"}`)); v == nil || v.Class() != `A\B` {
		t.Errorf("leading backslash: %v", v)
	}
}

// TestDispatchWithoutPrefix: with no --prefix and nothing naming an application (no
// --env-file, --laravel-root, LARAQ_* or REDIS_* variables, APP_NAME), the connection
// prefix is empty: dispatch writes plain queues:default, which a Laravel application
// without a prefix reads, and stats and clear look there too.
func TestDispatchWithoutPrefix(t *testing.T) {
	srv := testenv.RedisServer(t)
	ctx := context.Background()
	const db = 9 // a database of its own: the keys have no per-test prefix
	client := srv.Client(t, db)
	if err := client.FlushDB(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.FlushDB(context.Background()) })
	url := fmt.Sprintf("redis://%s/%d", srv.Addr, db)

	out, errOut, rc := opsCLI(t, `{"podcastId": 7}`, nil, "dispatch", `App\Jobs\ProcessPodcast`, "--props", "-", "--redis", url)
	if rc != 0 || errOut != "" {
		t.Fatalf("dispatch: exit %d, stderr %q", rc, errOut)
	}
	id := strings.TrimSpace(out)
	keys, err := client.Keys(ctx, "*").Result()
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(keys)
	if strings.Join(keys, " ") != "queues:default queues:default:notify" {
		t.Fatalf("keys %q, want only queues:default and its notify list", keys)
	}
	if p, delayed, _ := findPayload(t, client, "", "default", id); p == nil || delayed {
		t.Fatalf("job %s not in queues:default: %q", id, p)
	}

	t.Run("Laravel without prefix sees it", func(t *testing.T) {
		testenv.NeedPHP(t)
		php := testenv.PHPEnv{Redis: srv, DB: db}
		if got := strings.TrimSpace(string(php.Run(t, nil, "queue_op.php", "size"))); got != "1" {
			t.Errorf("RedisQueue::size = %q, want 1", got)
		}
	})

	out, errOut, rc = opsCLI(t, "", nil, "stats", "--redis", url, "--json")
	var st struct {
		Prefix string       `json:"prefix"`
		Queues []queueStats `json:"queues"`
	}
	if err := json.Unmarshal([]byte(out), &st); rc != 0 || err != nil {
		t.Fatalf("stats: %d %v %q %q", rc, err, out, errOut)
	}
	if st.Prefix != "" || len(st.Queues) != 1 || st.Queues[0].Queue != "default" || st.Queues[0].Ready != 1 {
		t.Errorf("stats: %+v", st)
	}

	// APP_NAME names an application: its skeleton's prefix applies, and an explicit empty
	// --prefix turns it off again.
	appEnv := map[string]string{"APP_NAME": "Podcasts"}
	if _, errOut, rc := opsCLI(t, "", appEnv, "dispatch", `App\Jobs\ProcessPodcast`, "--redis", url); rc != 0 {
		t.Fatalf("dispatch with APP_NAME: %d %q", rc, errOut)
	}
	if n := client.LLen(ctx, "podcasts_database_queues:default").Val(); n != 1 {
		t.Errorf("with APP_NAME: %d jobs in podcasts_database_queues:default, want 1", n)
	}
	if _, errOut, rc := opsCLI(t, "", appEnv, "dispatch", `App\Jobs\ProcessPodcast`, "--redis", url, "--prefix", ""); rc != 0 {
		t.Fatalf("dispatch --prefix '': %d %q", rc, errOut)
	}
	if n := client.LLen(ctx, "queues:default").Val(); n != 2 {
		t.Errorf("--prefix '': %d jobs in queues:default, want 2", n)
	}

	out, _, rc = opsCLI(t, "", nil, "clear", "--force", "--redis", url)
	if rc != 0 || out != "Cleared 2 jobs from the [default] queue\n" {
		t.Errorf("clear: %d %q", rc, out)
	}
	if n := client.LLen(ctx, "podcasts_database_queues:default").Val(); n != 1 {
		t.Errorf("clear without prefix touched the prefixed queue: %d left", n)
	}
}
