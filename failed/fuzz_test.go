package failed

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func FuzzExceptionString(f *testing.F) {
	f.Add(`App\E`, "message", "/a.go", 3, "pkg.f")
	f.Add("", "", "", 0, "")
	f.Add("Bad\xff", "m\xc3\x28\n\nNext x", "/\x00", -1, "f\xff")
	f.Fuzz(func(t *testing.T, class, message, file string, line int, fn string) {
		ex := &Exception{Class: class, Message: message, File: file, Line: line,
			Trace: []Frame{{File: file, Line: line, Function: fn}, {Function: fn}}}
		ex.Previous = &Exception{Class: class, Message: message}
		s := ex.String()
		if !utf8.ValidString(s) {
			t.Fatalf("invalid UTF-8: %q", s)
		}
		if !strings.HasSuffix(s, "#2 {main}") {
			t.Fatalf("does not end with the {main} line: %q", s)
		}
	})
}
