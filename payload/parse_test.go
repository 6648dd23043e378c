package payload

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseTolerance(t *testing.T) {
	cases := []struct {
		name, in string
		check    func(e *Envelope) bool
	}{
		{"backoff null", `{"backoff":null,"attempts":0}`, func(e *Envelope) bool { return e.Backoff == nil && e.BackoffSpec() == "" }},
		{"backoff absent, no delay", `{"attempts":0}`, func(e *Envelope) bool { return e.Backoff == nil && e.BackoffSpec() == "" }},
		{"backoff int", `{"backoff":10}`, func(e *Envelope) bool { return *e.Backoff == "10" && e.BackoffSpec() == "10" }},
		{"backoff comma string", `{"backoff":"1,5,10"}`, func(e *Envelope) bool { return *e.Backoff == "1,5,10" }},
		{"backoff exponent int", `{"backoff":1e+1}`, func(e *Envelope) bool { return *e.Backoff == "10" }},
		{"backoff list", `{"backoff":[1, "5", 1.0e1]}`, func(e *Envelope) bool { return *e.Backoff == "1,5,10" }},
		{"backoff empty string reads as 0", `{"backoff":""}`, func(e *Envelope) bool { return *e.Backoff == "" && e.BackoffSpec() == "0" }},
		{"backoff falls back to 12.11 delay", `{"backoff":null,"delay":7}`, func(e *Envelope) bool { return e.BackoffSpec() == "7" }},
		{"backoff wins over delay", `{"backoff":"3","delay":7}`, func(e *Envelope) bool { return e.BackoffSpec() == "3" }},
		{"7.x delay without backoff key", `{"maxTries":null,"delay":30,"timeout":null,"timeoutAt":null}`, func(e *Envelope) bool { return e.BackoffSpec() == "30" && *e.Delay == 30 }},
		{"timeoutAt legacy", `{"timeoutAt":1700000000}`, func(e *Envelope) bool { return *e.RetryUntil == 1700000000 }},
		{"retryUntil null falls back to timeoutAt", `{"retryUntil":null,"timeoutAt":5}`, func(e *Envelope) bool { return *e.RetryUntil == 5 }},
		{"retryUntil wins", `{"timeoutAt":5,"retryUntil":6}`, func(e *Envelope) bool { return *e.RetryUntil == 6 }},
		{"cjson exponent int", `{"retryUntil":1.2345678901234e+14}`, func(e *Envelope) bool { return *e.RetryUntil == 123456789012340 }},
		{"cjson 1e+14", `{"createdAt":1e+14}`, func(e *Envelope) bool { return *e.CreatedAt == 100000000000000 }},
		{"integral fraction", `{"timeout":60.0}`, func(e *Envelope) bool { return *e.Timeout == 60 }},
		{"negative zero", `{"maxTries":-0}`, func(e *Envelope) bool { return *e.MaxTries == 0 }},
		{"int64 max", `{"maxTries":9223372036854775807}`, func(e *Envelope) bool { return *e.MaxTries == 1<<63-1 }},
		{"int64 min", `{"maxTries":-9223372036854775808}`, func(e *Envelope) bool { return *e.MaxTries == -1<<63 }},
		{"numeric string", `{"maxTries":"3","attempts":"2"}`, func(e *Envelope) bool { return *e.MaxTries == 3 && e.Attempts == 2 }},
		{"numeric string with spaces", `{"timeout":" 30 "}`, func(e *Envelope) bool { return *e.Timeout == 30 }},
		{"numeric string exponent", `{"timeout":"3e1"}`, func(e *Envelope) bool { return *e.Timeout == 30 }},
		{"numeric string escaped", `{"timeout":"\u0033"}`, func(e *Envelope) bool { return *e.Timeout == 3 }},
		{"attempts null", `{"attempts":null}`, func(e *Envelope) bool { return e.Attempts == 0 }},
		{"attempts missing", `{"job":"X@y"}`, func(e *Envelope) bool { return e.Attempts == 0 }},
		{"tags list", `{"tags":["App\\User:1","x"]}`, func(e *Envelope) bool { return reflect.DeepEqual(e.Tags, []string{`App\User:1`, "x"}) }},
		{"tags {} from cjson", `{"tags":{}}`, func(e *Envelope) bool { return e.Tags != nil && len(e.Tags) == 0 }},
		{"tags keyed object", `{"tags":{"1":"a","0":"b"}}`, func(e *Envelope) bool { return reflect.DeepEqual(e.Tags, []string{"a", "b"}) }},
		{"tags non-strings", `{"tags":[1,null,["x"]]}`, func(e *Envelope) bool { return reflect.DeepEqual(e.Tags, []string{"1", "null", `["x"]`}) }},
		{"tags absent", `{}`, func(e *Envelope) bool { return e.Tags == nil }},
		{"tags weird type ignored", `{"tags":"x"}`, func(e *Envelope) bool { return e.Tags == nil }},
		{"pushedAt string", `{"pushedAt":"1729411372.3932"}`, func(e *Envelope) bool { return e.PushedAt == "1729411372.3932" }},
		{"pushedAt float (Horizon 1.4-2.x)", `{"pushedAt":1692298484.927}`, func(e *Envelope) bool { return e.PushedAt == "1692298484.927" }},
		{"pushedAt int (Horizon 1.0)", `{"pushedAt":1692298484}`, func(e *Envelope) bool { return e.PushedAt == "1692298484" }},
		{"id int (Horizon <=4)", `{"id":78751}`, func(e *Envelope) bool { return e.ID == "78751" }},
		{"id int exponent", `{"id":1.2345678901234e+14}`, func(e *Envelope) bool { return e.ID == "123456789012340" }},
		{"id string", `{"id":"78751"}`, func(e *Envelope) bool { return e.ID == "78751" }},
		{"id null", `{"id":null}`, func(e *Envelope) bool { return e.ID == "" }},
		{"no uuid (5.x)", `{"displayName":"A","job":"B@c"}`, func(e *Envelope) bool { return e.UUID == "" && e.Runnable() == nil }},
		{"uuid null", `{"uuid":null}`, func(e *Envelope) bool { return e.UUID == "" }},
		{"unknown keys kept", `{"job":"X@y","sentry_publish_time":1.5,"illuminate:log:context":{"data":[],"hidden":[]}}`, func(e *Envelope) bool {
			v, ok := e.Get("illuminate:log:context")
			w, ok2 := e.Get("sentry_publish_time")
			return ok && ok2 && string(v) == `{"data":[],"hidden":[]}` && string(w) == "1.5" && len(e.Fields) == 3
		}},
		{"repeated key: last wins, both kept", `{"job":"A@b","job":"C@d"}`, func(e *Envelope) bool {
			v, _ := e.Get("job")
			return e.Job == "C@d" && string(v) == `"C@d"` && len(e.Fields) == 2 && string(e.Fields[0].Value) == `"A@b"`
		}},
		{"escaped key", `{"\u006aob":"X@y","d\u0061ta":{"comm\u0061nd":"O:1:\"A\":0:{}"}}`, func(e *Envelope) bool {
			return e.Job == "X@y" && e.Command == `O:1:"A":0:{}` && e.Fields[0].Key == "job" && e.Fields[1].Key == "data"
		}},
		{"whitespace everywhere", " \n{ \"job\" :\t\"X@y\" ,\r\n \"attempts\" : 3 , \"data\" : { \"command\" : \"c\" } }\n ", func(e *Envelope) bool {
			v, _ := e.Get("data")
			return e.Job == "X@y" && e.Attempts == 3 && e.Command == "c" && string(v) == `{ "command" : "c" }` && string(e.Data) == string(v)
		}},
		{"string job data with a command member", `{"job":"X@y","data":{"command":[1],"commandName":5}}`, func(e *Envelope) bool {
			return !e.IsObjectJob() && e.Command == "" && e.CommandName == "" && string(e.Data) == `{"command":[1],"commandName":5}`
		}},
		{"string job data with a command string", `{"job":"X@y","data":{"command":"x"}}`, func(e *Envelope) bool { return !e.IsObjectJob() && e.Command == "x" }},
		{"repeated data key replaces the command", `{"job":"X@y","data":{"command":"c","commandName":"A"},"data":5}`, func(e *Envelope) bool {
			return e.Command == "" && e.CommandName == "" && string(e.Data) == "5"
		}},
		{"string job data scalar", `{"job":"X@y","data":""}`, func(e *Envelope) bool { return string(e.Data) == `""` }},
		{"data.batchId 12.51", `{"data":{"commandName":"A","command":"c","batchId":"b1"}}`, func(e *Envelope) bool { return *e.BatchID == "b1" }},
		{"data.batchId null", `{"data":{"commandName":"A","command":"c","batchId":null}}`, func(e *Envelope) bool { return e.BatchID == nil }},
		{"failOnTimeout true", `{"failOnTimeout":true}`, func(e *Envelope) bool { return e.FailOnTimeout }},
		{"failOnTimeout 1", `{"failOnTimeout":1}`, func(e *Envelope) bool { return e.FailOnTimeout }},
		{"failOnTimeout \"0\"", `{"failOnTimeout":"0"}`, func(e *Envelope) bool { return !e.FailOnTimeout }},
		{"failOnTimeout 0.0", `{"failOnTimeout":0.0}`, func(e *Envelope) bool { return !e.FailOnTimeout }},
		{"failOnTimeout {}", `{"failOnTimeout":{ }}`, func(e *Envelope) bool { return !e.FailOnTimeout }},
		{"failOnTimeout [0]", `{"failOnTimeout":[0]}`, func(e *Envelope) bool { return e.FailOnTimeout }},
		{"displayName number", `{"displayName":5,"job":"X@y"}`, func(e *Envelope) bool { return e.DisplayName == "5" && e.Name() == "5" }},
		{"displayName \"0\" is empty to PHP", `{"displayName":"0","job":"X@y"}`, func(e *Envelope) bool { return e.Name() == "X@y" }},
		{"displayName null", `{"displayName":null,"job":"X@y"}`, func(e *Envelope) bool { return e.Name() == "X@y" }},
		{"invalid UTF-8 kept (cjson passes it through)", "{\"job\":\"X\xff@y\"}", func(e *Envelope) bool { return e.Job == "X\xff@y" }},
		{"lone surrogate escape", `{"job":"\ud800x"}`, func(e *Envelope) bool { return e.Job == "\uFFFDx" }},
		{"surrogate pair escape", `{"job":"\ud83d\ude00"}`, func(e *Envelope) bool { return e.Job == "😀" }},
		{"escapes", `{"job":"\"\\\/\b\f\n\r\t\u0000\u00e9"}`, func(e *Envelope) bool { return e.Job == "\"\\/\b\f\n\r\t\x00é" }},
		{"empty object", `{}`, func(e *Envelope) bool { return len(e.Fields) == 0 && e.Runnable() != nil }},
		{"object job without command", `{"job":"Illuminate\\Queue\\CallQueuedHandler@call","data":{"commandName":"A"}}`, func(e *Envelope) bool {
			return e.Runnable() != nil && strings.Contains(e.Runnable().Error(), "data.command")
		}},
		{"deep unknown value within cjson limit", `{"x":` + strings.Repeat("[", 999) + strings.Repeat("]", 999) + `}`, func(e *Envelope) bool { return len(e.Fields) == 1 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e, err := Parse([]byte(c.in))
			if err != nil {
				t.Fatalf("Parse(%s): %v", c.in, err)
			}
			if !c.check(e) {
				t.Errorf("Parse(%s) = %+v", c.in, typedOf(e))
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		in     string
		path   string
		offset int
		msg    string
	}{
		{``, "", 0, "must be a JSON object, found end of input"},
		{`[]`, "", 0, "must be a JSON object, found array"},
		{`null`, "", 0, "found null"},
		{` "x"`, "", 1, "found string"},
		{`{"job":"X@y"} x`, "", 14, `unexpected 'x' after the payload object`},
		{`{"job":"X@y"}{}`, "", 13, "after the payload object"},
		{`{"job":"X@y",}`, "(key)", 13, "expected string"},
		{`{"job" "X@y"}`, "job", 7, `expected ':'`},
		{`{"job":"X@y"`, "job", 12, `expected ',' or '}'`},
		{`{"maxTries":2.5}`, "maxTries", 12, "2.5 is not an integer"},
		{`{"maxTries":1e400}`, "maxTries", 12, "out of the int64 range"},
		{`{"maxTries":9223372036854775808}`, "maxTries", 12, "out of the int64 range"},
		{`{"maxTries":1e19}`, "maxTries", 12, "out of the int64 range"},
		{`{"maxTries":"3abc"}`, "maxTries", 12, `"3abc" is not a numeric string`},
		{`{"maxTries":"0x1A"}`, "maxTries", 12, "not a numeric string"},
		{`{"maxTries":"2.5"}`, "maxTries", 12, `"2.5" is not an integer`},
		{`{"maxTries":true}`, "maxTries", 12, "expected an integer or null, found boolean"},
		{`{"timeout":[]}`, "timeout", 11, "found array"},
		{`{"attempts":1.5}`, "attempts", 12, "not an integer"},
		{`{"attempts":{}}`, "attempts", 12, "found object"},
		{`{"retryUntil":"soon"}`, "retryUntil", 14, "not a numeric string"},
		{`{"backoff":1.5}`, "backoff", 11, "not an integer"},
		{`{"backoff":true}`, "backoff", 11, "found boolean"},
		{`{"backoff":[1,null]}`, "backoff", 14, "null inside the backoff list"},
		{`{"job":true}`, "job", 7, "expected string or null, found boolean"},
		{`{"job":5}`, "job", 7, "found number"},
		{`{"uuid":{}}`, "uuid", 8, "found object"},
		{`{"id":[1]}`, "id", 6, "found array"},
		{`{"id":1.5}`, "id", 6, "not an integer"},
		{`{"x":01}`, "x", 6, "expected ',' or '}'"},
		{`{"x":-}`, "x", 5, "invalid number"},
		{`{"x":1.}`, "x", 7, "no digits after '.'"},
		{`{"x":1e}`, "x", 7, "no digits in exponent"},
		{`{"x":True}`, "x", 5, "invalid value"},
		{`{"x":nul}`, "x", 5, "invalid value"},
		{`{"x":"a` + "\n" + `b"}`, "x", 7, "raw control character 0x0a"},
		{`{"x":"\a"}`, "x", 6, `invalid escape "\\a"`},
		{`{"x":"\u12"}`, "x", 6, `invalid \u escape`},
		{`{"x":"abc`, "x", 5, "unterminated string"},
		{`{"data":{"command":"O:1:\"A\"`, "data.command", 19, "unterminated string"},
		{`{"data":{"command":5,}}`, "data", 21, "expected string"},
		{`{"x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`, "x", 5 + 999, "nesting deeper than 1000"},
		{`{"x":[1 2]}`, "x", 8, `expected ',' or ']'`},
		{"{\"x\":\x00}", "x", 5, "byte 0x00"},
	}
	for _, c := range cases {
		_, err := Parse([]byte(c.in))
		var pe *Error
		if !errors.As(err, &pe) {
			t.Errorf("Parse(%.60s): want *Error, got %v", c.in, err)
			continue
		}
		if pe.Path != c.path || pe.Offset != c.offset || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("Parse(%.60s):\n got path %q offset %d msg %q\nwant path %q offset %d msg ~%q", c.in, pe.Path, pe.Offset, pe.Msg, c.path, c.offset, c.msg)
		}
		if !strings.HasPrefix(err.Error(), "payload: ") {
			t.Errorf("error text %q", err)
		}
	}
}

func TestRunnableS2(t *testing.T) {
	e := mustParse(t, sample(t, "S2"))
	err := e.Runnable()
	if err == nil || !strings.Contains(err.Error(), "no job to run") {
		t.Fatalf("Runnable() = %v", err)
	}
	if e.Name() != "" || e.IsObjectJob() {
		t.Errorf("name %q object %v", e.Name(), e.IsObjectJob())
	}
}

// A worker parses every payload it pops: the strings of an envelope are views of the
// payload or of one buffer for those with escapes, so a Laravel job costs the
// envelope, that buffer and the list of fields, whatever its number of strings.
func TestParseAllocations(t *testing.T) {
	raw, err := BuildObject(benchJob(), Shape{})
	if err != nil {
		t.Fatal(err)
	}
	var env *Envelope
	allocs := testing.AllocsPerRun(100, func() { env, err = Parse(raw) })
	if err != nil || env.Command == "" || env.DisplayName == "" || env.UUID == "" {
		t.Fatalf("parsed %+v, %v", env, err)
	}
	if allocs > 3 {
		t.Errorf("Parse allocates %.0f times per payload, want at most 3", allocs)
	}
	// The strings survive the next parse: nothing is shared between envelopes.
	name, cmd := env.DisplayName, env.Command
	if _, err := Parse(raw); err != nil || env.DisplayName != name || env.Command != cmd {
		t.Fatalf("an envelope changed after another Parse")
	}
}
