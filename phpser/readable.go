package phpser

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/laraq/laraq/internal/php"
)

// The readable form is JSON that shows a PHP value the way a person reads it:
//
//   - null, bool and string as themselves; a string that is not valid UTF-8 as
//     {"@binary": "<base64>"};
//   - ints as JSON integers (exact int64); floats as JSON numbers that always look
//     like floats (1.0, -0.0, 1.0e+25), and INF, -INF, NAN, which JSON has no number
//     for, as {"@float": "INF"}, {"@float": "-INF"}, {"@float": "NAN"};
//   - an array whose keys are 0..n-1 in order as a JSON array (an empty array is []),
//     any other array as a JSON object (int keys in decimal);
//   - an object as {"@class": "FQCN", "prop": value, ...} with properties in stream
//     order and visibility prefixes stripped (if two properties end up with the same
//     name, e.g. a private property of a parent class, the later keeps its mangled
//     name "\u0000Class\u0000name");
//   - a C: object as {"@class": "FQCN", "@serialized": "<raw data>"};
//   - an enum as {"@enum": "Class:Case"};
//   - a reference as the value it points to; one that leads back into an array or
//     object being printed as {"@recursion": "FQCN"} ({"@recursion": "array"} for an
//     array).
//
// Keys starting with "@" are reserved for the markers above, so an array key or
// property name that starts with "@" is written with one more "@" in front
// ("@x" -> "@@x"); UnmarshalReadable removes it again. A key that is not valid UTF-8
// is written as "@binary:<base64>", and a class name or enum that is not as
// {"@binary": "<base64>"}, so nothing is lost to JSON's need for UTF-8.

// MarshalReadable returns the readable JSON form of v (compact).
func MarshalReadable(v *Value) ([]byte, error) { return AppendReadable(nil, v) }

// MarshalReadableIndent is MarshalReadable indented like json.MarshalIndent.
func MarshalReadableIndent(v *Value, prefix, indent string) ([]byte, error) {
	b, err := AppendReadable(nil, v)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, prefix, indent); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// AppendReadable appends the readable JSON form of v to dst.
func AppendReadable(dst []byte, v *Value) ([]byte, error) {
	if v == nil {
		return dst, errors.New("phpser: MarshalReadable of a nil *Value")
	}
	w := readableWriter{buf: dst, budget: MaxRefExpansion}
	if err := w.value(v); err != nil {
		return dst, err
	}
	return w.buf, nil
}

type readableWriter struct {
	buf    []byte
	active []*Value
	inRef  int
	budget int
}

func (w *readableWriter) value(v *Value) error {
	if w.inRef > 0 {
		w.budget--
		if w.budget < 0 {
			return errors.New("phpser: references expand to more than " + strconv.Itoa(MaxRefExpansion) + " values")
		}
	}
	switch v.kind {
	case KindNull:
		w.buf = append(w.buf, "null"...)
	case KindBool:
		if v.num != 0 {
			w.buf = append(w.buf, "true"...)
		} else {
			w.buf = append(w.buf, "false"...)
		}
	case KindInt:
		w.buf = appendInt(w.buf, v.num)
	case KindFloat:
		w.buf = appendReadableFloat(w.buf, v.Float())
	case KindString:
		w.buf = appendReadableString(w.buf, v.str)
	case KindEnum:
		w.buf = append(w.buf, `{"@enum":`...)
		w.buf = appendReadableString(w.buf, v.str)
		w.buf = append(w.buf, '}')
	case KindCustom:
		w.buf = append(w.buf, `{"@class":`...)
		w.buf = appendReadableString(w.buf, v.Class())
		w.buf = append(w.buf, `,"@serialized":`...)
		w.buf = appendReadableString(w.buf, v.CustomData())
		w.buf = append(w.buf, '}')
	case KindRef:
		t := v.target()
		if t == nil {
			return errors.New("phpser: reference " + strconv.FormatInt(v.num, 10) + " is not resolved")
		}
		for _, a := range w.active {
			if a == t {
				what := "array"
				if t.kind == KindObject {
					what = t.str
				}
				w.buf = append(w.buf, `{"@recursion":`...)
				w.buf = appendReadableString(w.buf, what)
				w.buf = append(w.buf, '}')
				return nil
			}
		}
		if len(w.active) > maxNesting {
			return errors.New("phpser: reference" + atOffset(v) + " is " + strconv.Itoa(len(w.active)) +
				" levels deep; references are followed only up to " + strconv.Itoa(maxNesting))
		}
		w.inRef++
		err := w.value(t)
		w.inRef--
		return err
	case KindArray:
		w.active = append(w.active, v)
		err := w.array(v.ents())
		w.active = w.active[:len(w.active)-1]
		return err
	case KindObject:
		w.active = append(w.active, v)
		err := w.object(v)
		w.active = w.active[:len(w.active)-1]
		return err
	default:
		return errors.New("phpser: cannot show value of " + v.kind.String())
	}
	return nil
}

func (w *readableWriter) array(ents []Entry) error {
	if !isList(ents) {
		ents = phpEntries(ents, false)
	}
	if isList(ents) {
		w.buf = append(w.buf, '[')
		for i := range ents {
			if i > 0 {
				w.buf = append(w.buf, ',')
			}
			if err := w.value(&ents[i].Value); err != nil {
				return err
			}
		}
		w.buf = append(w.buf, ']')
		return nil
	}
	w.buf = append(w.buf, '{')
	for i := range ents {
		if i > 0 {
			w.buf = append(w.buf, ',')
		}
		w.buf = appendReadableKey(w.buf, ents[i].Key.String())
		w.buf = append(w.buf, ':')
		if err := w.value(&ents[i].Value); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, '}')
	return nil
}

func (w *readableWriter) object(v *Value) error {
	w.buf = append(w.buf, `{"@class":`...)
	w.buf = appendReadableString(w.buf, v.str)
	ents := phpEntries(v.ents(), true)
	dups := sharedNames(ents)
	for i := range ents {
		e := &ents[i]
		name := e.Key.String()
		if !e.Key.IsInt() {
			var vis Visibility
			name, vis, _ = UnmangleName(e.Key.Str())
			// A protected or private property whose plain name another property of
			// this object also has (a parent's private $x beside the child's $x)
			// keeps its mangled name, so that JSON keys stay unique; so does one
			// whose plain name would itself look mangled.
			if vis != Public && (dups[name] || strings.HasPrefix(name, "\x00")) {
				name = e.Key.Str()
			}
		}
		w.buf = append(w.buf, ',')
		w.buf = appendReadableKey(w.buf, name)
		w.buf = append(w.buf, ':')
		if err := w.value(&e.Value); err != nil {
			return err
		}
	}
	w.buf = append(w.buf, '}')
	return nil
}

// phpEntries returns the entries as PHP's unserialize() leaves them: a key that
// occurs again (the stream allows it; "1" and 1 are the same array key) keeps its
// first position and takes the last value. ents itself is returned when no key
// repeats, which is the usual case.
func phpEntries(ents []Entry, object bool) []Entry {
	id := func(k *Key) Key {
		if object {
			return StrKey(k.String())
		}
		if n, ok := k.phpInt(); ok {
			return IntKey(n)
		}
		return *k
	}
	if len(ents) <= 16 {
		dup := false
		for i := 1; i < len(ents) && !dup; i++ {
			ki := id(&ents[i].Key)
			for j := 0; j < i; j++ {
				if id(&ents[j].Key) == ki {
					dup = true
					break
				}
			}
		}
		if !dup {
			return ents
		}
	}
	first := make(map[Key]int, len(ents))
	out := make([]Entry, 0, len(ents))
	dup := false
	for i := range ents {
		k := id(&ents[i].Key)
		if j, ok := first[k]; ok {
			out[j].Value = ents[i].Value
			dup = true
			continue
		}
		first[k] = len(out)
		out = append(out, ents[i])
		if !object {
			out[len(out)-1].Key = k
		}
	}
	if !dup {
		return ents
	}
	return out
}

// sharedNames returns the plain property names that occur more than once (nil when
// none do, the usual case).
func sharedNames(ents []Entry) map[string]bool {
	var dups map[string]bool
	if len(ents) <= 32 {
		for i := 1; i < len(ents); i++ {
			ni := ents[i].Key.plain()
			for j := 0; j < i; j++ {
				if ents[j].Key.plain() == ni {
					if dups == nil {
						dups = map[string]bool{}
					}
					dups[ni] = true
					break
				}
			}
		}
		return dups
	}
	count := make(map[string]int, len(ents))
	for i := range ents {
		n := ents[i].Key.plain()
		count[n]++
		if count[n] == 2 {
			if dups == nil {
				dups = map[string]bool{}
			}
			dups[n] = true
		}
	}
	return dups
}

func appendReadableFloat(b []byte, f float64) []byte {
	switch {
	case math.IsNaN(f):
		return append(b, `{"@float":"NAN"}`...)
	case math.IsInf(f, 1):
		return append(b, `{"@float":"INF"}`...)
	case math.IsInf(f, -1):
		return append(b, `{"@float":"-INF"}`...)
	}
	start := len(b)
	b = php.AppendFloat(b, f, 'e')
	if !bytes.ContainsAny(b[start:], ".eE") {
		b = append(b, '.', '0')
	}
	return b
}

func appendReadableString(b []byte, s string) []byte {
	if utf8.ValidString(s) {
		return appendJSONString(b, s)
	}
	b = append(b, `{"@binary":"`...)
	b = base64.StdEncoding.AppendEncode(b, []byte(s))
	return append(b, '"', '}')
}

func appendReadableKey(b []byte, k string) []byte {
	if !utf8.ValidString(k) {
		b = append(b, `"@binary:`...)
		b = base64.StdEncoding.AppendEncode(b, []byte(k))
		return append(b, '"')
	}
	if len(k) > 0 && k[0] == '@' {
		return appendJSONString(b, "@"+k)
	}
	return appendJSONString(b, k)
}

// readableJSON writes strings for people: only '"', '\\' and control characters are
// escaped; '/' and non-ASCII stay as they are.
const readableJSON = php.JSONUnescapedSlashes | php.JSONUnescapedUnicode | php.JSONUnescapedLineTerminators

// appendJSONString writes s as a JSON string for people (readableJSON). Invalid UTF-8
// becomes U+FFFD (callers that must not lose bytes use appendReadableString).
func appendJSONString(b []byte, s string) []byte {
	out, bad := php.AppendJSONString(b, s, readableJSON)
	if bad >= 0 {
		out, _ = php.AppendJSONString(b, strings.ToValidUTF8(s, "\ufffd"), readableJSON)
	}
	return out
}

// atOffset returns " at offset N" for a decoded value, "" for a built one.
func atOffset(v *Value) string {
	if off, ok := v.Offset(); ok {
		return " at offset " + strconv.Itoa(off)
	}
	return ""
}
