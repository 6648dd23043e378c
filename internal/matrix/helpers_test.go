package matrix

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/phpser"
)

// phpView is one line of testdata/php/unserialize.php: what the release's worker makes
// of a queued payload.
type phpView struct {
	Class string         `json:"class"`
	Props []testkit.Prop `json:"props"`
	Job   string         `json:"job"`
	Data  testkit.Canon  `json:"data"`
	Error string         `json:"error"`
}

// unserializeInPHP runs unserialize.php once over the payloads.
func unserializeInPHP(t *testing.T, env testenv.PHPEnv, payloads [][]byte) []phpView {
	t.Helper()
	var in bytes.Buffer
	for _, p := range payloads {
		in.Write(bytes.TrimSpace(p))
		in.WriteByte('\n')
	}
	out := env.Run(t, in.Bytes(), "unserialize.php")
	var views []phpView
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var v phpView
		if err := json.Unmarshal(line, &v); err != nil {
			t.Fatalf("unserialize.php: %q: %v", line, err)
		}
		views = append(views, v)
	}
	if len(views) != len(payloads) {
		t.Fatalf("unserialize.php answered %d lines for %d payloads", len(views), len(payloads))
	}
	return views
}

// compareUnserialized compares Go's view of a whole command (JobInfo.Unserialized) with
// PHP's: the same properties, by mangled name, in the same order, with the same values.
func compareUnserialized(class string, props []testkit.Prop, v *phpser.Value) []string {
	var diffs []string
	ents := v.Deref().Entries()
	var goKeys, phpKeys []string
	for _, e := range ents {
		if n, _, _ := e.Key.Name(); n != "job" { // PHP's records leave the runtime job out
			goKeys = append(goKeys, e.Key.Str())
		}
	}
	for _, p := range props {
		phpKeys = append(phpKeys, p.K)
	}
	if strings.Join(goKeys, "|") != strings.Join(phpKeys, "|") {
		return []string{fmt.Sprintf("%s: properties\n  go  %q\n  php %q", class, goKeys, phpKeys)}
	}
	i := 0
	for _, e := range ents {
		if n, _, _ := e.Key.Name(); n == "job" {
			continue
		}
		p := props[i]
		i++
		name, _, _ := phpser.UnmangleName(p.K)
		path := class + "." + name
		x := e.Value.Deref()
		if x.Kind() == phpser.KindObject && x.Class() == phpser.ModelIdentifierClass {
			var mi phpser.ModelIdentifier
			if err := x.Decode(&mi); err != nil {
				diffs = append(diffs, fmt.Sprintf("%s: %v", path, err))
				continue
			}
			diffs = append(diffs, testkit.CompareCanon(path, p.V, reflect.ValueOf(mi))...)
			continue
		}
		var a any
		if err := x.Decode(&a); err != nil {
			diffs = append(diffs, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		diffs = append(diffs, testkit.CompareCanon(path, p.V, reflect.ValueOf(&a).Elem())...)
	}
	return diffs
}

// compareGoFields compares only the Go struct's fields with PHP's properties (for
// framework classes whose Go twin mirrors a few of them).
func compareGoFields(class string, props []testkit.Prop, v any) []string {
	byName := map[string]testkit.Canon{}
	for _, p := range props {
		name, _, _ := phpser.UnmangleName(p.K)
		byName[name] = p.V
	}
	rv := reflect.ValueOf(v)
	for rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	return testkit.CompareFields(class, byName, rv, nil)
}

// matrixArgs are dispatch.php's options for a matrix run of a major: the matrix clock
// and seeded ids.
func matrixArgs(major int) []string {
	return []string{fmt.Sprint("--now=", matrixNow.Unix()), "--seed=matrix-" + testenv.MajorName(major)}
}

// fixedClock returns the clock of the matrix, plus d.
func fixedClock(d time.Duration) func() time.Time {
	return func() time.Time { return matrixNow.Add(d) }
}

// matrixClient is the PHP Redis client of a major in one of the matrix tests (which 0
// or 1): the two tests take turns, so that 10-13 each run with phpredis in one and predis
// in the other (8.83's predis runs are the older tests').
func matrixClient(major, which int) string {
	if major != 8 && (major+which)%2 == 1 {
		return "predis"
	}
	return "phpredis"
}
