package php

import "strings"

// HTMLEntities is PHP's htmlentities($s) with the defaults of PHP 8.1+: flags ENT_QUOTES |
// ENT_SUBSTITUTE | ENT_HTML401, charset UTF-8, double encoding. Every character of HTML
// 4.01's entity table (htmlEntityTable: the five of htmlspecialchars, the Latin-1
// supplement, Greek, symbols; "'" as &#039;) becomes its entity, and each ill-formed
// UTF-8 sequence becomes one U+FFFD, cut where PHP's decoder cuts it (see nextUTF8).
// Laravel's RateLimiter::cleanRateLimiterKey runs every limiter key through it.
//
// (PHP before 8.1 defaulted to ENT_COMPAT | ENT_HTML401 without ENT_SUBSTITUTE: "'" stayed
// as it is and ill-formed input gave ""; laraq follows the PHP the peers run.)
func HTMLEntities(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := nextUTF8(s, i)
		i += n
		if r < 0 {
			b.WriteString("\uFFFD")
			continue
		}
		if e, ok := htmlEntityTable[r]; ok {
			b.WriteString(e)
			continue
		}
		b.WriteString(s[i-n : i])
	}
	return b.String()
}

func utf8Lead(c byte) bool  { return c < 0x80 || (c >= 0xC2 && c <= 0xF4) }
func utf8Trail(c byte) bool { return c >= 0x80 && c <= 0xBF }

// nextUTF8 decodes the character at s[i] the way PHP's html.c (php_next_utf8_char) does
// and returns it with the bytes it takes, or r = -1 and the length of the ill-formed
// sequence: PHP skips a truncated sequence up to the first byte that could begin a
// character, and a sequence that is complete but invalid (overlong, a surrogate, above
// U+10FFFF) whole. Go's utf8 package would give one U+FFFD per byte instead.
func nextUTF8(s string, i int) (r rune, n int) {
	c := s[i]
	avail := len(s) - i
	at := func(k int) byte { return s[i+k] }
	switch {
	case c < 0x80:
		return rune(c), 1
	case c < 0xC2:
		return -1, 1
	case c < 0xE0:
		if avail < 2 || !utf8Trail(at(1)) {
			if avail < 2 || utf8Lead(at(1)) {
				return -1, 1
			}
			return -1, 2
		}
		return rune(c&0x1F)<<6 | rune(at(1)&0x3F), 2
	case c < 0xF0:
		if avail < 3 || !utf8Trail(at(1)) || !utf8Trail(at(2)) {
			switch {
			case avail < 2 || utf8Lead(at(1)):
				return -1, 1
			case avail < 3 || utf8Lead(at(2)):
				return -1, 2
			}
			return -1, 3
		}
		r = rune(c&0x0F)<<12 | rune(at(1)&0x3F)<<6 | rune(at(2)&0x3F)
		if r < 0x800 || (r >= 0xD800 && r <= 0xDFFF) {
			return -1, 3
		}
		return r, 3
	case c < 0xF5:
		if avail < 4 || !utf8Trail(at(1)) || !utf8Trail(at(2)) || !utf8Trail(at(3)) {
			switch {
			case avail < 2 || utf8Lead(at(1)):
				return -1, 1
			case avail < 3 || utf8Lead(at(2)):
				return -1, 2
			case avail < 4 || utf8Lead(at(3)):
				return -1, 3
			}
			return -1, 4
		}
		r = rune(c&0x07)<<18 | rune(at(1)&0x3F)<<12 | rune(at(2)&0x3F)<<6 | rune(at(3)&0x3F)
		if r < 0x10000 || r > 0x10FFFF {
			return -1, 4
		}
		return r, 4
	}
	return -1, 1
}
