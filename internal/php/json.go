package php

import (
	"unicode/utf16"
	"unicode/utf8"
)

// PHP's JSON strings, both ways: how json_encode() writes a string under its flags, and
// how json_decode() reads an escape sequence. Every JSON reader and writer of laraq that
// must agree with PHP byte for byte (the queue payload, the readable form of serialized
// values, the Encrypter's envelope) uses these two functions.

// JSON string options of json_encode() (package payload's JSONFlags are these).
const (
	JSONUnescapedSlashes         = 1 << iota // JSON_UNESCAPED_SLASHES: "/" as is, not "\/"
	JSONUnescapedUnicode                     // JSON_UNESCAPED_UNICODE: non-ASCII as raw UTF-8
	JSONUnescapedLineTerminators             // with JSONUnescapedUnicode, U+2028 and U+2029 raw too
)

const hexDigits = "0123456789abcdef"

// plainASCII marks the bytes json_encode copies as they are under every flag set.
var plainASCII = func() (t [256]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '/'
	}
	return t
}()

// AppendJSONString appends s as PHP's json_encode() writes a string with flags (the
// JSON* options above): `"`, `\` and (unless JSONUnescapedSlashes) `/` backslash-escaped;
// \b \f \n \r \t short escapes; other control characters as \u00XX with lowercase hex;
// 0x7F raw; non-ASCII as \uXXXX (UTF-16 surrogate pairs above U+FFFF) or, with
// JSONUnescapedUnicode, raw UTF-8 except U+2028/U+2029. Invalid UTF-8 stops it: bad is
// the offset in s of the first byte json_encode refuses (JSON_ERROR_UTF8), else -1.
func AppendJSONString[S ~string | ~[]byte](dst []byte, s S, flags int) (out []byte, bad int) {
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
			return dst, i
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
	return append(dst, '"'), -1
}

func appendU(dst []byte, r rune) []byte {
	return append(dst, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
}

// simpleEscapes maps the byte after a backslash to the byte it stands for.
var simpleEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// AppendJSONEscape reads the escape sequence src starts with (src[0] is the backslash)
// as json_decode() does and appends what it stands for to dst, as UTF-8. n is how many
// bytes of src it took, 0 when src does not start with a valid escape. An escaped UTF-16
// surrogate that is not a high one directly followed by an escaped low one is unpaired:
// json_decode refuses it (JSON_ERROR_UTF16); a reader that tolerates it gets U+FFFD in
// dst, and n covers that one escape.
func AppendJSONEscape[S ~string | ~[]byte](dst []byte, src S) (out []byte, n int, unpaired bool) {
	if len(src) < 2 || src[0] != '\\' {
		return dst, 0, false
	}
	if b := simpleEscapes[src[1]]; b != 0 {
		return append(dst, b), 2, false
	}
	r, ok := hex4(src, 2)
	if src[1] != 'u' || !ok {
		return dst, 0, false
	}
	if !utf16.IsSurrogate(r) {
		return utf8.AppendRune(dst, r), 6, false
	}
	if r < 0xdc00 && len(src) >= 12 && src[6] == '\\' && src[7] == 'u' {
		if lo, ok := hex4(src, 8); ok && lo >= 0xdc00 && lo <= 0xdfff {
			return utf8.AppendRune(dst, utf16.DecodeRune(r, lo)), 12, false
		}
	}
	return utf8.AppendRune(dst, utf8.RuneError), 6, true
}

// hex4 reads the four hex digits at s[i:].
func hex4[S ~string | ~[]byte](s S, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for j := i; j < i+4; j++ {
		c := s[j]
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}
