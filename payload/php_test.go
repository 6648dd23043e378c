package payload

import (
	"bytes"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// phpFlags is the json_encode() bitmask for our flags.
func phpFlags(f JSONFlags) int {
	n := 0
	if f&JSONUnescapedSlashes != 0 {
		n |= 64
	}
	if f&JSONUnescapedUnicode != 0 {
		n |= 256
	}
	if f&JSONUnescapedLineTerminators != 0 {
		n |= 2048
	}
	return n
}

// phpResult is one line of a testdata/php/payload_*.php answer.
type phpResult struct {
	out  []byte
	err  string // "" on success, else the text after "!ERR "
	code int    // json_last_error() code of a failure, when the script gives one
}

// runPHP feeds lines to a harness script and returns one result per line.
func runPHP(t *testing.T, script string, args []string, lines []string) []phpResult {
	t.Helper()
	testenv.NeedPHP(t)
	stdin := []byte(strings.Join(lines, "\n") + "\n")
	out := testenv.PHPEnv{}.Run(t, stdin, script, args...)
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	if len(got) != len(lines) {
		t.Fatalf("%s: %d answers for %d lines:\n%.2000s", script, len(got), len(lines), out)
	}
	res := make([]phpResult, len(got))
	for i, l := range got {
		if rest, ok := strings.CutPrefix(l, "!ERR "); ok {
			res[i].err = rest
			code, _, _ := strings.Cut(rest, " ")
			res[i].code, _ = strconv.Atoi(code)
			continue
		}
		b, err := hex.DecodeString(l)
		if err != nil {
			t.Fatalf("%s: bad answer line %d: %q", script, i, l)
		}
		res[i].out = b
	}
	return res
}

// phpEncodeStrings asks PHP for json_encode($s, flags) of every string.
func phpEncodeStrings(t *testing.T, flags JSONFlags, strs []string) []phpResult {
	lines := make([]string, len(strs))
	for i, s := range strs {
		lines[i] = strconv.Itoa(phpFlags(flags)) + " " + hex.EncodeToString([]byte(s))
	}
	return runPHP(t, "payload_json.php", []string{"encode"}, lines)
}

// phpRoundTrip asks PHP for json_encode(json_decode($doc, true), flags).
func phpRoundTrip(t *testing.T, flags JSONFlags, docs []string) []phpResult {
	lines := make([]string, len(docs))
	for i, d := range docs {
		lines[i] = strconv.Itoa(phpFlags(flags)) + " " + hex.EncodeToString([]byte(d))
	}
	return runPHP(t, "payload_json.php", []string{"roundtrip"}, lines)
}

// sameAsPHP compares one Go result with PHP's; it returns a description of the
// difference or "".
func sameAsPHP(got []byte, err error, php phpResult) string {
	switch {
	case php.err != "" && err == nil:
		return "PHP fails (" + php.err + ") but Go wrote " + strconv.Quote(string(got))
	case php.err == "" && err != nil:
		return "PHP wrote " + strconv.Quote(string(php.out)) + " but Go failed: " + err.Error()
	case php.err == "" && !bytes.Equal(got, php.out):
		return "Go " + strconv.Quote(string(got)) + " != PHP " + strconv.Quote(string(php.out))
	}
	return ""
}
