package phpser

import (
	"math"
	"strconv"
	"strings"
)

// The tokens inside a value: integers, counts and lengths, quoted strings, class
// names and floats, each checked as PHP's var_unserializer checks it.

// integer parses [+-]?[0-9]+ followed by ';' and returns the value and the index of ';'.
func (d *decoder) integer(i int) (int64, int, error) {
	s := d.s
	start := i
	neg := false
	if i < len(s) && (s[i] == '-' || s[i] == '+') {
		neg = s[i] == '-'
		i++
	}
	digits := i
	var u uint64
	over := false
	for i < len(s) && s[i]-'0' <= 9 {
		if u > (math.MaxUint64-9)/10 {
			over = true
		} else {
			u = u*10 + uint64(s[i]-'0')
		}
		i++
	}
	if i == digits {
		return 0, 0, d.expect(i, "a digit")
	}
	if i >= len(s) || s[i] != ';' {
		return 0, 0, d.expect(i, "';'")
	}
	if over || (!neg && u > math.MaxInt64) || (neg && u > 1<<63) {
		return 0, 0, d.errAt(start, "integer "+s[start:i]+" out of int64 range")
	}
	if neg {
		return int64(-u), i, nil
	}
	return int64(u), i, nil
}

// count parses an unsigned decimal (a length, element count or reference index) and
// returns it with the index of the byte after it. A number larger than the whole
// input comes back as len(input)+1: every caller refuses it then, before anything is
// allocated for it, and no digit string can overflow.
func (d *decoder) count(i int) (int, int, error) {
	s := d.s
	start := i
	n := 0
	for ; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			break
		}
		if n <= len(s) {
			n = n*10 + int(c)
		}
	}
	if i == start {
		if i < len(s) && s[i] == '-' {
			return 0, 0, d.errAt(i, "negative length")
		}
		return 0, 0, d.expect(i, "a digit")
	}
	return min(n, len(s)+1), i, nil
}

// quoted parses `<len>:"<bytes>"` followed by term (';' for s: and E:, '}' with a '{'
// instead of the quotes for C:) and sets d.pos after it.
func (d *decoder) quoted(i int, term byte) (string, error) {
	s := d.s
	n, q, err := d.count(i)
	if err != nil {
		return "", err
	}
	open, close := byte('"'), byte('"')
	if term == '}' {
		open, close = '{', '}'
	}
	if q >= len(s) || s[q] != ':' {
		return "", d.expect(q, "':'")
	}
	if q+1 >= len(s) || s[q+1] != open {
		return "", d.expect(q+1, "'"+string(rune(open))+"'")
	}
	start := q + 2
	if n > len(s)-start {
		return "", d.errAt(i, "length "+s[i:q]+" exceeds the "+strconv.Itoa(max(len(s)-start, 0))+" bytes left")
	}
	end := start + n
	if end >= len(s) || s[end] != close {
		return "", d.expect(end, "'"+string(rune(close))+"' after "+strconv.Itoa(n)+" bytes")
	}
	if term == '}' {
		d.pos = end + 1
		return s[start:end], nil
	}
	if end+1 >= len(s) || s[end+1] != term {
		return "", d.expect(end+1, "'"+string(rune(term))+"'")
	}
	d.pos = end + 2
	return s[start:end], nil
}

// className parses `<len>:"<Class>"` and leaves d.pos on the byte after the quote.
func (d *decoder) className(i int) (string, error) {
	s := d.s
	n, q, err := d.count(i)
	if err != nil {
		return "", err
	}
	if q >= len(s) || s[q] != ':' {
		return "", d.expect(q, "':'")
	}
	if q+1 >= len(s) || s[q+1] != '"' {
		return "", d.expect(q+1, "'\"'")
	}
	start := q + 2
	if n > len(s)-start {
		return "", d.errAt(i, "length "+s[i:q]+" exceeds the "+strconv.Itoa(max(len(s)-start, 0))+" bytes left")
	}
	end := start + n
	if end >= len(s) || s[end] != '"' {
		return "", d.expect(end, "'\"' after "+strconv.Itoa(n)+" bytes")
	}
	class := s[start:end]
	if !validClass(class) {
		return "", d.errAt(start, "invalid class name "+strconv.Quote(class))
	}
	d.pos = end + 1
	return class, nil
}

// classByte marks the bytes PHP's unserialize accepts in a class name.
var classByte = func() (t [256]bool) {
	for c := 0; c < 256; c++ {
		t[c] = c == '\\' || c == '_' || c >= 0x7f || (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')
	}
	return t
}()

// validClass accepts the class names PHP's unserialize accepts.
func validClass(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !classByte[s[i]] {
			return false
		}
	}
	return true
}

func validIdent(s string) bool {
	return s != "" && !strings.ContainsRune(s, '\\') && validClass(s)
}

// float parses PHP's d: grammar: [+-]? digits with optional fraction and exponent, or
// INF, -INF, NAN. The original text is kept so that Encode gives back the same bytes
// even for spellings older PHP versions wrote (d:0.10000000000000001;).
func (d *decoder) float(v *Value, i int) error {
	s := d.s
	start := i
	var f float64
	switch {
	case strings.HasPrefix(s[i:], "INF;"):
		f, i = math.Inf(1), i+3
	case strings.HasPrefix(s[i:], "-INF;"):
		f, i = math.Inf(-1), i+4
	case strings.HasPrefix(s[i:], "NAN;"):
		f, i = math.NaN(), i+3
	default:
		neg := i < len(s) && s[i] == '-'
		if i < len(s) && (s[i] == '-' || s[i] == '+') {
			i++
		}
		// The digits as an integer, while it is exact (15 digits stay below 2^53).
		var mant uint64
		intDigits := 0
		for i < len(s) && s[i]-'0' <= 9 {
			mant = mant*10 + uint64(s[i]-'0')
			i++
			intDigits++
		}
		fracDigits := 0
		if i < len(s) && s[i] == '.' {
			i++
			for i < len(s) && s[i]-'0' <= 9 {
				mant = mant*10 + uint64(s[i]-'0')
				i++
				fracDigits++
			}
		}
		if intDigits+fracDigits == 0 {
			return d.expect(i, "a digit")
		}
		if i < len(s) && s[i] == ';' && intDigits+fracDigits <= 15 {
			// An exact integer divided by an exact power of ten is correctly rounded,
			// which is what ParseFloat returns too: serialize()'s common spellings
			// (d:0.1; d:-1.5;) need no general parse.
			f = float64(mant) / float64pow10[fracDigits]
			if neg {
				f = -f
			}
			v.kind, v.num, v.str = KindFloat, int64(math.Float64bits(f)), s[start:i]
			d.pos = i + 1
			return nil
		}
		if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
			i++
			if i < len(s) && (s[i] == '-' || s[i] == '+') {
				i++
			}
			e := i
			for i < len(s) && s[i]-'0' <= 9 {
				i++
			}
			if i == e {
				return d.expect(i, "an exponent digit")
			}
		}
		if i >= len(s) || s[i] != ';' {
			return d.expect(i, "';'")
		}
		var err error
		f, err = strconv.ParseFloat(s[start:i], 64)
		if err != nil && !isRangeErr(err) {
			return d.errAt(start, "invalid float "+strconv.Quote(s[start:i]))
		}
	}
	v.kind, v.num, v.str = KindFloat, int64(math.Float64bits(f)), s[start:i]
	d.pos = i + 1
	return nil
}

// float64pow10 holds the powers of ten a float64 represents exactly, as far as the
// fast path of float needs them.
var float64pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}
