package encryption

import "encoding/base64"

// PHP's base64_decode, which the Encrypter relies on in both of its modes: the whole
// payload, the GCM tag, and (through openssl_decrypt's default options) the value are
// decoded leniently, while the IV's length is checked on a strict decoding. Go's
// encoding/base64 is neither: the lenient mode skips every byte outside the alphabet
// and keeps decoding after "=", so "eyJp\ndiI6=!" and "eyJpdiI6" are the same payload
// to PHP, and a Go worker must accept what a PHP worker accepts.

// b64Skip marks bytes the strict mode skips (PHP's table has -1 for them): space, \t,
// \n and \r, but not \v or \f.
const (
	b64Bad  = 0xff
	b64Skip = 0xfe
)

var b64Reverse = func() (t [256]byte) {
	for i := range t {
		t[i] = b64Bad
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := range len(alphabet) {
		t[alphabet[i]] = byte(i)
	}
	for _, c := range []byte{' ', '\t', '\n', '\r'} {
		t[c] = b64Skip
	}
	return t
}()

// phpBase64Decode is base64_decode($s, $strict). The lenient mode never fails: it
// ignores "=" and every byte outside the alphabet, and drops the bits of a trailing
// lone character. The strict mode skips only whitespace and fails on any other foreign
// byte, on data after padding, on a lone trailing character and on wrong padding
// (more than two "=", or a length that padding does not round to a multiple of 4);
// missing padding is accepted.
func phpBase64Decode(s string, strict bool) ([]byte, bool) {
	// Fast path: what encoding/base64 accepts (the alphabet with correct padding, \r and
	// \n ignored) both PHP modes decode to the same bytes.
	if out, err := base64.StdEncoding.DecodeString(s); err == nil {
		return out, true
	}
	out := make([]byte, 0, len(s)*3/4+1)
	var acc uint32 // bits not yet written
	n := 0         // alphabet characters seen
	padding := 0
	for i := range len(s) {
		c := s[i]
		if c == '=' {
			padding++
			continue
		}
		v := b64Reverse[c]
		if v >= b64Skip {
			if !strict || v == b64Skip {
				continue
			}
			return nil, false
		}
		if strict && padding > 0 {
			return nil, false
		}
		acc = acc<<6 | uint32(v)
		n++
		if n%4 == 0 {
			out = append(out, byte(acc>>16), byte(acc>>8), byte(acc))
			acc = 0
		}
	}
	// A group of 2 or 3 characters gives 1 or 2 bytes; its leftover bits are dropped,
	// as PHP only writes a byte once the next character completes it.
	switch n % 4 {
	case 1:
		if strict {
			return nil, false
		}
	case 2:
		out = append(out, byte(acc>>4))
	case 3:
		out = append(out, byte(acc>>10), byte(acc>>2))
	}
	if strict && padding > 0 && (padding > 2 || (n+padding)%4 != 0) {
		return nil, false
	}
	return out, true
}
