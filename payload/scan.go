package payload

import (
	"bytes"
	"fmt"

	"github.com/laraq/laraq/internal/php"
)

// maxDepth is the nesting limit of Redis' bundled lua-cjson (decode_max_depth): a payload
// nested deeper cannot pass the pop script, so nothing deeper can be a real queued job.
const maxDepth = 1000

// Error is a malformed or ill-typed payload: what is wrong, at which field and at which
// byte offset of the JSON text.
type Error struct {
	Path   string // field path such as "data.command" or "maxTries"; "" for the document
	Offset int    // byte offset into the JSON text where the problem was found; -1 if none
	Msg    string
}

func (e *Error) Error() string {
	switch {
	case e.Offset < 0 && e.Path == "":
		return "payload: " + e.Msg
	case e.Offset < 0:
		return "payload: " + e.Path + ": " + e.Msg
	case e.Path == "":
		return fmt.Sprintf("payload: byte %d: %s", e.Offset, e.Msg)
	}
	return fmt.Sprintf("payload: %s (byte %d): %s", e.Path, e.Offset, e.Msg)
}

// scanner walks a JSON text. It validates the grammar strictly (RFC 8259: no raw control
// characters in strings, no leading zeros, lowercase literals) but, like lua-cjson, does
// not insist on valid UTF-8 inside strings.
type scanner struct {
	buf []byte
	pos int
}

func (s *scanner) errf(path string, format string, args ...any) *Error {
	return &Error{Path: path, Offset: s.pos, Msg: fmt.Sprintf(format, args...)}
}

func (s *scanner) ws() {
	for s.pos < len(s.buf) {
		switch s.buf[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// describe names what sits at the current position, for error messages.
func (s *scanner) describe() string {
	if s.pos >= len(s.buf) {
		return "end of input"
	}
	switch c := s.buf[s.pos]; {
	case c == '"':
		return "string"
	case c == '{':
		return "object"
	case c == '[':
		return "array"
	case c == 't' || c == 'f':
		return "boolean"
	case c == 'n':
		return "null"
	case c == '-' || (c >= '0' && c <= '9'):
		return "number"
	case c >= 0x20 && c < 0x7f:
		return fmt.Sprintf("%q", rune(c))
	default:
		return fmt.Sprintf("byte 0x%02x", c)
	}
}

// expect consumes byte c (after whitespace) or reports what was found instead.
func (s *scanner) expect(path string, c byte) error {
	s.ws()
	if s.pos < len(s.buf) && s.buf[s.pos] == c {
		s.pos++
		return nil
	}
	return s.errf(path, "expected %q, found %s", c, s.describe())
}

// str scans a string starting at the opening quote. It returns the content bounds
// (without quotes) and whether it contains escapes.
func (s *scanner) str(path string) (start, end int, escaped bool, err error) {
	if s.pos >= len(s.buf) || s.buf[s.pos] != '"' {
		return 0, 0, false, s.errf(path, "expected string, found %s", s.describe())
	}
	s.pos++
	start = s.pos
	buf := s.buf
	i := s.pos
	for {
		for i < len(buf) && !strStop[buf[i]] {
			i++
		}
		if i >= len(buf) {
			s.pos = start - 1
			return 0, 0, false, s.errf(path, "unterminated string")
		}
		switch c := buf[i]; {
		case c == '"':
			s.pos = i + 1
			return start, i, escaped, nil
		case c < 0x20:
			s.pos = i
			return 0, 0, false, s.errf(path, "raw control character 0x%02x in string (must be escaped)", c)
		}
		// Backslash.
		escaped = true
		if i+1 >= len(buf) {
			s.pos = i
			return 0, 0, false, s.errf(path, "unterminated escape")
		}
		switch buf[i+1] {
		case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			i += 2
		case 'u':
			if i+6 > len(buf) || !isHex4(buf[i+2:i+6]) {
				s.pos = i
				return 0, 0, false, s.errf(path, `invalid \u escape`)
			}
			i += 6
		default:
			s.pos = i
			return 0, 0, false, s.errf(path, "invalid escape %q", "\\"+string(buf[i+1]))
		}
	}
}

// strStop marks the bytes that end a run of plain string content.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

func isHex4(b []byte) bool {
	for _, c := range b[:4] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// unescape appends the decoded content of an already validated JSON string body. An
// unpaired surrogate escape becomes U+FFFD (tolerant reading; strict readers use
// unescapeStrict).
func unescape(dst, src []byte) []byte {
	dst, _ = unescapeMode(dst, src, false)
	return dst
}

// unescapeStrict is unescape with PHP json_decode's rules: an unpaired surrogate escape is
// an error (JSON_ERROR_UTF16). It returns the offset in src of the bad escape, or -1.
func unescapeStrict(dst, src []byte) ([]byte, int) {
	return unescapeMode(dst, src, true)
}

func unescapeMode(dst, src []byte, strict bool) ([]byte, int) {
	for i := 0; i < len(src); {
		j := bytes.IndexByte(src[i:], '\\')
		if j < 0 {
			return append(dst, src[i:]...), -1
		}
		dst = append(dst, src[i:i+j]...)
		i += j
		var n int
		var unpaired bool
		if dst, n, unpaired = php.AppendJSONEscape(dst, src[i:]); unpaired && strict {
			return dst, i
		}
		if n == 0 {
			n = 2 // a validated string holds no bad escape
		}
		i += n
	}
	return dst, -1
}

// number scans a JSON number and reports whether it is written as a plain integer
// (no fraction, no exponent).
func (s *scanner) number(path string) (start, end int, isInt bool, err error) {
	buf := s.buf
	start = s.pos
	i := s.pos
	if i < len(buf) && buf[i] == '-' {
		i++
	}
	switch {
	case i < len(buf) && buf[i] == '0':
		i++
	case i < len(buf) && buf[i] >= '1' && buf[i] <= '9':
		for i < len(buf) && buf[i] >= '0' && buf[i] <= '9' {
			i++
		}
	default:
		return 0, 0, false, s.errf(path, "invalid number")
	}
	isInt = true
	if i < len(buf) && buf[i] == '.' {
		isInt = false
		i++
		d := i
		for i < len(buf) && buf[i] >= '0' && buf[i] <= '9' {
			i++
		}
		if i == d {
			s.pos = i
			return 0, 0, false, s.errf(path, "invalid number: no digits after '.'")
		}
	}
	if i < len(buf) && (buf[i] == 'e' || buf[i] == 'E') {
		isInt = false
		i++
		if i < len(buf) && (buf[i] == '+' || buf[i] == '-') {
			i++
		}
		d := i
		for i < len(buf) && buf[i] >= '0' && buf[i] <= '9' {
			i++
		}
		if i == d {
			s.pos = i
			return 0, 0, false, s.errf(path, "invalid number: no digits in exponent")
		}
	}
	s.pos = i
	return start, i, isInt, nil
}

// literal consumes true, false or null.
func (s *scanner) literal(path string) error {
	for _, lit := range [...]string{"true", "false", "null"} {
		if len(s.buf)-s.pos >= len(lit) && string(s.buf[s.pos:s.pos+len(lit)]) == lit {
			s.pos += len(lit)
			return nil
		}
	}
	return s.errf(path, "invalid value: unexpected %s", s.describe())
}

// skip validates and steps over one value (after whitespace). depth is the nesting level
// of the containing value.
func (s *scanner) skip(path string, depth int) error {
	s.ws()
	if s.pos >= len(s.buf) {
		return s.errf(path, "expected a value, found end of input")
	}
	switch c := s.buf[s.pos]; {
	case c == '"':
		_, _, _, err := s.str(path)
		return err
	case c == '{':
		if depth+1 > maxDepth {
			return s.errf(path, "nesting deeper than %d levels (Redis' cjson limit)", maxDepth)
		}
		s.pos++
		s.ws()
		if s.pos < len(s.buf) && s.buf[s.pos] == '}' {
			s.pos++
			return nil
		}
		for {
			s.ws()
			if _, _, _, err := s.str(path); err != nil {
				return err
			}
			if err := s.expect(path, ':'); err != nil {
				return err
			}
			if err := s.skip(path, depth+1); err != nil {
				return err
			}
			if done, err := s.next(path, '}'); done || err != nil {
				return err
			}
		}
	case c == '[':
		if depth+1 > maxDepth {
			return s.errf(path, "nesting deeper than %d levels (Redis' cjson limit)", maxDepth)
		}
		s.pos++
		s.ws()
		if s.pos < len(s.buf) && s.buf[s.pos] == ']' {
			s.pos++
			return nil
		}
		for {
			if err := s.skip(path, depth+1); err != nil {
				return err
			}
			if done, err := s.next(path, ']'); done || err != nil {
				return err
			}
		}
	case c == '-' || (c >= '0' && c <= '9'):
		_, _, _, err := s.number(path)
		return err
	default:
		return s.literal(path)
	}
}

// next consumes the separator after a member: ',' (more follow) or the closing byte.
func (s *scanner) next(path string, closing byte) (done bool, err error) {
	s.ws()
	if s.pos < len(s.buf) {
		switch s.buf[s.pos] {
		case ',':
			s.pos++
			return false, nil
		case closing:
			s.pos++
			return true, nil
		}
	}
	return false, s.errf(path, "expected ',' or %q, found %s", closing, s.describe())
}
