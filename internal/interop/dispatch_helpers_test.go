package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// phpDispatched is one line of dispatch.php's output.
type phpDispatched struct {
	ID      *string `json:"id"`
	Queue   string  `json:"queue"`
	Payload string  `json:"payload"`
	Delayed bool    `json:"delayed"`
	Score   *int64  `json:"score"`
	Error   string  `json:"error"`
}

// dispatchThroughPHP runs dispatch.php with one request per element and returns its answers.
func dispatchThroughPHP(t *testing.T, env testenv.PHPEnv, now int64, reqs ...any) []phpDispatched {
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
	args := []string{}
	if now != 0 {
		args = append(args, fmt.Sprintf("--now=%d", now))
	}
	out := env.Run(t, in.Bytes(), "dispatch.php", args...)
	var res []phpDispatched
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var d phpDispatched
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("dispatch.php output %q: %v", sc.Text(), err)
		}
		if d.Error != "" {
			t.Fatalf("dispatch.php: %s", d.Error)
		}
		res = append(res, d)
	}
	if len(res) != len(reqs) {
		t.Fatalf("dispatch.php answered %d lines for %d requests:\n%s", len(res), len(reqs), out)
	}
	return res
}

// readableMangled is the readable JSON form of a value with property names kept
// mangled at every level, what a hand-written props file for protected and private
// properties looks like.
func readableMangled(t *testing.T, v *phpser.Value) json.RawMessage {
	t.Helper()
	v = v.Deref()
	switch v.Kind() {
	case phpser.KindObject:
		var b bytes.Buffer
		b.WriteString(`{"@class":`)
		writeJSON(t, &b, v.Class())
		for _, e := range v.Entries() {
			b.WriteByte(',')
			writeJSON(t, &b, e.Key.Str())
			b.WriteByte(':')
			b.Write(readableMangled(t, &e.Value))
		}
		b.WriteByte('}')
		return b.Bytes()
	case phpser.KindArray:
		isList := true
		for i, e := range v.Entries() {
			if !e.Key.IsInt() || e.Key.Int() != int64(i) {
				isList = false
			}
		}
		var b bytes.Buffer
		if isList {
			b.WriteByte('[')
			for i, e := range v.Entries() {
				if i > 0 {
					b.WriteByte(',')
				}
				b.Write(readableMangled(t, &e.Value))
			}
			b.WriteByte(']')
			return b.Bytes()
		}
		b.WriteByte('{')
		for i, e := range v.Entries() {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSON(t, &b, e.Key.String())
			b.WriteByte(':')
			b.Write(readableMangled(t, &e.Value))
		}
		b.WriteByte('}')
		return b.Bytes()
	}
	out, err := phpser.MarshalReadable(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func writeJSON(t *testing.T, b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	b.Truncate(b.Len() - 1)
}

// propsOf returns the properties of the command in msg as an ordered JSON object with
// mangled names (the props dispatch.php and `laraq dispatch` take).
func propsOf(t *testing.T, m *laraq.Message) (class string, props json.RawMessage) {
	t.Helper()
	doc, err := payload.DecodeValue(m.Payload)
	if err != nil {
		t.Fatal(err)
	}
	data := doc.Get("data")
	v, err := phpser.DecodeString(data.Get("command").Str)
	if err != nil {
		t.Fatal(err)
	}
	obj := readableMangled(t, v)
	// Drop the leading {"@class":"…", to leave the properties.
	var b bytes.Buffer
	b.WriteByte('{')
	rest := obj[bytes.IndexByte(obj, ',')+1:]
	if bytes.IndexByte(obj, ',') < 0 {
		rest = []byte("}")
	}
	b.Write(rest)
	return data.Get("commandName").Str, b.Bytes()
}

// record is one line a PHP test job appended to LARAQ_RECORD.
type record struct {
	Kind     string  `json:"kind"`
	Event    string  `json:"event"`
	Class    string  `json:"class"`
	Method   string  `json:"method"`
	ID       *string `json:"id"`
	UUID     *string `json:"uuid"`
	Attempts int     `json:"attempts"`
	Queue    string  `json:"queue"`
	Conn     string  `json:"connection"`
	Name     string  `json:"name"`
	Raw      string  `json:"raw"`
	At       float64 `json:"at"`
	Action   string  `json:"action"`
	Props    []struct {
		K string          `json:"k"`
		V json.RawMessage `json:"v"`
	} `json:"props"`
	Data json.RawMessage `json:"data"`
}

func readDispatchRecords(t *testing.T, file string) []record {
	t.Helper()
	return testenv.ReadJSONLines[record](t, file)
}

// runPHPWorkerOn runs work.php (Laravel's own Worker) with args and returns its output.
func runPHPWorkerOn(t *testing.T, env testenv.PHPEnv, timeout time.Duration, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := env.Command("work.php", args...)
	cmd = exec.CommandContext(ctx, cmd.Path, cmd.Args[1:]...)
	cmd.Env = env.Environ()
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("work.php %s: %v\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func dispatchRecordFile(t *testing.T) string { return filepath.Join(t.TempDir(), "records.jsonl") }

// Canonical values, as canon.php writes them, for the expected side of a comparison.
type canonProp struct {
	K string
	V any
}

func cNull() any        { return map[string]any{"t": "null"} }
func cBool(b bool) any  { return map[string]any{"t": "bool", "v": b} }
func cInt(n int64) any  { return map[string]any{"t": "int", "v": fmt.Sprint(n)} }
func cStr(s string) any { return map[string]any{"t": "string", "v": b64(s)} }
func cFloat(f float64) any {
	return map[string]any{"t": "float", "v": fmt.Sprintf("%016x", math.Float64bits(f))}
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
func cEnum(s string) any  { return map[string]any{"t": "enum", "v": s} }

// cArr builds an array from key/value pairs; an int key is an int, a string key a string.
func cArr(kv ...any) any {
	items := []any{}
	for i := 0; i+1 < len(kv); i += 2 {
		var k any
		switch x := kv[i].(type) {
		case int:
			k = cInt(int64(x))
		case string:
			k = cStr(x)
		}
		items = append(items, map[string]any{"k": k, "v": kv[i+1]})
	}
	return map[string]any{"t": "array", "items": items}
}

func cList(vs ...any) any {
	kv := []any{}
	for i, v := range vs {
		kv = append(kv, i, v)
	}
	return cArr(kv...)
}

func cObj(class string, props ...canonProp) any {
	ps := []any{}
	for _, p := range props {
		ps = append(ps, map[string]any{"k": cStr(p.K), "v": p.V})
	}
	return map[string]any{"t": "object", "class": class, "props": ps}
}

// queueableCanon is the canon of the 8.x trait properties after the job's own (job
// itself is not reported).
func queueableCanon(queue, delay any) []canonProp {
	if queue == nil {
		queue = cNull()
	}
	if delay == nil {
		delay = cNull()
	}
	return []canonProp{
		{"connection", cNull()}, {"queue", queue}, {"chainConnection", cNull()}, {"chainQueue", cNull()},
		{"chainCatchCallbacks", cNull()}, {"delay", delay}, {"afterCommit", cNull()},
		{"middleware", cList()}, {"chained", cList()},
	}
}

// checkProps compares a record's properties with the expected list, name by name and
// value by value, in order.
func checkProps(t *testing.T, r record, want []canonProp) {
	t.Helper()
	if len(r.Props) != len(want) {
		names := []string{}
		for _, p := range r.Props {
			names = append(names, strings.ReplaceAll(p.K, "\x00", `\0`))
		}
		t.Errorf("%s: PHP saw %d properties %v, want %d", r.Class, len(r.Props), names, len(want))
		return
	}
	for i, w := range want {
		got := r.Props[i]
		if got.K != w.K {
			t.Errorf("%s: property %d is %q, want %q", r.Class, i, got.K, w.K)
			continue
		}
		var g any
		if err := json.Unmarshal(got.V, &g); err != nil {
			t.Fatal(err)
		}
		wb, _ := json.Marshal(w.V)
		var wv any
		_ = json.Unmarshal(wb, &wv)
		if !reflect.DeepEqual(g, wv) {
			t.Errorf("%s: property %q:\n got %s\nwant %s", r.Class, strings.ReplaceAll(w.K, "\x00", `\0`), got.V, wb)
		}
	}
}
