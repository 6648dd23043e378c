package payload

import (
	"context"
	"encoding/hex"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

func retryCorpus(t *testing.T) []string {
	docs := []string{
		`{"job":"X@y","data":[],"id":"r1","attempts":3,"big":123456789012345}`,
		`{"job":"X@y","data":{},"id":"r1","attempts":1,"big":1.2345678901234e+14}`,
		`{"uuid":"u","displayName":"Café\/Ünïcode 😀","job":"A\\B@c","data":{"s":"\u00e9\u2028\/","t":"é "},"attempts":2}`,
		`{"attempts":null,"job":"X@y"}`,
		`{"attempts":"7","job":"X@y"}`,
		`{"attempts":false}`,
		`{"job":"X@y"}`,
		`{"attempts":1,"neg":-0.0,"negi":-0,"f":1.0,"e":1e2,"small":1e-7,"huge":1e300,"u64":18446744073709551615}`,
		`{"attempts":1,"data":{"0":"a","1":"b"},"tags":{},"list":{"1":"x","0":"y"}}`,
		`{"attempts":1,"attempts":2,"a":1,"a":{}}`,
		`{"attempts":5,"retryUntil":1700000000,"data":{"commandName":"A","command":"O:1:\"A\":0:{}"}}`,
		`[1,2]`, `"str"`, `5`, `null`, `{}`, `[]`,
		// PHP pushes "null" for these; Go refuses.
		`{"attempts":1`, `{"attempts":1,"x":1e400}`, "{\"attempts\":1,\"x\":\"\xff\"}", `{"attempts":1,"x":"\ud800"}`,
		`{"x":` + strings.Repeat("[", 511) + strings.Repeat("]", 511) + `}`,
		`{"x":` + strings.Repeat("[", 510) + strings.Repeat("]", 510) + `,"attempts":9}`,
	}
	for _, name := range sampleIDs(t) {
		docs = append(docs, string(sample(t, name)))
	}
	rng := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 500; i++ {
		docs = append(docs, `{"uuid":"u`+strconv.Itoa(i)+`","attempts":`+strconv.Itoa(rng.IntN(9))+`,"data":`+randomJSON(rng, 3)+`,"x":`+randomJSON(rng, 2)+`}`)
	}
	return docs
}

func TestResetForRetryMatchesPHP(t *testing.T) {
	docs := retryCorpus(t)
	lines := make([]string, len(docs))
	for i, d := range docs {
		lines[i] = hex.EncodeToString([]byte(d))
	}
	php := runPHP(t, "payload_json.php", []string{"retry"}, lines)
	same, refused := 0, 0
	for i, doc := range docs {
		got, err := ResetForRetry([]byte(doc))
		switch {
		case php[i].err != "":
			t.Errorf("%.100q: PHP's RetryCommand failed: %s", doc, php[i].err)
		case err != nil:
			// PHP's json_decode/json_encode failed and queue:retry would push "null".
			if string(php[i].out) != "null" || doc == "null" {
				t.Errorf("%.100q: Go refused (%v) but PHP pushes %q", doc, err, php[i].out)
			}
			refused++
		case string(got) != string(php[i].out):
			t.Errorf("%.100q:\n Go %s\nPHP %s", doc, got, php[i].out)
		default:
			same++
		}
	}
	if refused < 5 || same < len(docs)-refused {
		t.Fatalf("%d identical, %d refused of %d", same, refused, len(docs))
	}
	t.Logf("%d payloads byte-identical to RetryCommand's, %d refused where PHP would push \"null\"", same, refused)
}

func TestResetForRetryReservedCopy(t *testing.T) {
	got, err := ResetForRetry(sample(t, "S8r"))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"pushedAt":"1729411372.3932","uuid":"12e2071b-a412-410a-8d8a-68721001ce01","timeout":null,"tags":[],` +
		`"id":"12e2071b-a412-410a-8d8a-68721001ce01","maxExceptions":null,"backoff":null,"displayName":"App\\Jobs\\TestJob",` +
		`"maxTries":null,"type":"job","failOnTimeout":false,"silenced":false,"retryUntil":null,` +
		`"data":{"command":"O:16:\"App\\Jobs\\TestJob\":1:{s:5:\"queue\";s:7:\"default\";}","commandName":"App\\Jobs\\TestJob"},` +
		`"job":"Illuminate\\Queue\\CallQueuedHandler@call","attempts":0}`
	if string(got) != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// A raw-UTF-8 payload comes back \u-escaped, and the -0 float becomes 0.
	got, err = ResetForRetry([]byte(`{"d":"é\/😀","n":-0.0,"attempts":4}`))
	if err != nil || string(got) != `{"d":"\u00e9\/\ud83d\ude00","n":0,"attempts":0}` {
		t.Errorf("got %s %v", got, err)
	}
	if _, err := ResetForRetry([]byte(`{"attempts":1,"x":1e400}`)); err == nil || !strings.Contains(err.Error(), "error code 7") {
		t.Errorf("Inf: %v", err)
	}
}

// popReserve does what Laravel's pop script does to a popped job, on a real Redis: decode
// with cjson, attempts + 1, encode. An error here means the job would be lost.
const popReserve = `local job = cjson.decode(ARGV[1])
job['attempts'] = job['attempts'] + 1
return cjson.encode(job)`

func TestCheckPushRawAgainstRedisCjson(t *testing.T) {
	built, err := BuildObject(ObjectJob{CommandName: `App\Jobs\A`, Command: "O:10:\"App\\Jobs\\A\":0:{}"}, Shape{CreatedAt: true, BatchID: true, DeleteWhenMissingModels: true})
	if err != nil {
		t.Fatal(err)
	}
	builtStr, err := BuildString("A@b", []byte(`{"x":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		in         string
		refuse     bool
		redisFails bool // the pop script fails: the job would be lost
		why        string
	}{
		{`{"job":"X@y","data":[],"attempts":0}`, false, false, ""},
		{string(built), false, false, ""},
		{string(builtStr), false, false, ""},
		{string(sample(t, "S12r")), false, false, ""},
		{string(sample(t, "S7")), false, false, ""},
		{`{"attempts":"2"}`, false, false, ""},
		{`{"attempts":" 2 "}`, false, false, ""},
		{`{"attempts":1.5}`, false, false, ""},
		{`{"attempts":1e300}`, false, false, ""},
		{`{"attempts":0,"x":` + strings.Repeat("[", 510) + strings.Repeat("]", 510) + `}`, false, false, ""},
		{`{"job":"X@y","data":{"a":1}}`, true, true, "missing"},
		{string(sample(t, "S9")), true, true, "missing"}, // a database-queue payload has no attempts
		{`{"attempts":null}`, true, true, "null is not numeric"},
		{`{"attempts":true}`, true, true, "boolean"},
		{`{"attempts":"abc"}`, true, true, `"abc" is not numeric`},
		{`{"attempts":""}`, true, true, "not numeric"},
		{`{"attempts":[]}`, true, true, "an array"},
		{`{"attempts":{"a":1}}`, true, true, "an array"},
		{`{"attempts":"1e400"}`, true, true, "not numeric"},
		{`{"attempts":0,"x":1e400}`, true, true, "x: number beyond the double range"},
		{`{"attempts":0,"x":{"y":[1,-1e999]}}`, true, true, "x.y.1: number beyond"},
		{`{"attempts":0,"x":"\ud800"}`, true, true, "surrogate"},
		{`{"attempts":0,"x":"\udc00"}`, true, true, "surrogate"},
		{`{"attempts":0`, true, true, "expected ',' or '}'"},
		{`{"attempts":0,"x":` + strings.Repeat("[", 1000) + strings.Repeat("]", 1000) + `}`, true, true, "depth"},
		{`[0]`, true, true, "must be a JSON object, found array"},
		{`"attempts"`, true, true, "found string"},
		{`5`, true, true, "found number"},
		{`null`, true, true, "found null"},
		{``, true, true, "found end of input"},
		// Redis would take these, but a PHP worker could not read them (or PHP's own
		// arithmetic would not see a number).
		{`{"attempts":0,"x":` + strings.Repeat("[", 511) + strings.Repeat("]", 511) + `}`, true, false, "depth"},
		{"{\"attempts\":0,\"x\":\"\xff\"}", true, false, "Malformed UTF-8"},
		{"{\"attempts\":0,\"x\":\"a\tb\"}", true, false, "control character"},
		{`{"attempts":"0x10"}`, true, false, "not numeric"},
	}
	ctx := context.Background()
	rdb := testenv.RedisServer(t).Client(t, 0)
	for _, c := range cases {
		err := CheckPushRaw([]byte(c.in))
		if (err != nil) != c.refuse || (err != nil && !strings.Contains(err.Error(), c.why)) {
			t.Errorf("CheckPushRaw(%.60q) = %v, want refuse=%v (%s)", c.in, err, c.refuse, c.why)
		}
		_, rerr := rdb.Eval(ctx, popReserve, nil, c.in).Result()
		if (rerr != nil) != c.redisFails {
			t.Errorf("redis pop step on %.60q: err %v, expected failure=%v", c.in, rerr, c.redisFails)
		}
		if err == nil && rerr != nil {
			t.Errorf("CheckPushRaw accepted %.60q but the pop script fails: %v", c.in, rerr)
		}
	}
}
