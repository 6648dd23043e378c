package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

func runCLI(t *testing.T, stdin []byte, args ...string) (string, string, int) {
	t.Helper()
	var out, errOut bytes.Buffer
	rc := Main(context.Background(), args, WithIO(bytes.NewReader(stdin), &out, &errOut))
	return out.String(), errOut.String(), rc
}

// payloadFiles are the real Laravel payloads of testdata/laravel-payloads (public
// samples, captures from the Laravel 8 peer, later versions' shapes; queued and reserved
// copies) and the ones of the phpser fixtures.
func payloadFiles(t *testing.T) []string {
	t.Helper()
	a, _ := filepath.Glob(testenv.Testdata("laravel-payloads", "*.json"))
	b, _ := filepath.Glob(testenv.Testdata("phpser", "laravel", "*.payload.json"))
	if len(a) < 40 || len(b) < 4 {
		t.Fatalf("payload samples missing: %d + %d", len(a), len(b))
	}
	return append(a, b...)
}

func TestDecodeExactOutput(t *testing.T) {
	out, errOut, rc := runCLI(t, nil, "decode", testenv.Testdata("laravel-payloads", "S1r.json"))
	want := `{
  "maxTries": null,
  "attempts": 1,
  "timeout": null,
  "job": "Illuminate\\Queue\\CallQueuedHandler@call",
  "id": "SNjXfGlL1QdB3G3CyCnfXI3pHjC2kNK8",
  "timeoutAt": null,
  "data": {
    "command": {
      "@class": "App\\Jobs\\TestQueue",
      "job": null,
      "connection": null,
      "queue": null,
      "chainConnection": null,
      "chainQueue": null,
      "delay": null,
      "chained": []
    },
    "commandName": "App\\Jobs\\TestQueue"
  },
  "displayName": "App\\Jobs\\TestQueue"
}
`
	if rc != 0 || errOut != "" || out != want {
		t.Fatalf("rc %d stderr %q\n%s", rc, errOut, out)
	}
	// stdin works the same; so do a cjson-style reserved copy with `[]` turned into
	// `{}` and numbers in exponent form, and a string job whose data stays as it is.
	in := []byte(`{"big":1.2345678901234e+14,"id":"r1","attempts":1,"data":{},"job":"X@y","tags":[],"f":-0,"u":"\u00e9\/\u0000"}` + "\n")
	out, _, rc = runCLI(t, in, "decode")
	want = "{\n  \"big\": 1.2345678901234e+14,\n  \"id\": \"r1\",\n  \"attempts\": 1,\n  \"data\": {},\n  \"job\": \"X@y\",\n  \"tags\": [],\n  \"f\": -0,\n  \"u\": \"é/\\u0000\"\n}\n"
	if rc != 0 || out != want {
		t.Fatalf("rc %d\n%s\nwant\n%s", rc, out, want)
	}
}

func TestDecodeStringJobKeepsData(t *testing.T) {
	// A Class@method job's data is the caller's; a "command" in it is not a command.
	in := []byte(`{"job":"App\\Legacy@run","data":{"command":"rm -rf","n":1},"id":"x","attempts":0}`)
	out, errOut, rc := runCLI(t, in, "decode")
	if rc != 0 || !strings.Contains(out, `"command": "rm -rf"`) {
		t.Fatalf("rc %d %q %q", rc, out, errOut)
	}
	// The reserved copy of an object job lists command before commandName and job last.
	in = []byte(`{"data":{"command":"i:1;","commandName":"X"},"job":"Illuminate\\Queue\\CallQueuedHandler@call"}`)
	if out, _, rc := runCLI(t, in, "decode"); rc != 0 || !strings.Contains(out, `"command": 1,`) {
		t.Fatalf("rc %d %q", rc, out)
	}
	in = []byte(`{"data":{"commandName":"X","command":"i:2;"}}`)
	if out, _, rc := runCLI(t, in, "decode"); rc != 0 || !strings.Contains(out, `"command": 2`) {
		t.Fatalf("rc %d %q", rc, out)
	}
}

func TestDecodeEncryptedCommand(t *testing.T) {
	// A ShouldBeEncrypted job: the Encrypter's base64 JSON (iv, value, mac, tag).
	enc := "eyJpdiI6Ik1USXpORFUyTnpnNU1ERXlNelExTmc9PSIsInZhbHVlIjoiYWJjIiwibWFjIjoiZGVmIiwidGFnIjoiIn0="
	in := []byte(`{"uuid":"u","job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"App\\Jobs\\Secret","command":"` + enc + `"},"attempts":0}`)
	out, errOut, rc := runCLI(t, in, "decode")
	if rc != 0 || !strings.Contains(out, `"command": "`+enc+`"`) || !strings.Contains(out, `"attempts": 0`) {
		t.Fatalf("rc %d\n%s", rc, out)
	}
	if errOut != "laraq: data.command is encrypted (ShouldBeEncrypted) and shown as stored; decrypting it needs the APP_KEY (--app-key or --env-file)\n" {
		t.Errorf("stderr %q", errOut)
	}
}

func TestDecodeBareSerialized(t *testing.T) {
	out, _, rc := runCLI(t, []byte("a:2:{i:0;d:1;i:1;E:6:\"A\\B:Cd\";}\n"), "decode")
	if rc != 0 || out != "[\n  1.0,\n  {\n    \"@enum\": \"A\\\\B:Cd\"\n  }\n]\n" {
		t.Fatalf("rc %d %q", rc, out)
	}
	out, _, rc = runCLI(t, []byte(`"i:5;"`), "decode")
	if rc != 0 || out != "5\n" {
		t.Fatalf("JSON string: rc %d %q", rc, out)
	}
}

func TestDecodeErrors(t *testing.T) {
	s8, err := os.ReadFile(testenv.Testdata("laravel-payloads", "S8.json"))
	if err != nil {
		t.Fatal(err)
	}
	corrupt := bytes.Replace(s8, []byte(`s:7:\"default\"`), []byte(`s:9:\"default\"`), 1)
	cases := []struct {
		in   []byte
		args []string
		want string
	}{
		{corrupt, nil, `laraq: data.command: expected '"' after 9 bytes, found '}' at offset 53`},
		{[]byte(`{"data":{"commandName":"X","command":"O:1:\"X\":1:{s:1:\"a\";b:2;}"}}`), nil, `laraq: data.command: expected '0' or '1', found '2' at offset 21`},
		{[]byte(`{"data":{"commandName":"X","command":"a:1:{i:0;i:1;}x"}}`), nil, `laraq: data.command: unexpected data after the value at offset 14`},
		{[]byte(`{"data":{"commandName":"X","command":"eyJpdiI6Ik1UST0ifQ=="}}`), nil, `laraq: data.command: unknown value type 'e' at offset 0`},
		{[]byte(`{"a":1,}`), nil, `laraq: payload: invalid character '}' looking for beginning of object key string at offset 7`},
		{[]byte(`{"a":1} x`), nil, `laraq: payload: unexpected data after the JSON object at offset 8`},
		{[]byte(`{"a":`), nil, `laraq: payload: unexpected end of JSON input at offset 5`},
		{[]byte("  \n"), nil, `laraq: empty input, expected a JSON payload or a serialized value`},
		{[]byte(" b:7;"), nil, `laraq: expected '0' or '1', found '7' at offset 3`},
		{nil, []string{filepath.Join(t.TempDir(), "missing.json")}, "laraq: open "},
	}
	for _, c := range cases {
		out, errOut, rc := runCLI(t, c.in, append([]string{"decode"}, c.args...)...)
		if rc != 1 || out != "" || !strings.HasPrefix(errOut, c.want) || strings.Count(errOut, "\n") != 1 {
			t.Errorf("input %.60q: rc %d stdout %q stderr %q; want one line starting %q", c.in, rc, out, errOut, c.want)
		}
	}
	partial := testenv.Testdata("laravel-payloads", "S3-partial.txt")
	_, errOut, rc := runCLI(t, nil, "decode", partial)
	if rc != 1 || !strings.Contains(errOut, "unexpected end of JSON input") {
		t.Errorf("partial payload: rc %d %q", rc, errOut)
	}
	if _, _, rc := runCLI(t, nil, "decode", "a", "b"); rc != 2 {
		t.Errorf("two files: rc %d", rc)
	}
}

// token is one JSON token with the path of object keys leading to it.
type token struct {
	path string
	tok  json.Token
}

func tokens(t *testing.T, doc []byte) []token {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var out []token
	var path []string
	var inObject []bool
	expectKey := false
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%v in %s", err, doc)
		}
		p := strings.Join(path, ".")
		out = append(out, token{p, tok})
		switch v := tok.(type) {
		case json.Delim:
			switch v {
			case '{', '[':
				inObject = append(inObject, v == '{')
				expectKey = v == '{'
				path = append(path, "")
				continue
			default:
				inObject = inObject[:len(inObject)-1]
				path = path[:len(path)-1]
			}
		case string:
			if expectKey {
				path[len(path)-1] = v
				expectKey = false
				continue
			}
		}
		expectKey = len(inObject) > 0 && inObject[len(inObject)-1]
	}
}

// TestDecodeMatchesPHP renders every sample payload with PHP's own unserialize()
// (testdata/phpser/readable.php) and compares token by token: same keys in the same
// order, same strings, and inside data.command the same number spellings.
func TestDecodeMatchesPHP(t *testing.T) {
	testenv.NeedPHP(t)
	files := payloadFiles(t)
	cmd := exec.Command("php", append([]string{testenv.Testdata("phpser", "readable.php")}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	phpOut, err := cmd.Output()
	if err != nil {
		t.Fatalf("readable.php: %v\n%s", err, stderr.String())
	}
	lines := bytes.Split(bytes.TrimRight(phpOut, "\n"), []byte("\n"))
	if len(lines) != len(files) {
		t.Fatalf("%d lines for %d files", len(lines), len(files))
	}
	for i, f := range files {
		out, errOut, rc := runCLI(t, nil, "decode", f)
		if rc != 0 {
			t.Errorf("%s: rc %d: %s", f, rc, errOut)
			continue
		}
		got, want := tokens(t, []byte(out)), tokens(t, lines[i])
		if len(got) != len(want) {
			t.Errorf("%s: %d tokens, PHP %d\n%s\n%s", filepath.Base(f), len(got), len(want), out, lines[i])
			continue
		}
		for j := range got {
			g, w := got[j], want[j]
			if g.path != w.path {
				t.Errorf("%s: token %d at %q, PHP at %q", filepath.Base(f), j, g.path, w.path)
				break
			}
			gn, gNum := g.tok.(json.Number)
			wn, wNum := w.tok.(json.Number)
			if gNum && wNum && !strings.HasPrefix(g.path, "data.command") {
				// PHP's json_decode turns 1.2345678901234e+14 into a float and prints
				// it back differently; laraq keeps the envelope's spelling.
				gf, _ := gn.Float64()
				wf, _ := wn.Float64()
				if gf == wf {
					continue
				}
			}
			if g.tok != w.tok {
				t.Errorf("%s: at %s laraq has %v, PHP %v", filepath.Base(f), g.path, g.tok, w.tok)
				break
			}
		}
	}
}

// TestDecodeReservedCopies re-encodes each payload the way the pop script does, with
// a real redis-server's cjson, and checks that decode shows the same job.
func TestDecodeReservedCopies(t *testing.T) {
	// EVAL touches no keys, so the shared server and database are fine.
	c := testenv.RedisServer(t).Client(t, 0)
	ctx := context.Background()
	for _, f := range payloadFiles(t) {
		queued, _ := os.ReadFile(f)
		if !json.Valid(queued) || !bytes.Contains(queued, []byte(`"attempts"`)) {
			continue
		}
		reserved, err := c.Eval(ctx, `local p = cjson.decode(ARGV[1]); p['attempts'] = p['attempts'] + 1; return cjson.encode(p)`, nil, string(queued)).Text()
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		q, _, rc1 := runCLI(t, queued, "decode")
		rsv, _, rc2 := runCLI(t, []byte(reserved), "decode")
		if rc1 != 0 || rc2 != 0 {
			t.Fatalf("%s: rc %d %d", f, rc1, rc2)
		}
		var a, b map[string]any
		if err := json.Unmarshal([]byte(q), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(rsv), &b); err != nil {
			t.Fatal(err)
		}
		// cjson writes an empty array as {}; apart from that data must be the same.
		ac, _ := json.Marshal(emptyAsObject(a["data"]))
		bc, _ := json.Marshal(emptyAsObject(b["data"]))
		if !bytes.Equal(ac, bc) {
			t.Errorf("%s: data differs between queued and reserved copy\n%s\n%s", f, ac, bc)
		}
		ka, kb := keys(a), keys(b)
		if !slices.Equal(ka, kb) {
			t.Errorf("%s: keys %v vs %v", f, ka, kb)
		}
	}
}

func emptyAsObject(x any) any {
	switch v := x.(type) {
	case []any:
		if len(v) == 0 {
			return map[string]any{}
		}
		for i := range v {
			v[i] = emptyAsObject(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = emptyAsObject(v[k])
		}
	}
	return x
}

func keys(m map[string]any) []string {
	var k []string
	for x := range m {
		k = append(k, x)
	}
	slices.Sort(k)
	return k
}

func TestDecodeCommandMatchesLibrary(t *testing.T) {
	// The command shown is phpser's readable form of the command, indented.
	for _, f := range payloadFiles(t) {
		raw, _ := os.ReadFile(f)
		var env struct {
			Data struct {
				Command *string `json:"command"`
			} `json:"data"`
		}
		if json.Unmarshal(raw, &env) != nil || env.Data.Command == nil {
			continue
		}
		v, err := phpser.DecodeString(*env.Data.Command)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		want, err := phpser.MarshalReadable(v)
		if err != nil {
			t.Fatal(err)
		}
		out, _, _ := runCLI(t, nil, "decode", f)
		var doc struct {
			Data struct {
				Command json.RawMessage `json:"command"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, doc.Data.Command)
		if compact.String() != string(want) {
			t.Errorf("%s:\n%s\n%s", f, compact.String(), want)
		}
	}
}

// FuzzDecodePayload: `laraq decode` never panics; it either fails with one line or
// prints valid JSON.
func FuzzDecodePayload(f *testing.F) {
	for _, p := range []string{"S1.json", "S7.json", "S8r.json", "S10.json", "S12r.json", "S3-partial.txt"} {
		b, err := os.ReadFile(testenv.Testdata("laravel-payloads", p))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`a:1:{i:0;s:1:"x";}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		out, _, err := payload.Readable(in)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON output %q for %q", out, in)
		}
	})
}
