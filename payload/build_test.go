package payload

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

var (
	uuidV4  = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	redisID = regexp.MustCompile(`^[A-Za-z0-9]{32}$`)
)

// buildCase is one object job given both to PHP's real createPayload and to BuildObject.
type buildCase struct {
	name      string
	class     string
	command   string // ignored when serialize is set
	display   *string
	meta      map[string]any // job properties for PHP: tries, maxExceptions, …
	serialize bool           // PHP serializes the job itself (Go takes the command from PHP's output)
	secret    string
	goJob     ObjectJob // the same job for Go, without UUID/ID/Command/CommandName
}

func (c buildCase) phpLine() string {
	m := map[string]any{"kind": "object", "class": c.class, "command_b64": base64.StdEncoding.EncodeToString([]byte(c.command))}
	if c.display != nil {
		m["display_b64"] = base64.StdEncoding.EncodeToString([]byte(*c.display))
	}
	for k, v := range c.meta {
		m[k] = v
	}
	if c.serialize {
		m["serialize"] = true
		m["secret"] = c.secret
	}
	b, _ := json.Marshal(m)
	return string(b)
}

const awkward = "quote\" backslash\\ slash/ nul\x00 tab\t nl\n cr\r bs\b ff\f us\x1f del\x7f é ü 中文 😀 \u2028 \u2029 </script> <>&' \ufeff"

func buildCases() []buildCase {
	cmd := func(class, body string) string {
		return "O:" + itoa(len(class)) + ":\"" + class + "\":1:{s:4:\"body\";s:" + itoa(len(body)) + ":\"" + body + "\";}"
	}
	d := func(s string) *string { return &s }
	cases := []buildCase{
		{name: "plain", class: `App\Jobs\SendWelcomeMail`, command: cmd(`App\Jobs\SendWelcomeMail`, "hello")},
		{name: "awkward command", class: `App\Jobs\Awkward`, command: cmd(`App\Jobs\Awkward`, awkward)},
		{name: "awkward display name", class: `App\Jobs\Shown`, command: cmd(`App\Jobs\Shown`, "x"), display: d(awkward)},
		{name: "unicode class", class: `App\Jobs\Café\Ünïcödé`, command: cmd(`App\Jobs\Café\Ünïcödé`, "x")},
		{name: "protected property NULs", class: `App\Jobs\P`, command: "O:10:\"App\\Jobs\\P\":1:{s:6:\"\x00*\x00job\";N;}"},
		{name: "all meta set", class: `App\Jobs\AllMeta`, command: cmd(`App\Jobs\AllMeta`, "m"),
			meta:  map[string]any{"tries": 3, "maxExceptions": 2, "failOnTimeout": true, "backoff": []int{1, 5, 10}, "timeout": 120, "retryUntil": 1700000000},
			goJob: ObjectJob{MaxTries: i64(3), MaxExceptions: i64(2), FailOnTimeout: true, Backoff: str(JoinBackoff([]int64{1, 5, 10})), Timeout: i64(120), RetryUntil: i64(1700000000)}},
		{name: "zeros", class: `App\Jobs\Zero`, command: cmd(`App\Jobs\Zero`, ""),
			meta:  map[string]any{"tries": 0, "maxExceptions": 0, "failOnTimeout": false, "backoff": 0, "timeout": 0, "retryUntil": 0},
			goJob: ObjectJob{MaxTries: i64(0), MaxExceptions: i64(0), Backoff: str("0"), Timeout: i64(0), RetryUntil: i64(0)}},
		{name: "extremes", class: `App\Jobs\Big`, command: cmd(`App\Jobs\Big`, "b"),
			meta:  map[string]any{"tries": -1, "timeout": int64(9223372036854775807), "retryUntil": int64(123456789012345), "backoff": "3"},
			goJob: ObjectJob{MaxTries: i64(-1), Timeout: i64(9223372036854775807), RetryUntil: i64(123456789012345), Backoff: str("3")}},
		{name: "backoff int", class: `App\Jobs\B1`, command: cmd(`App\Jobs\B1`, "b"), meta: map[string]any{"backoff": 10}, goJob: ObjectJob{Backoff: str("10")}},
		{name: "backoff empty list", class: `App\Jobs\B2`, command: cmd(`App\Jobs\B2`, "b"), meta: map[string]any{"backoff": []int{}}, goJob: ObjectJob{Backoff: str(JoinBackoff(nil))}},
		{name: "only retryUntil", class: `App\Jobs\RU`, command: cmd(`App\Jobs\RU`, "r"), meta: map[string]any{"retryUntil": 1764164918}, goJob: ObjectJob{RetryUntil: i64(1764164918)}},
		{name: "only failOnTimeout", class: `App\Jobs\FT`, command: cmd(`App\Jobs\FT`, "f"), meta: map[string]any{"failOnTimeout": true}, goJob: ObjectJob{FailOnTimeout: true}},
		{name: "real serialize", class: `App\Jobs\Serialized`, serialize: true, secret: awkward},
		{name: "real serialize with meta", class: `App\Jobs\SerializedMeta`, serialize: true, secret: "s/é",
			meta: map[string]any{"tries": 5, "backoff": []int{2, 4}}, goJob: ObjectJob{MaxTries: i64(5), Backoff: str("2,4")}},
		{name: "encrypted-looking command", class: `App\Jobs\Enc`, command: "eyJpdiI6IkFCQ0QiLCJ2YWx1ZSI6Ii8rPSIsIm1hYyI6IiIsInRhZyI6IiJ9"},
	}
	rng := rand.New(rand.NewPCG(7, 8))
	var corpus []string
	for _, s := range jsonStringCorpus(false) {
		if utf8.ValidString(s) {
			corpus = append(corpus, s)
		}
	}
	for i := 0; i < 150; i++ {
		body := corpus[rng.IntN(len(corpus))] + corpus[rng.IntN(len(corpus))]
		class := `App\Jobs\Random` + itoa(i)
		c := buildCase{name: "random", class: class, command: cmd(class, body), meta: map[string]any{}}
		// An empty displayName() result cannot be expressed (empty means "the class").
		if s := corpus[rng.IntN(len(corpus))]; rng.IntN(2) == 0 && s != "" {
			c.display = &s
		}
		if rng.IntN(2) == 0 {
			v := rng.Int64N(1000) - 10
			c.meta["tries"], c.goJob.MaxTries = v, &v
		}
		if rng.IntN(2) == 0 {
			v := rng.Int64N(1 << 40)
			c.meta["retryUntil"], c.goJob.RetryUntil = v, &v
		}
		if rng.IntN(2) == 0 {
			vals := make([]int64, rng.IntN(4))
			for j := range vals {
				vals[j] = rng.Int64N(100)
			}
			c.meta["backoff"], c.goJob.Backoff = vals, str(JoinBackoff(vals))
		}
		if rng.IntN(3) == 0 {
			c.meta["failOnTimeout"], c.goJob.FailOnTimeout = true, true
		}
		cases = append(cases, c)
	}
	// Strings PHP cannot encode.
	cases = append(cases,
		buildCase{name: "invalid UTF-8 command", class: `App\Jobs\Bad`, command: "O:1:\"a\":1:{s:1:\"b\";s:1:\"\xff\";}"},
		buildCase{name: "invalid UTF-8 display", class: `App\Jobs\BadName`, command: "O:1:\"a\":0:{}", display: d("x\xc3")},
	)
	return cases
}

func itoa(n int) string { return string(AppendJSONInt(nil, int64(n))) }

func TestBuildObjectMatchesLaravel8(t *testing.T) {
	cases := buildCases()
	lines := make([]string, len(cases))
	for i, c := range cases {
		lines[i] = c.phpLine()
	}
	php := runPHP(t, "payload_build.php", nil, lines)
	same, refused := 0, 0
	for i, c := range cases {
		j := c.goJob
		j.CommandName, j.Command = c.class, c.command
		if c.display != nil {
			j.DisplayName = *c.display
		}
		if php[i].err != "" {
			_, err := BuildObject(j, Shape{})
			var ee *EncodeError
			if !strings.Contains(php[i].err, "Error code: 5") || !errors.As(err, &ee) || ee.Code != JSONErrorUTF8 {
				t.Errorf("%s: PHP %q, Go %v", c.name, php[i].err, err)
			}
			refused++
			continue
		}
		e, err := Parse(php[i].out)
		if err != nil {
			t.Fatalf("%s: PHP wrote an unparsable payload: %v", c.name, err)
		}
		if !uuidV4.MatchString(e.UUID) || !redisID.MatchString(e.ID) {
			t.Errorf("%s: PHP uuid %q id %q", c.name, e.UUID, e.ID)
		}
		j.UUID, j.ID = e.UUID, e.ID
		if c.serialize {
			j.Command = e.Command
			if !strings.Contains(j.Command, "\x00*\x00secret") {
				t.Fatalf("%s: serialized command lacks the protected property: %q", c.name, j.Command)
			}
		}
		got, err := BuildObject(j, Shape{})
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if !bytes.Equal(got, php[i].out) {
			t.Errorf("%s:\n Go %s\nPHP %s", c.name, got, php[i].out)
			continue
		}
		same++
	}
	if refused != 2 || same != len(cases)-2 || len(cases) < 150 {
		t.Fatalf("%d identical, %d refused by both, of %d", same, refused, len(cases))
	}
	t.Logf("%d object payloads byte-identical to Laravel 8.83's createPayload", same)
}

func TestBuildStringMatchesLaravel8(t *testing.T) {
	type sc struct {
		job  string
		data *string
	}
	d := func(s string) *string { return &s }
	cases := []sc{
		{job: "App\\Handlers\\Mailer@send"},
		{job: "Mailer@send", data: d(`{"a":{},"b":[],"c":1.0,"d":1e2,"e":"\u00e9\/","f":null,"g":true,"h":{"0":"x","1":"y"},"i":{"1":"x"},"j":123456789012345678901}`)},
		{job: "Mailer@send", data: d(`[1,"two",{"three":3}]`)},
		{job: "Mailer@send", data: d(`"just a string with / and é and \u2028"`)},
		{job: "Mailer@send", data: d(`5`)},
		{job: "Mailer@send", data: d(`null`)},
		{job: "Mailer@send", data: d(`""`)},
		{job: "Mailer@send", data: d(`{"nested":{"deep":{"list":[[],{},[{}]]}},"k":-0.0,"f":0.1}`)},
		{job: "NoMethod"},
		{job: "A@b@c"},
		{job: "@method"},
		{job: "App\\Jobs/Ünï 😀\u2028@handle", data: d(`{"s":"` + strings.ReplaceAll(strings.ReplaceAll(awkward, "\\", "\\\\"), "\"", "\\\"") + `"}`)},
		{job: "Bad\xff@x"},
	}
	// The awkward data above holds raw control characters: escape them as JSON requires.
	raw := []byte(*cases[11].data)
	var fixed bytes.Buffer
	for _, c := range raw {
		if c < 0x20 {
			fixed.WriteString(`\u00` + string("0123456789abcdef"[c>>4]) + string("0123456789abcdef"[c&15]))
		} else {
			fixed.WriteByte(c)
		}
	}
	cases[11].data = d(fixed.String())

	lines := make([]string, len(cases))
	for i, c := range cases {
		m := map[string]any{"kind": "string", "job_b64": base64.StdEncoding.EncodeToString([]byte(c.job))}
		if c.data != nil {
			m["data"] = *c.data
		}
		b, _ := json.Marshal(m)
		lines[i] = string(b)
	}
	php := runPHP(t, "payload_build.php", nil, lines)
	for i, c := range cases {
		var data json.RawMessage
		if c.data != nil {
			data = json.RawMessage(*c.data)
		}
		if php[i].err != "" {
			_, err := BuildString(c.job, data)
			var ee *EncodeError
			if !strings.Contains(php[i].err, "Error code: 5") || !errors.As(err, &ee) || ee.Code != JSONErrorUTF8 || ee.Path != "displayName" {
				t.Errorf("%q: PHP %q, Go %v", c.job, php[i].err, err)
			}
			continue
		}
		e := mustParse(t, php[i].out)
		got, err := BuildString(c.job, data, WithUUID(e.UUID), WithID(e.ID))
		if err != nil {
			t.Errorf("%q: %v", c.job, err)
			continue
		}
		if !bytes.Equal(got, php[i].out) {
			t.Errorf("%q:\n Go %s\nPHP %s", c.job, got, php[i].out)
		}
		if _, ok := e.Get("retryUntil"); ok {
			t.Errorf("string payload has retryUntil")
		}
	}
}

// Laravel 12.11+ shapes cannot be produced by the installed 8.83; S9 is a real 12.11–12.50
// database payload (no id/attempts), so the Redis form must be S9 with the Redis keys
// between createdAt and delay.
func TestBuildObjectLaravel1211MatchesS9(t *testing.T) {
	s9 := mustParse(t, sample(t, "S9"))
	j := ObjectJob{UUID: s9.UUID, ID: "IDIDIDIDIDIDIDIDIDIDIDIDIDIDIDID", CommandName: s9.CommandName, Command: s9.Command,
		MaxTries: s9.MaxTries, Timeout: s9.Timeout, CreatedAt: *s9.CreatedAt}
	got, err := BuildObject(j, Shape{CreatedAt: true})
	if err != nil {
		t.Fatal(err)
	}
	want := strings.Replace(string(sample(t, "S9")), `,"delay":null}`, `,"id":"IDIDIDIDIDIDIDIDIDIDIDIDIDIDIDID","attempts":0,"delay":null}`, 1)
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	s10 := mustParse(t, sample(t, "S10"))
	got, err = BuildObject(ObjectJob{UUID: s10.UUID, ID: "x", DisplayName: s10.DisplayName, CommandName: s10.CommandName,
		Command: s10.Command, CreatedAt: *s10.CreatedAt}, Shape{CreatedAt: true})
	if err != nil {
		t.Fatal(err)
	}
	want = strings.Replace(string(sample(t, "S10")), `,"delay":null}`, `,"id":"x","attempts":0,"delay":null}`, 1)
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestBuildShapes(t *testing.T) {
	base := ObjectJob{UUID: "u", ID: "i", CommandName: "A", Command: "c", CreatedAt: 1700000000, Delay: i64(30), BatchID: str("b"),
		DeleteWhenMissingModels: true}
	type shape = Shape
	l8, l1211, l1251, l13 := shape{}, shape{CreatedAt: true}, shape{CreatedAt: true, BatchID: true}, shape{CreatedAt: true, BatchID: true, DeleteWhenMissingModels: true}
	wantKeys := map[Shape]string{
		l8:    "uuid,displayName,job,maxTries,maxExceptions,failOnTimeout,backoff,timeout,retryUntil,data,id,attempts",
		l1211: "uuid,displayName,job,maxTries,maxExceptions,failOnTimeout,backoff,timeout,retryUntil,data,createdAt,id,attempts,delay",
		l1251: "uuid,displayName,job,maxTries,maxExceptions,failOnTimeout,backoff,timeout,retryUntil,data,createdAt,id,attempts,delay",
		l13:   "uuid,displayName,job,maxTries,maxExceptions,failOnTimeout,backoff,timeout,retryUntil,deleteWhenMissingModels,data,createdAt,id,attempts,delay",
	}
	wantData := map[Shape]string{
		l8:    `{"commandName":"A","command":"c"}`,
		l1211: `{"commandName":"A","command":"c"}`,
		l1251: `{"commandName":"A","command":"c","batchId":"b"}`,
		l13:   `{"commandName":"A","command":"c","batchId":"b"}`,
	}
	for v, keysWant := range wantKeys {
		b, err := BuildObject(base, v)
		if err != nil {
			t.Fatal(err)
		}
		e := mustParse(t, b)
		if keys(e) != keysWant || string(e.Data) != wantData[v] {
			t.Errorf("%v: keys %s data %s", v, keys(e), e.Data)
		}
		if v.CreatedAt && (*e.CreatedAt != 1700000000 || *e.Delay != 30) {
			t.Errorf("%v: createdAt/delay %s", v, b)
		}
		if v == l13 {
			if w, _ := e.Get("deleteWhenMissingModels"); string(w) != "true" {
				t.Errorf("deleteWhenMissingModels %s", w)
			}
		}
		if err := CheckPushRaw(b); err != nil {
			t.Errorf("%v: built payload refused: %v", v, err)
		}
	}
	nob := base
	nob.BatchID, nob.Delay = nil, nil
	b, _ := BuildObject(nob, l1251)
	if !bytes.Contains(b, []byte(`"batchId":null}`)) || !bytes.HasSuffix(b, []byte(`"attempts":0,"delay":null}`)) {
		t.Errorf("nulls: %s", b)
	}
	s, err := BuildString("A@b", json.RawMessage(`{}`), WithUUID("u"), WithID("i"), WithShape(l13), WithCreatedAt(5), WithDelay(9))
	if err != nil || string(s) != `{"uuid":"u","displayName":"A","job":"A@b","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"data":[],"createdAt":5,"id":"i","attempts":0,"delay":9}` {
		t.Errorf("string 13.x: %s %v", s, err)
	}
}

func TestBuildErrors(t *testing.T) {
	if _, err := BuildObject(ObjectJob{Command: "c"}, Shape{}); err == nil || !strings.Contains(err.Error(), "CommandName") {
		t.Errorf("no class: %v", err)
	}
	if _, err := BuildObject(ObjectJob{CommandName: "A"}, Shape{}); err == nil || !strings.Contains(err.Error(), "Command ") {
		t.Errorf("no command: %v", err)
	}
	_, err := BuildObject(ObjectJob{CommandName: "A", Command: "ok\xfe"}, Shape{})
	var ee *EncodeError
	if !errors.As(err, &ee) || ee.Path != "data.command" || ee.Offset != 2 {
		t.Errorf("bad utf-8: %v", err)
	}
	if _, err := BuildString("", nil); err == nil {
		t.Error("empty job accepted")
	}
	if _, err := BuildString("A@b", json.RawMessage(`{"a":`)); err == nil || !strings.Contains(err.Error(), "data") {
		t.Errorf("bad data: %v", err)
	}
}

func TestNewIDAndUUID(t *testing.T) {
	seen := map[string]bool{}
	chars := map[rune]bool{}
	for i := 0; i < 2000; i++ {
		id, u := NewID(), NewUUID()
		if !redisID.MatchString(id) || !uuidV4.MatchString(u) || seen[id] || seen[u] {
			t.Fatalf("id %q uuid %q", id, u)
		}
		seen[id], seen[u] = true, true
		for _, c := range id {
			chars[c] = true
		}
	}
	if len(chars) != 62 {
		t.Errorf("ids use %d distinct characters, want all 62", len(chars))
	}
	if JoinBackoff([]int64{1, 5, 10}) != "1,5,10" || JoinBackoff(nil) != "" || JoinBackoff([]int64{-3}) != "-3" {
		t.Error("JoinBackoff")
	}
}
