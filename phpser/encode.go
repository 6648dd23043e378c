package phpser

import (
	"errors"
	"strconv"
	"strings"

	"github.com/laraq/laraq/internal/php"
)

// Encode writes v in PHP's serialize() format. It is the exact inverse of Decode:
// Encode(Decode(b)) == b for all of serialize()'s output (numbers keep the spelling
// they were decoded with; lengths written with leading zeros come back without). A
// tree nested deeper than MaxDepthCeiling, which Decode never builds, is refused
// rather than walked.
func Encode(v *Value) ([]byte, error) { return AppendEncode(nil, v) }

// AppendEncode is Encode appending to dst.
func AppendEncode(dst []byte, v *Value) ([]byte, error) {
	if v == nil {
		return dst, errors.New("phpser: Encode of a nil *Value")
	}
	out, err := encodeValue(dst, v, 0, MaxDepthCeiling)
	if err != nil {
		return dst, err
	}
	return out, nil
}

// appendInt is strconv.AppendInt in base 10 with the numbers a payload is mostly made
// of (lengths, counts, indexes below 100) written byte by byte: strconv's own fast path
// for them still copies a one- or two-byte string with a call to memmove, and
// serialize() writes one or more of them for every value.
func appendInt(dst []byte, n int64) []byte {
	switch {
	case uint64(n) < 10:
		return append(dst, byte('0'+n))
	case uint64(n) < 100:
		return append(dst, byte('0'+n/10), byte('0'+n%10))
	}
	return strconv.AppendInt(dst, n, 10)
}

// appendFloat writes f as serialize() does (shortest round-trip digits, E exponent,
// INF/-INF/NAN).
func appendFloat(dst []byte, f float64) []byte { return php.AppendFloat(dst, f, 'E') }

// appendLenQuoted writes tag (two bytes: "s:", "O:", "C:", "E:"), the length of s and s
// in double quotes.
func appendLenQuoted(b []byte, tag string, s string) []byte {
	b = append(b, tag[0], tag[1])
	b = appendInt(b, int64(len(s)))
	b = append(b, ':', '"')
	b = append(b, s...)
	return append(b, '"')
}

// encodeValue writes v, which is inside depth PHP levels, refusing to nest deeper than
// limit levels (objects and non-empty arrays, as PHP counts them).
func encodeValue(b []byte, v *Value, depth, limit int) ([]byte, error) {
	switch v.kind {
	case KindNull:
		return append(b, 'N', ';'), nil
	case KindBool:
		if v.num != 0 {
			return append(b, "b:1;"...), nil
		}
		return append(b, "b:0;"...), nil
	case KindInt:
		b = append(b, 'i', ':')
		if v.str != "" {
			b = append(b, v.str...)
		} else {
			b = appendInt(b, v.num)
		}
		return append(b, ';'), nil
	case KindFloat:
		b = append(b, 'd', ':')
		if v.str != "" {
			b = append(b, v.str...)
		} else {
			b = appendFloat(b, v.Float())
		}
		return append(b, ';'), nil
	case KindString:
		return append(appendLenQuoted(b, "s:", v.str), ';'), nil
	case KindArray, KindObject:
		ents := v.ents()
		if (len(ents) > 0 || v.kind == KindObject) && depth >= limit {
			return b, errors.New("phpser: " + v.kind.String() + atOffset(v) + " nested " + strconv.Itoa(depth+1) +
				" levels deep, deeper than the limit of " + strconv.Itoa(limit))
		}
		if v.kind == KindArray {
			b = append(b, 'a', ':')
		} else {
			if !validClass(v.str) {
				return b, errors.New("phpser: invalid class name " + strconv.Quote(v.str))
			}
			b = appendLenQuoted(b, "O:", v.str)
			b = append(b, ':')
		}
		return encodeEntries(b, ents, depth+1, limit)
	case KindCustom:
		class, data := v.str[:v.num], v.str[v.num:]
		if !validClass(class) {
			return b, errors.New("phpser: invalid class name " + strconv.Quote(class))
		}
		b = appendLenQuoted(b, "C:", class)
		b = append(b, ':')
		b = appendInt(b, int64(len(data)))
		b = append(b, ':', '{')
		b = append(b, data...)
		return append(b, '}'), nil
	case KindEnum:
		i := strings.IndexByte(v.str, ':')
		if i < 0 || !validClass(v.str[:i]) || !validIdent(v.str[i+1:]) {
			return b, errors.New("phpser: invalid enum " + strconv.Quote(v.str) + ", want \"Class:Case\"")
		}
		return append(appendLenQuoted(b, "E:", v.str), ';'), nil
	case KindRef:
		if v.num < 1 {
			return b, errors.New("phpser: reference index " + strconv.FormatInt(v.num, 10) + " is not positive")
		}
		if v.flags&flagHardRef != 0 {
			b = append(b, 'R', ':')
		} else {
			b = append(b, 'r', ':')
		}
		b = appendInt(b, v.num)
		return append(b, ';'), nil
	}
	return b, errors.New("phpser: cannot encode value of " + v.kind.String())
}

func encodeEntries(b []byte, ents []Entry, depth, limit int) ([]byte, error) {
	b = appendInt(b, int64(len(ents)))
	b = append(b, ':', '{')
	var err error
	for i := range ents {
		e := &ents[i]
		if e.Key.IsInt() {
			b = append(b, 'i', ':')
			b = appendInt(b, e.Key.Int())
			b = append(b, ';')
		} else {
			b = append(appendLenQuoted(b, "s:", e.Key.s), ';')
		}
		if b, err = encodeValue(b, &e.Value, depth, limit); err != nil {
			return b, err
		}
	}
	return append(b, '}'), nil
}
