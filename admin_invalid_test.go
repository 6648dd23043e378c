package laraq_test

import (
	"testing"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
)

func TestWhyInvalid(t *testing.T) {
	for in, want := range map[string]string{
		`not json`:              "it is not JSON",
		`["a"]`:                 "it is not a JSON object",
		`{"job":"x"}`:           "it has no attempts",
		`{"attempts":"2"}`:      "",
		`{"attempts":" 0x1f "}`: "",
		`{"attempts":"2abc"}`:   "its attempts is not a number",
		`{"attempts":true}`:     "its attempts is not a number",
		`{"attempts":0}`:        "",
		`{"attempts":null}`:     "it has no attempts",
		`{"attempts":{"a":1}}`:  "its attempts is not a number",
	} {
		if got := laraq.WhyInvalid([]byte(in)); got != want {
			t.Errorf("WhyInvalid(%s) = %q, want %q", in, got, want)
		}
	}
}

// WhyInvalid agrees with Redis' own pop script on which payloads it cannot reserve.
func TestWhyInvalidAgreesWithThePopScript(t *testing.T) {
	t.Parallel()
	e := testkit.NewEnv(t)
	for _, in := range []string{`not json`, `["a"]`, `{"job":"x"}`, `{"attempts":"2"}`, `{"attempts":" 0x1f "}`, `{"attempts":"2abc"}`,
		`{"attempts":true}`, `{"attempts":0}`, `{"attempts":null}`, `{"attempts":{"a":1}}`, `{"attempts":1e3}`, `{}`, `""`, `12`} {
		e.Push("default", []byte(in))
		_, _, err := e.RDB.Pop(e.Ctx, "default", 0)
		if (err != nil) != (laraq.WhyInvalid([]byte(in)) != "") {
			t.Errorf("%s: pop script error %v, WhyInvalid %q", in, err, laraq.WhyInvalid([]byte(in)))
		}
	}
}
