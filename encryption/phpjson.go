package encryption

import (
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/laraq/laraq/internal/php"
)

// The Encrypter reads its envelope with json_decode($json, true), and whatever PHP's
// parser refuses makes the payload invalid. It is stricter than encoding/json in ways an
// attacker controls: an escaped lone UTF-16 surrogate ("\ud800") or invalid UTF-8 in a
// string is an error (Go substitutes U+FFFD), nesting deeper than 511 arrays/objects is
// an error (the default depth of 512 counts the scalar level), and "TRUE" is not a
// literal. Numbers never fail (1e400 is INF to PHP), and of duplicate keys the last
// wins. parseEnvelope follows those rules and keeps only the four top-level fields the
// Encrypter looks at.

// maxJSONNesting is the deepest nesting of arrays and objects json_decode accepts with
// its default depth of 512.
const maxJSONNesting = 511

// jsonKind is what PHP's isset() and is_string() see of a top-level field.
type jsonKind uint8

const (
	kindAbsent jsonKind = iota // missing or null: isset() is false
	kindString
	kindOther // number, bool, array or object
)

// field is one top-level member of the envelope.
type field struct {
	kind jsonKind
	str  string // the decoded string, for kindString
	// empty is PHP's empty() of the value: null, false, 0, 0.0, "", "0" and [] are empty.
	empty bool
	// digits is the literal of an unsigned JSON integer that fits PHP's int (Laravel
	// before 9.44 let such an iv through to base64_decode as its decimal string).
	digits string
}

// isEmpty is PHP's empty($payload['…']), which is also true for a missing member.
func (f *field) isEmpty() bool { return f.kind == kindAbsent || f.empty }

// envelope holds the members of the decoded payload that the Encrypter reads.
type envelope struct {
	iv, value, mac, tag field
}

// jsonError says why json_decode would return null, and where.
type jsonError struct {
	off int
	msg string
}

func (e *jsonError) Error() string { return fmt.Sprintf("%s at byte %d of the JSON", e.msg, e.off) }

type jsonParser struct {
	s   []byte
	i   int
	env envelope
}

// parseEnvelope decodes data as json_decode($data, true) would and returns the iv,
// value, mac and tag members; isObject is false when the top level is not a JSON object
// (json_decode gives no array with those keys then).
func parseEnvelope(data []byte) (env envelope, isObject bool, err error) {
	p := &jsonParser{s: data}
	p.ws()
	isObject = p.i < len(p.s) && p.s[p.i] == '{'
	if _, err := p.parseValue(0, true); err != nil {
		return envelope{}, false, err
	}
	p.ws()
	if p.i != len(p.s) {
		return envelope{}, false, p.errf("unexpected data after the JSON value")
	}
	return p.env, isObject, nil
}

func (p *jsonParser) errf(format string, args ...any) *jsonError {
	return &jsonError{off: p.i, msg: fmt.Sprintf(format, args...)}
}

func (p *jsonParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// parseValue parses one value at nesting depth (the number of enclosing arrays and
// objects) and describes it as a field. top is true for the document itself, whose
// object members are recorded.
func (p *jsonParser) parseValue(depth int, top bool) (field, error) {
	if p.i >= len(p.s) {
		return field{}, p.errf("unexpected end of the JSON")
	}
	switch c := p.s[p.i]; {
	case c == '{':
		return p.object(depth+1, top)
	case c == '[':
		return p.array(depth + 1)
	case c == '"':
		s, err := p.str()
		if err != nil {
			return field{}, err
		}
		return field{kind: kindString, str: s, empty: s == "" || s == "0"}, nil
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return field{kind: kindOther}, p.literal("true")
	case c == 'f':
		return field{kind: kindOther, empty: true}, p.literal("false")
	case c == 'n':
		return field{kind: kindAbsent, empty: true}, p.literal("null")
	default:
		return field{}, p.errf("syntax error")
	}
}

func (p *jsonParser) literal(lit string) error {
	if len(p.s)-p.i < len(lit) || string(p.s[p.i:p.i+len(lit)]) != lit {
		return p.errf("syntax error")
	}
	p.i += len(lit)
	return nil
}

func (p *jsonParser) object(depth int, top bool) (field, error) {
	if depth > maxJSONNesting {
		return field{}, p.errf("maximum stack depth exceeded")
	}
	p.i++ // {
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return field{kind: kindOther, empty: true}, nil
	}
	for {
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return field{}, p.errf("syntax error: object key expected")
		}
		key, err := p.str()
		if err != nil {
			return field{}, err
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return field{}, p.errf("syntax error: ':' expected")
		}
		p.i++
		p.ws()
		f, err := p.parseValue(depth, false)
		if err != nil {
			return field{}, err
		}
		if top {
			// json_decode keeps the last of duplicate keys.
			switch key {
			case "iv":
				p.env.iv = f
			case "value":
				p.env.value = f
			case "mac":
				p.env.mac = f
			case "tag":
				p.env.tag = f
			}
		}
		p.ws()
		if p.i >= len(p.s) {
			return field{}, p.errf("unexpected end of the JSON")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return field{kind: kindOther}, nil
		default:
			return field{}, p.errf("syntax error: ',' or '}' expected")
		}
	}
}

func (p *jsonParser) array(depth int) (field, error) {
	if depth > maxJSONNesting {
		return field{}, p.errf("maximum stack depth exceeded")
	}
	p.i++ // [
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return field{kind: kindOther, empty: true}, nil
	}
	for {
		p.ws()
		if _, err := p.parseValue(depth, false); err != nil {
			return field{}, err
		}
		p.ws()
		if p.i >= len(p.s) {
			return field{}, p.errf("unexpected end of the JSON")
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return field{kind: kindOther}, nil
		default:
			return field{}, p.errf("syntax error: ',' or ']' expected")
		}
	}
}

// number parses RFC 8259's number grammar, which PHP's scanner shares.
func (p *jsonParser) number() (field, error) {
	start := p.i
	if p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case p.i < len(p.s) && p.s[p.i] >= '1' && p.s[p.i] <= '9':
		for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
			p.i++
		}
	default:
		return field{}, p.errf("syntax error in a number")
	}
	isInt := true
	if p.i < len(p.s) && p.s[p.i] == '.' {
		isInt = false
		p.i++
		if !p.digits() {
			return field{}, p.errf("syntax error in a number")
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		isInt = false
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return field{}, p.errf("syntax error in a number")
		}
	}
	lit := string(p.s[start:p.i])
	// PHP reads an integer that overflows its int as a float, and any float that
	// underflows as 0.0; either way empty() is true only for a zero value.
	f, _ := strconv.ParseFloat(lit, 64)
	out := field{kind: kindOther, empty: f == 0}
	if isInt && lit[0] != '-' {
		if _, err := strconv.ParseInt(lit, 10, 64); err == nil {
			out.digits = lit
		}
	}
	return out, nil
}

func (p *jsonParser) digits() bool {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

// plainByte marks the bytes a string holds as they are: printable ASCII but '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

// str parses a string literal and returns its decoded bytes.
func (p *jsonParser) str() (string, error) {
	p.i++ // opening quote
	var buf []byte
	start := p.i
	for {
		for p.i < len(p.s) && plainByte[p.s[p.i]] {
			p.i++
		}
		if p.i >= len(p.s) {
			return "", p.errf("unexpected end of the JSON in a string")
		}
		c := p.s[p.i]
		switch {
		case c == '"':
			var s string
			if buf == nil {
				s = string(p.s[start:p.i])
			} else {
				s = string(append(buf, p.s[start:p.i]...))
			}
			p.i++
			return s, nil
		case c < 0x20:
			return "", p.errf("control character in a string")
		case c == '\\':
			buf = append(buf, p.s[start:p.i]...)
			var err error
			if buf, err = p.escape(buf); err != nil {
				return "", err
			}
			start = p.i
		case c < utf8.RuneSelf:
			p.i++
		default:
			r, size := utf8.DecodeRune(p.s[p.i:])
			if r == utf8.RuneError && size <= 1 {
				return "", p.errf("malformed UTF-8 in a string")
			}
			p.i += size
		}
	}
}

// escape decodes the escape sequence at p.i (a backslash) onto buf.
func (p *jsonParser) escape(buf []byte) ([]byte, error) {
	if p.i+1 >= len(p.s) {
		return nil, p.errf("unexpected end of the JSON in a string")
	}
	out, n, unpaired := php.AppendJSONEscape(buf, p.s[p.i:])
	switch {
	case n == 0 && p.s[p.i+1] == 'u':
		return nil, p.errf("syntax error: invalid \\u escape in a string")
	case n == 0:
		return nil, p.errf("syntax error: invalid escape in a string")
	case unpaired:
		return nil, p.errf("single unpaired UTF-16 surrogate in a unicode escape")
	}
	p.i += n
	return out, nil
}
