package payload

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// PHP's default json depth is 512 (the PHP worker's RedisJob::payload, queue:retry and
// Laravel's payload writer all use the default). Measured on PHP 8.2, json_decode accepts
// at most 511 nested arrays/objects (the depth counts the innermost value's level too),
// json_encode at most 512.
const (
	phpDecodeMaxNesting = 511
	phpEncodeMaxNesting = 512
)

// Kind is the PHP type a decoded JSON value becomes.
type Kind uint8

// The PHP types json_decode($s, true) produces.
const (
	KindNull Kind = iota
	KindBool
	KindInt
	KindFloat
	KindString
	KindArray // a PHP array: every JSON object and every JSON list
)

// Value is a JSON value as PHP holds it after json_decode($s, true), so that encoding
// it again gives the bytes json_encode() would:
//
//   - objects and lists both become ordered PHP arrays (Items, in stored order); an
//     array whose keys are exactly "0".."n-1" in order is written back as a JSON list,
//     anything else as an object, so {} becomes [] and {"0":"a"} becomes ["a"];
//   - a repeated key keeps its first position and its last value;
//   - integers beyond the int64 range become floats; -0 is the integer 0;
//   - floats are written back with PHP's shortest round-trip form.
type Value struct {
	Kind  Kind
	Bool  bool
	Int   int64
	Float float64
	Str   string
	Items []Item // KindArray entries in order; list entries have keys "0", "1", …
}

// Item is one entry of a PHP array. Integer keys are held in their decimal form,
// which is also how json_encode writes them.
type Item struct {
	Key   string
	Value Value
}

// Get returns the entry with the given key of an array value, or nil.
func (v *Value) Get(key string) *Value {
	if v == nil || v.Kind != KindArray {
		return nil
	}
	for i := range v.Items {
		if v.Items[i].Key == key {
			return &v.Items[i].Value
		}
	}
	return nil
}

// Set replaces the entry with the given key in place or appends it, as PHP's
// $a[$key] = $val does. A null value becomes an array first; other scalars are left
// alone and Set reports false.
func (v *Value) Set(key string, val Value) bool {
	switch v.Kind {
	case KindNull:
		*v = Value{Kind: KindArray}
	case KindArray:
	default:
		return false
	}
	if e := v.Get(key); e != nil {
		*e = val
		return true
	}
	v.Items = append(v.Items, Item{Key: key, Value: val})
	return true
}

// IsList reports whether json_encode writes the array as a JSON list: its keys are
// exactly 0..n-1 in order (an empty array is a list).
func (v *Value) IsList() bool {
	var num [20]byte
	for i := range v.Items {
		if v.Items[i].Key != string(strconv.AppendInt(num[:0], int64(i), 10)) {
			return false
		}
	}
	return true
}

// DecodeValue decodes JSON the way PHP's json_decode($s, true) does (default depth
// 512), failing where PHP returns null with an error: invalid JSON, invalid UTF-8,
// raw control characters, unpaired UTF-16 surrogate escapes, more than 511 nested
// arrays/objects.
func DecodeValue(raw []byte) (Value, error) {
	d := decoder{scanner: scanner{buf: raw}}
	d.ws()
	v, err := d.value(0)
	if err != nil {
		return Value{}, err
	}
	d.ws()
	if d.pos != len(d.buf) {
		return Value{}, d.errf("", "Syntax error: unexpected %s after the value", d.describe())
	}
	return v, nil
}

type decoder struct {
	scanner
}

func (d *decoder) value(depth int) (Value, error) {
	if d.pos >= len(d.buf) {
		return Value{}, d.errf("", "Syntax error: expected a value, found end of input")
	}
	switch c := d.buf[d.pos]; {
	case c == '"':
		s, err := d.phpString()
		return Value{Kind: KindString, Str: s}, err
	case c == '{' || c == '[':
		if depth+1 > phpDecodeMaxNesting {
			return Value{}, d.errf("", "Maximum stack depth exceeded (PHP's json_decode reads at most %d nested arrays)", phpDecodeMaxNesting)
		}
		if c == '{' {
			return d.object(depth + 1)
		}
		return d.list(depth + 1)
	case c == '-' || c >= '0' && c <= '9':
		st, en, isInt, err := d.number("")
		if err != nil {
			return Value{}, err
		}
		lit := d.buf[st:en]
		if isInt {
			if i, ok := atoi64(lit); ok {
				return Value{Kind: KindInt, Int: i}, nil
			}
		}
		// Fractions, exponents and integers beyond int64 are doubles in PHP. Overflow
		// gives ±INF, which json_decode accepts (json_encode will refuse it).
		f, err := strconv.ParseFloat(string(lit), 64)
		if err != nil && !isRangeErr(err) {
			return Value{}, &Error{Offset: st, Msg: "Syntax error: invalid number"}
		}
		return Value{Kind: KindFloat, Float: f}, nil
	case c == 't':
		return Value{Kind: KindBool, Bool: true}, d.literal("")
	case c == 'f':
		return Value{Kind: KindBool}, d.literal("")
	case c == 'n':
		return Value{}, d.literal("")
	}
	return Value{}, d.errf("", "Syntax error: unexpected %s", d.describe())
}

// phpString decodes a string with PHP's checks: valid UTF-8, paired surrogates.
func (d *decoder) phpString() (string, error) {
	st, en, esc, err := d.str("")
	if err != nil {
		return "", err
	}
	body := d.buf[st:en]
	if !utf8.Valid(body) {
		off := st
		for len(body) > 0 {
			r, n := utf8.DecodeRune(body)
			if r == utf8.RuneError && n <= 1 {
				break
			}
			body, off = body[n:], off+n
		}
		return "", &Error{Offset: off, Msg: "Malformed UTF-8 characters, possibly incorrectly encoded"}
	}
	if !esc {
		return string(body), nil
	}
	out, bad := unescapeStrict(make([]byte, 0, len(body)), body)
	if bad >= 0 {
		return "", &Error{Offset: st + bad, Msg: "Single unpaired UTF-16 surrogate in unicode escape"}
	}
	return string(out), nil
}

func (d *decoder) list(depth int) (Value, error) {
	d.pos++ // [
	v := Value{Kind: KindArray}
	d.ws()
	if d.pos < len(d.buf) && d.buf[d.pos] == ']' {
		d.pos++
		return v, nil
	}
	for {
		d.ws()
		item, err := d.value(depth)
		if err != nil {
			return Value{}, err
		}
		v.Items = append(v.Items, Item{Key: strconv.Itoa(len(v.Items)), Value: item})
		if done, err := d.next("", ']'); err != nil {
			return Value{}, err
		} else if done {
			return v, nil
		}
	}
}

func (d *decoder) object(depth int) (Value, error) {
	d.pos++ // {
	v := Value{Kind: KindArray}
	d.ws()
	if d.pos < len(d.buf) && d.buf[d.pos] == '}' {
		d.pos++
		return v, nil
	}
	var index map[string]int // built once the object is large enough to matter
	for {
		d.ws()
		if d.pos >= len(d.buf) || d.buf[d.pos] != '"' {
			return Value{}, d.errf("", "Syntax error: expected a key string, found %s", d.describe())
		}
		key, err := d.phpString()
		if err != nil {
			return Value{}, err
		}
		if err := d.expect("", ':'); err != nil {
			return Value{}, err
		}
		d.ws()
		item, err := d.value(depth)
		if err != nil {
			return Value{}, err
		}
		// PHP's symbol table: a repeated key overwrites the value in its first position.
		pos := -1
		if index != nil {
			if i, ok := index[key]; ok {
				pos = i
			}
		} else {
			for i := range v.Items {
				if v.Items[i].Key == key {
					pos = i
					break
				}
			}
		}
		if pos >= 0 {
			v.Items[pos].Value = item
		} else {
			v.Items = append(v.Items, Item{Key: key, Value: item})
			if index != nil {
				index[key] = len(v.Items) - 1
			} else if len(v.Items) > 16 {
				index = make(map[string]int, 2*len(v.Items))
				for i := range v.Items {
					index[v.Items[i].Key] = i
				}
			}
		}
		if done, err := d.next("", '}'); err != nil {
			return Value{}, err
		} else if done {
			return v, nil
		}
	}
}

// AppendJSON appends the value as PHP's json_encode($v, flags) writes it. Strings with
// invalid UTF-8, Inf/NaN floats and more than 512 nested arrays are an *EncodeError
// (PHP returns false).
func (v *Value) AppendJSON(dst []byte, flags JSONFlags) ([]byte, error) {
	return v.appendJSON(dst, flags, 0)
}

func (v *Value) appendJSON(dst []byte, flags JSONFlags, depth int) ([]byte, error) {
	switch v.Kind {
	case KindNull:
		return append(dst, "null"...), nil
	case KindBool:
		if v.Bool {
			return append(dst, "true"...), nil
		}
		return append(dst, "false"...), nil
	case KindInt:
		return AppendJSONInt(dst, v.Int), nil
	case KindFloat:
		return AppendJSONFloat(dst, v.Float)
	case KindString:
		return appendJSONString(dst, v.Str, flags)
	case KindArray:
	default:
		return dst, &EncodeError{Code: 8, Offset: -1} // JSON_ERROR_UNSUPPORTED_TYPE
	}
	if depth+1 > phpEncodeMaxNesting {
		return dst, &EncodeError{Code: JSONErrorDepth, Offset: -1}
	}
	list := v.IsList()
	open, closing := byte('{'), byte('}')
	if list {
		open, closing = '[', ']'
	}
	dst = append(dst, open)
	var err error
	for i := range v.Items {
		it := &v.Items[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		if !list {
			if dst, err = appendJSONString(dst, it.Key, flags); err != nil {
				return dst, inPath(err, it.Key)
			}
			dst = append(dst, ':')
		}
		if dst, err = it.Value.appendJSON(dst, flags, depth+1); err != nil {
			return dst, inPath(err, it.Key)
		}
	}
	return append(dst, closing), nil
}

// inPath prefixes an encode error's path with the key it was found under.
func inPath(err error, key string) error {
	if e, ok := err.(*EncodeError); ok {
		if e.Path == "" {
			e.Path = key
		} else {
			e.Path = key + "." + e.Path
		}
	}
	return err
}

// infPath returns the path of an infinite float in a decoded value (a JSON number beyond
// the double range), which json_encode and cjson's encoder both refuse.
func (v *Value) infPath() (string, bool) {
	switch v.Kind {
	case KindFloat:
		return "", math.IsInf(v.Float, 0)
	case KindArray:
		for i := range v.Items {
			if p, ok := v.Items[i].Value.infPath(); ok {
				if p == "" {
					return v.Items[i].Key, true
				}
				return v.Items[i].Key + "." + p, true
			}
		}
	}
	return "", false
}

func (v *Value) hasInf() bool {
	_, ok := v.infPath()
	return ok
}
