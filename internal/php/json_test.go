package php

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendJSONEscape(t *testing.T) {
	for _, c := range []struct {
		src, want string
		n         int
		unpaired  bool
	}{
		{`\n rest`, "\n", 2, false},
		{`\/`, "/", 2, false},
		{`\u00e9`, "é", 6, false},
		{`\ud83d\ude00!`, "😀", 12, false},
		{`\ud83dx`, "\ufffd", 6, true},
		{`\ude00`, "\ufffd", 6, true},
		{`\ud83d\u0041`, "\ufffd", 6, true},
		{`\x`, "", 0, false},
		{`\u12`, "", 0, false},
		{`\u12g4`, "", 0, false},
		{`\`, "", 0, false},
	} {
		got, n, unpaired := AppendJSONEscape(nil, c.src)
		if string(got) != c.want || n != c.n || unpaired != c.unpaired {
			t.Errorf("%q: %q %d %v, want %q %d %v", c.src, got, n, unpaired, c.want, c.n, c.unpaired)
		}
	}
}

// FuzzAppendJSONEscape: any input, no panic; what it takes is within the input; an
// escape that reads as a paired or simple one decodes as encoding/json decodes it.
func FuzzAppendJSONEscape(f *testing.F) {
	for _, s := range []string{`\n`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\u`, `\q`, `\\`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		got, n, unpaired := AppendJSONEscape(nil, src)
		if n < 0 || n > len(src) || n == 0 && len(got) != 0 {
			t.Fatalf("%q: n %d, %q", src, n, got)
		}
		if n == 0 || unpaired {
			return
		}
		var want string
		if err := json.Unmarshal([]byte(`"`+src[:n]+`"`), &want); err != nil || want != string(got) {
			t.Fatalf("%q: %q, encoding/json %q (%v)", src[:n], got, want, err)
		}
	})
}

// FuzzAppendJSONString: whatever json_encode would write reads back as the same string.
func FuzzAppendJSONString(f *testing.F) {
	f.Add("plain", 0)
	f.Add("a/b\"c\\\u2028é😀\x7f\x01", JSONUnescapedUnicode)
	f.Fuzz(func(t *testing.T, s string, flags int) {
		out, bad := AppendJSONString(nil, s, flags&7)
		if bad >= 0 {
			if utf8.ValidString(s) {
				t.Fatalf("%q refused at %d", s, bad)
			}
			return
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil || back != s {
			t.Fatalf("%q wrote %s, reads back %q (%v)", s, out, back, err)
		}
		if flags&JSONUnescapedSlashes == 0 && strings.Contains(string(out), "/") && !strings.Contains(string(out), `\/`) {
			t.Fatalf("%q: unescaped slash in %s", s, out)
		}
	})
}
