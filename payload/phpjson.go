package payload

import (
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/laraq/laraq/internal/php"
)

// JSONFlags selects the json_encode() options that change the bytes PHP writes.
// The zero value is json_encode($v) without flags, as queue:retry and Horizon use it.
type JSONFlags uint8

const (
	// JSONUnescapedSlashes is JSON_UNESCAPED_SLASHES: "/" is written as is instead of
	// "\/". Laravel's Encrypter uses it; the queue payload does not.
	JSONUnescapedSlashes JSONFlags = 1 << iota
	// JSONUnescapedUnicode is JSON_UNESCAPED_UNICODE: non-ASCII characters are written as
	// raw UTF-8 instead of \uXXXX. Laravel's createPayload uses it since 8.82.
	JSONUnescapedUnicode
	// JSONUnescapedLineTerminators is JSON_UNESCAPED_LINE_TERMINATORS: with
	// JSONUnescapedUnicode, U+2028 and U+2029 are written raw too. Without it PHP (7.1+)
	// escapes them even under JSON_UNESCAPED_UNICODE.
	JSONUnescapedLineTerminators
)

// PHP's json_last_error() codes for the failures a payload writer can meet.
const (
	JSONErrorDepth    = 1 // JSON_ERROR_DEPTH: "Maximum stack depth exceeded"
	JSONErrorUTF8     = 5 // JSON_ERROR_UTF8: "Malformed UTF-8 characters, possibly incorrectly encoded"
	JSONErrorInfOrNaN = 7 // JSON_ERROR_INF_OR_NAN: "Inf and NaN cannot be JSON encoded"
)

// EncodeError is a value PHP's json_encode() refuses (it returns false and sets
// json_last_error() to Code). Laravel turns it into InvalidPayloadException
// "Unable to JSON encode payload. Error code: <Code>".
type EncodeError struct {
	Code   int    // PHP's json_last_error() code
	Path   string // where in the value, e.g. "data.command"
	Offset int    // byte offset within the offending string (JSONErrorUTF8), else -1
}

func (e *EncodeError) Error() string {
	var what string
	switch e.Code {
	case JSONErrorUTF8:
		what = fmt.Sprintf("malformed UTF-8 at byte %d of the string", e.Offset)
	case JSONErrorInfOrNaN:
		what = "Inf and NaN cannot be JSON encoded"
	case JSONErrorDepth:
		what = "maximum stack depth exceeded"
	default:
		what = "cannot be JSON encoded"
	}
	p := e.Path
	if p == "" {
		p = "value"
	}
	return fmt.Sprintf("payload: %s: %s (PHP json_encode error code %d)", p, what, e.Code)
}

const hexDigits = "0123456789abcdef"

// plainASCII marks the bytes json_encode copies as they are under every flag set.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '/'
	}
	return t
}()

// AppendJSONString appends s as PHP's json_encode() writes a string with the given
// flags: `"`, `\` and (unless JSONUnescapedSlashes) `/` backslash-escaped; \b \f \n \r \t
// short escapes; other control characters as \u00XX with lowercase hex; 0x7F raw;
// non-ASCII as \uXXXX (UTF-16 surrogate pairs above U+FFFF) or, with
// JSONUnescapedUnicode, raw UTF-8 except U+2028/U+2029. Invalid UTF-8 is an
// *EncodeError with code JSONErrorUTF8, as PHP refuses it.
func AppendJSONString(dst []byte, s string, flags JSONFlags) ([]byte, error) {
	return appendJSONString(dst, s, flags)
}

func appendJSONString[S ~string | ~[]byte](dst []byte, s S, flags JSONFlags) ([]byte, error) {
	dst = append(dst, '"')
	start := 0 // s[start:i] is pending plain bytes
	for i := 0; i < len(s); {
		for i < len(s) && plainASCII[s[i]] {
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			if c == '/' && flags&JSONUnescapedSlashes != 0 {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\', '/':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		var win [utf8.UTFMax]byte // a sequence is at most 4 bytes: decoding the window is exact
		r, size := utf8.DecodeRune(win[:copy(win[:], s[i:])])
		if r == utf8.RuneError && size <= 1 {
			return dst, &EncodeError{Code: JSONErrorUTF8, Offset: i}
		}
		if flags&JSONUnescapedUnicode != 0 &&
			(flags&JSONUnescapedLineTerminators != 0 || (r != 0x2028 && r != 0x2029)) {
			i += size
			continue
		}
		dst = append(dst, s[start:i]...)
		if r >= 0x10000 {
			r -= 0x10000
			dst = appendU(dst, 0xd800|(r>>10))
			dst = appendU(dst, 0xdc00|(r&0x3ff))
		} else {
			dst = appendU(dst, r)
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"'), nil
}

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// AppendJSONInt appends an integer as json_encode() writes it.
func AppendJSONInt(dst []byte, i int64) []byte {
	return strconv.AppendInt(dst, i, 10)
}

// AppendJSONFloat appends a float as json_encode() writes it with
// serialize_precision=-1: the shortest round-trip digits, "1.0e+25" style exponents,
// no ".0" on whole numbers (no JSON_PRESERVE_ZERO_FRACTION), "-0" for negative zero.
// Inf and NaN are an *EncodeError with code JSONErrorInfOrNaN.
func AppendJSONFloat(dst []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return dst, &EncodeError{Code: JSONErrorInfOrNaN, Offset: -1}
	}
	return php.AppendFloat(dst, f, 'e'), nil
}
