package payload

import (
	"bytes"
	"fmt"
	"testing"
)

// The shapes of the releases captured in testdata/laravel-payloads before 8.43: 5.8 and
// 6.x (no uuid, no maxExceptions), 7.x (uuid and maxExceptions), all three with the
// per-job delay and timeoutAt and json_encode without flags; 8.83 and 9.x write the zero
// Shape.
var capturedShapes = map[string]Shape{
	"L5": {RetryDelay: true, NoUUID: true, NoFailOnTimeout: true, EscapeUnicode: true},
	"L6": {RetryDelay: true, NoUUID: true, NoFailOnTimeout: true, EscapeUnicode: true},
	"L7": {RetryDelay: true, NoFailOnTimeout: true, EscapeUnicode: true},
	"L8": {},
	"L9": {},
}

// TestBuildMatchesOldReleases: BuildObject and BuildString rebuild the payloads 5.8.38,
// 6.20.44, 7.30.7, 8.83 and 9.52.22 queued (captured by testdata/php/dispatch.php), byte
// for byte, from the envelope's own values: key order, the 5.8–7.x delay and timeoutAt,
// no uuid before 7.x, \u escapes before 8.82.
func TestBuildMatchesOldReleases(t *testing.T) {
	for major, shape := range capturedShapes {
		for _, name := range []string{"plain", "visibility", "carbon", "meta", "delayed", "defaults", "meta-defaults", "meta-methods", "models", "listener", "notification", "mail", "string"} {
			id := major + "-" + name
			t.Run(id, func(t *testing.T) {
				raw := sample(t, id)
				e := mustParse(t, raw)
				var got []byte
				var err error
				if !e.IsObjectJob() {
					got, err = BuildString(e.Job, e.Data, WithShape(shape), WithID(e.ID), WithUUID(e.UUID))
				} else {
					j := ObjectJob{UUID: e.UUID, ID: e.ID, DisplayName: e.DisplayName, CommandName: e.CommandName, Command: e.Command,
						MaxTries: e.MaxTries, MaxExceptions: e.MaxExceptions, Timeout: e.Timeout, RetryUntil: e.RetryUntil,
						FailOnTimeout: e.FailOnTimeout, Backoff: e.Backoff}
					if shape.RetryDelay {
						j.RetryDelay = e.Delay
					}
					got, err = BuildObject(j, shape)
				}
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, raw) {
					t.Errorf("built\n%s\nLaravel queued\n%s", got, raw)
				}
			})
		}
	}
}

// TestBuildLegacyKeys: the keys each old shape writes, in order, and a retry delay and
// expiry in the 5.8–7.x keys.
func TestBuildLegacyKeys(t *testing.T) {
	j := ObjectJob{UUID: "u", ID: "i", CommandName: "A", Command: "c", MaxTries: i64(3), MaxExceptions: i64(2),
		Timeout: i64(30), RetryUntil: i64(1700000000), RetryDelay: i64(7), Backoff: str("1,5"), FailOnTimeout: true}
	for _, c := range []struct {
		shape      Shape
		keys, vals string
	}{
		{capturedShapes["L5"], "displayName,job,maxTries,delay,timeout,timeoutAt,data,id,attempts", "delay=7 timeoutAt=1700000000"},
		{capturedShapes["L7"], "uuid,displayName,job,maxTries,maxExceptions,delay,timeout,timeoutAt,data,id,attempts", "delay=7 timeoutAt=1700000000"},
		{Shape{NoFailOnTimeout: true}, "uuid,displayName,job,maxTries,maxExceptions,backoff,timeout,retryUntil,data,id,attempts", "delay=<nil> timeoutAt=<nil>"},
	} {
		b, err := BuildObject(j, c.shape)
		if err != nil {
			t.Fatal(err)
		}
		e := mustParse(t, b)
		delay, _ := e.Get("delay")
		at, _ := e.Get("timeoutAt")
		vals := fmt.Sprintf("delay=%s timeoutAt=%s", delay, at)
		if delay == nil {
			vals = fmt.Sprintf("delay=%v timeoutAt=%v", nil, nil)
		}
		if keys(e) != c.keys || vals != c.vals {
			t.Errorf("%+v: keys %s, %s; want %s, %s", c.shape, keys(e), vals, c.keys, c.vals)
		}
		if e.RetryUntil == nil || *e.RetryUntil != 1700000000 {
			t.Errorf("%+v: RetryUntil %v", c.shape, e.RetryUntil)
		}
	}
	s, err := BuildString("A@b", []byte(`{"x":"ü"}`), WithShape(capturedShapes["L5"]), WithID("i"))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"displayName":"A","job":"A@b","maxTries":null,"delay":null,"timeout":null,"data":{"x":"\u00fc"},"id":"i","attempts":0}`; string(s) != want {
		t.Errorf("5.8 string job\n got %s\nwant %s", s, want)
	}
}
