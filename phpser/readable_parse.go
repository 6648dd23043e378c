package phpser

import (
	"bytes"
	"encoding/base64"
	"math"
	"strconv"
	"strings"

	"github.com/laraq/laraq/internal/php"
)

// UnmarshalReadable builds a value from its readable JSON form (see MarshalReadable):
//
//   - {"@class": "C", "prop": ...} is an object of class C. Property names may carry
//     PHP's visibility mangling ("\u0000*\u0000name" protected, "\u0000Class\u0000name"
//     private); plain names are public. Properties are always written as string keys.
//   - {"@class": "C", "@serialized": "data"} is a C: object, {"@enum": "C:Case"} an
//     enum case, {"@binary": "<base64>"} a string of those bytes, {"@float": "INF"}
//     (or "-INF", "NAN") that float.
//   - any other JSON object is an array; keys that are canonical decimal integers
//     ("10", "-3", not "007") become int keys, as PHP's arrays make them. A JSON array
//     is a list.
//   - numbers with '.', 'e' or 'E' are floats, others ints (int64; larger is an error).
//   - a key that starts with "@@" stands for the key with one "@" less, a key
//     "@binary:<base64>" for those bytes.
//
// What MarshalReadable loses does not come back: references are expanded copies,
// visibility is stripped, and an int key in an object body (from __serialize) reads back as a string name. For every
// other value, Encode(UnmarshalReadable(MarshalReadable(v))) == Encode(v).
func UnmarshalReadable(data []byte) (*Value, error) {
	p := readableParser{s: data}
	p.ws()
	v, err := p.value(0)
	if err != nil {
		return nil, err
	}
	p.ws()
	if p.i != len(p.s) {
		return nil, p.errf("unexpected data after the value")
	}
	return &v, nil
}

type readableParser struct {
	s []byte
	i int
}

func (p *readableParser) errf(msg string) error {
	if p.i >= len(p.s) {
		return &SyntaxError{Offset: len(p.s), Msg: "unexpected end of input, " + msg}
	}
	return &SyntaxError{Offset: p.i, Msg: msg}
}

func (p *readableParser) expected(what string) error {
	if p.i >= len(p.s) {
		return &SyntaxError{Offset: len(p.s), Msg: "unexpected end of input, expected " + what}
	}
	return &SyntaxError{Offset: p.i, Msg: "expected " + what + ", found " + quoteByte(p.s[p.i])}
}

func (p *readableParser) ws() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *readableParser) literal(word string) bool {
	if bytes.HasPrefix(p.s[p.i:], []byte(word)) {
		p.i += len(word)
		return true
	}
	return false
}

func (p *readableParser) value(depth int) (Value, error) {
	if p.i >= len(p.s) {
		return Value{}, p.expected("a JSON value")
	}
	switch c := p.s[p.i]; {
	case c == '{' || c == '[':
		// depth counts the JSON objects and arrays around this one. Every one of them
		// that has a member is a PHP level (an object, or an array with an element),
		// so the PHP depth limit is checked once the value is built and known to be
		// such a level; the innermost one may be an empty array or a marker, which
		// PHP does not count, hence one JSON level more.
		if depth > DefaultMaxDepth {
			return Value{}, p.errf("JSON nested deeper than " + strconv.Itoa(DefaultMaxDepth+1) + " levels")
		}
		start := p.i
		var v Value
		var err error
		if c == '{' {
			v, err = p.object(depth + 1)
		} else {
			v, err = p.list(depth + 1)
		}
		if err == nil && depth >= DefaultMaxDepth && (v.kind == KindObject || (v.kind == KindArray && v.num > 0)) {
			return Value{}, &SyntaxError{Offset: start, Msg: v.kind.String() + " nested " + strconv.Itoa(depth+1) +
				" levels deep, deeper than the limit of " + strconv.Itoa(DefaultMaxDepth) + " (PHP's unserialize_max_depth)"}
		}
		return v, err
	case c == '"':
		s, err := p.str()
		if err != nil {
			return Value{}, err
		}
		return Value{kind: KindString, str: s}, nil
	case c == 't':
		if p.literal("true") {
			return Value{kind: KindBool, num: 1}, nil
		}
	case c == 'f':
		if p.literal("false") {
			return Value{kind: KindBool}, nil
		}
	case c == 'n':
		if p.literal("null") {
			return Value{}, nil
		}
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number()
	}
	return Value{}, p.expected("a JSON value")
}

func (p *readableParser) number() (Value, error) {
	start := p.i
	s := p.s
	i := p.i
	if s[i] == '-' {
		i++
	}
	switch {
	case i < len(s) && s[i] == '0':
		i++
	case i < len(s) && s[i] >= '1' && s[i] <= '9':
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	default:
		p.i = i
		return Value{}, p.expected("a digit")
	}
	isFloat := false
	if i < len(s) && s[i] == '.' {
		isFloat = true
		i++
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			p.i = i
			return Value{}, p.expected("a digit")
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		isFloat = true
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		if i == d {
			p.i = i
			return Value{}, p.expected("a digit")
		}
	}
	p.i = i
	text := string(s[start:i])
	if isFloat {
		f, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return Value{}, &SyntaxError{Offset: start, Msg: "float " + text + " out of range"}
		}
		return *Float(f), nil
	}
	n, err := strconv.ParseInt(text, 10, 64)
	if err != nil {
		return Value{}, &SyntaxError{Offset: start, Msg: "integer " + text + " out of int64 range"}
	}
	return Value{kind: KindInt, num: n}, nil
}

// str parses a JSON string. Raw bytes are kept as they are; escapes of lone
// surrogates become U+FFFD.
func (p *readableParser) str() (string, error) {
	s := p.s
	i := p.i + 1
	var b []byte
	start := i
	for {
		if i >= len(s) {
			p.i = i
			return "", p.expected("'\"'")
		}
		c := s[i]
		switch {
		case c == '"':
			p.i = i + 1
			if b == nil {
				return string(s[start:i]), nil
			}
			return string(append(b, s[start:i]...)), nil
		case c < 0x20:
			p.i = i
			return "", p.errf("control character in string")
		case c == '\\':
			b = append(b, s[start:i]...)
			if i+1 >= len(s) {
				p.i = i + 1
				return "", p.expected("an escape")
			}
			var n int
			if b, n, _ = php.AppendJSONEscape(b, s[i:]); n == 0 {
				p.i = i
				if s[i+1] == 'u' {
					return "", p.errf("invalid \\u escape")
				}
				return "", p.errf("invalid escape " + quoteByte(s[i+1]))
			}
			i += n
			start = i
		default:
			i++
		}
	}
}

func (p *readableParser) list(depth int) (Value, error) {
	p.i++ // [
	var ents []Entry
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return Value{kind: KindArray}, nil
	}
	for {
		p.ws()
		v, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		ents = append(ents, Entry{Key: IntKey(int64(len(ents))), Value: v})
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == ']' {
			p.i++
			return container(KindArray, "", ents), nil
		}
		return Value{}, p.expected("',' or ']'")
	}
}

type member struct {
	key    string // as written
	off    int
	val    Value
	name   string // the array key or property name it stands for
	marker bool   // @class, @enum, ...
	binary bool   // name came from "@binary:…" and is taken as it is
}

func (p *readableParser) object(depth int) (Value, error) {
	p.i++ // {
	var ms []member
	p.ws()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return Value{kind: KindArray}, nil
	}
	for {
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return Value{}, p.expected("a string key")
		}
		off := p.i
		k, err := p.str()
		if err != nil {
			return Value{}, err
		}
		p.ws()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return Value{}, p.expected("':'")
		}
		p.i++
		p.ws()
		v, err := p.value(depth)
		if err != nil {
			return Value{}, err
		}
		ms = append(ms, member{key: k, off: off, val: v})
		p.ws()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		if p.i < len(p.s) && p.s[p.i] == '}' {
			p.i++
			break
		}
		return Value{}, p.expected("',' or '}'")
	}
	return buildReadableObject(ms)
}

func markerString(m *member, want string) (string, error) {
	if m.val.kind != KindString {
		return "", &SyntaxError{Offset: m.off, Msg: want + " must be a string"}
	}
	return m.val.str, nil
}

func buildReadableObject(ms []member) (Value, error) {
	var class, enum, binary, float, serialized *member
	n := 0
	for i := range ms {
		m := &ms[i]
		m.name = m.key
		if len(m.key) == 0 || m.key[0] != '@' {
			continue
		}
		if strings.HasPrefix(m.key, "@@") {
			m.name = m.key[1:]
			continue
		}
		if b64, ok := strings.CutPrefix(m.key, "@binary:"); ok {
			raw, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return Value{}, &SyntaxError{Offset: m.off, Msg: "key " + strconv.Quote(m.key) + " is not base64"}
			}
			m.name, m.binary = string(raw), true
			continue
		}
		m.marker = true
		n++
		switch m.key {
		case "@class":
			class = m
		case "@enum":
			enum = m
		case "@binary":
			binary = m
		case "@float":
			float = m
		case "@serialized":
			serialized = m
		case "@recursion":
			return Value{}, &SyntaxError{Offset: m.off, Msg: "a @recursion marker cannot be rebuilt"}
		default:
			return Value{}, &SyntaxError{Offset: m.off, Msg: "unknown marker key " + strconv.Quote(m.key) + " (write \"@" + m.key + "\" for a key that starts with @)"}
		}
	}
	only := func(m *member, allowed int) error {
		if len(ms) != allowed {
			return &SyntaxError{Offset: m.off, Msg: m.key + " cannot be combined with other keys"}
		}
		return nil
	}
	switch {
	case enum != nil:
		if err := only(enum, 1); err != nil {
			return Value{}, err
		}
		s, err := markerString(enum, "@enum")
		if err != nil {
			return Value{}, err
		}
		i := strings.IndexByte(s, ':')
		if i < 0 || !validClass(s[:i]) || !validIdent(s[i+1:]) {
			return Value{}, &SyntaxError{Offset: enum.off, Msg: "@enum " + strconv.Quote(s) + " is not \"Class:Case\""}
		}
		return Value{kind: KindEnum, str: s}, nil
	case float != nil:
		if err := only(float, 1); err != nil {
			return Value{}, err
		}
		s, err := markerString(float, "@float")
		if err != nil {
			return Value{}, err
		}
		switch s {
		case "INF":
			return *Float(math.Inf(1)), nil
		case "-INF":
			return *Float(math.Inf(-1)), nil
		case "NAN":
			return *Float(math.NaN()), nil
		}
		return Value{}, &SyntaxError{Offset: float.off, Msg: "@float " + strconv.Quote(s) + " is not INF, -INF or NAN (finite floats are JSON numbers)"}
	case binary != nil:
		if err := only(binary, 1); err != nil {
			return Value{}, err
		}
		s, err := markerString(binary, "@binary")
		if err != nil {
			return Value{}, err
		}
		raw, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			return Value{}, &SyntaxError{Offset: binary.off, Msg: "@binary is not base64: " + err.Error()}
		}
		return Value{kind: KindString, str: string(raw)}, nil
	case serialized != nil:
		if class == nil {
			return Value{}, &SyntaxError{Offset: serialized.off, Msg: "@serialized needs @class"}
		}
		if err := only(serialized, 2); err != nil {
			return Value{}, err
		}
		c, err := markerString(class, "@class")
		if err != nil {
			return Value{}, err
		}
		if !validClass(c) {
			return Value{}, &SyntaxError{Offset: class.off, Msg: "invalid class name " + strconv.Quote(c)}
		}
		if serialized.val.kind != KindString {
			return Value{}, &SyntaxError{Offset: serialized.off, Msg: "@serialized must be a string"}
		}
		return *NewCustom(c, serialized.val.str), nil
	case class != nil:
		if n != 1 {
			return Value{}, &SyntaxError{Offset: class.off, Msg: "@class cannot be combined with other markers"}
		}
		c, err := markerString(class, "@class")
		if err != nil {
			return Value{}, err
		}
		if !validClass(c) {
			return Value{}, &SyntaxError{Offset: class.off, Msg: "invalid class name " + strconv.Quote(c)}
		}
		ents := make([]Entry, 0, len(ms)-1)
		seen := map[string]bool{}
		for i := range ms {
			m := &ms[i]
			if m == class {
				continue
			}
			name := m.name
			if seen[name] {
				return Value{}, &SyntaxError{Offset: m.off, Msg: "duplicate property " + strconv.Quote(name)}
			}
			seen[name] = true
			ents = append(ents, Entry{Key: StrKey(name), Value: m.val})
		}
		return container(KindObject, c, ents), nil
	}
	ents := make([]Entry, 0, len(ms))
	seen := map[Key]bool{}
	for i := range ms {
		m := &ms[i]
		name := m.name
		k := StrKey(name)
		if n, ok := canonicalInt(name); ok && !m.binary {
			k = IntKey(n)
		}
		if seen[k] {
			return Value{}, &SyntaxError{Offset: m.off, Msg: "duplicate array key " + strconv.Quote(name)}
		}
		seen[k] = true
		ents = append(ents, Entry{Key: k, Value: m.val})
	}
	return container(KindArray, "", ents), nil
}
