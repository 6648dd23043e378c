package payload

import (
	"fmt"
	"math"
	"strconv"

	"github.com/laraq/laraq/internal/php"
)

// JSONFlags selects the json_encode() options that change the bytes PHP writes.
// The zero value is json_encode($v) without flags, as queue:retry and Horizon use it.
type JSONFlags uint8

const (
	// JSONUnescapedSlashes is JSON_UNESCAPED_SLASHES: "/" is written as is instead of
	// "\/". Laravel's Encrypter uses it; the queue payload does not.
	JSONUnescapedSlashes JSONFlags = php.JSONUnescapedSlashes
	// JSONUnescapedUnicode is JSON_UNESCAPED_UNICODE: non-ASCII characters are written as
	// raw UTF-8 instead of \uXXXX. Laravel's createPayload uses it since 8.82.
	JSONUnescapedUnicode JSONFlags = php.JSONUnescapedUnicode
	// JSONUnescapedLineTerminators is JSON_UNESCAPED_LINE_TERMINATORS: with
	// JSONUnescapedUnicode, U+2028 and U+2029 are written raw too. Without it PHP (7.1+)
	// escapes them even under JSON_UNESCAPED_UNICODE.
	JSONUnescapedLineTerminators JSONFlags = php.JSONUnescapedLineTerminators
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
	out, bad := php.AppendJSONString(dst, s, int(flags))
	if bad >= 0 {
		return out, &EncodeError{Code: JSONErrorUTF8, Offset: bad}
	}
	return out, nil
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
