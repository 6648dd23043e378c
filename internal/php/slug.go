package php

import (
	"strings"
)

// ASCII returns s transliterated the way Laravel's Str::ascii($s) does it with the
// default language 'en' (voku/portable-ascii): each character is replaced by its ASCII
// spelling from a fixed table (é → e, ß → ss, Ж → Zh, — → -), characters without one are
// dropped (CJK text gives ""), tab, CR and LF become spaces and most ASCII control
// characters are dropped. The table was taken from Laravel 8's Str::ascii and is checked
// against it by the tests, code point by code point, over U+0000–U+2FFFF (characters
// beyond are dropped too).
func ASCII(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		if v, ok := asciiTable[r]; ok {
			b.WriteString(v)
			continue
		}
		if r < 0x80 {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Slug returns Laravel's Str::slug($title, $separator) for the separators Laravel's
// configuration files use ("_" and "-"): the title transliterated (ASCII), runs of the
// other separator turned into separator, "@" spelt "at", lower-cased, everything but
// letters, digits, whitespace and the separator removed, runs of whitespace and separators
// collapsed into one separator, and the separator trimmed from both ends.
//
//	Slug("My App", "_")  == "my_app"   // skeleton ≤ 11.x: prefix my_app_database_
//	Slug("My App", "-")  == "my-app"   // skeleton ≥ 12.1: prefix my-app-database-
//	Slug("Café", "_")    == "cafe"
func Slug(title, separator string) string {
	s := ASCII(title)
	flip := "-"
	if separator == "-" {
		flip = "_"
	}
	s = collapse(s, func(c byte) bool { return string(c) == flip }, separator)
	s = strings.ReplaceAll(s, "@", separator+"at"+separator)
	s = strings.ToLower(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if isASCIIAlnum(c) || IsPCRESpace(c) || strings.IndexByte(separator, c) >= 0 {
			b.WriteByte(c)
		}
	}
	s = collapse(b.String(), func(c byte) bool { return IsPCRESpace(c) || strings.IndexByte(separator, c) >= 0 }, separator)
	return strings.Trim(s, separator)
}

// collapse replaces every run of bytes matching in by one copy of with.
func collapse(s string, in func(byte) bool, with string) string {
	var b strings.Builder
	run := false
	for i := 0; i < len(s); i++ {
		if in(s[i]) {
			if !run {
				b.WriteString(with)
			}
			run = true
			continue
		}
		run = false
		b.WriteByte(s[i])
	}
	return b.String()
}

func isASCIIAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// IsPCRESpace is PCRE's \s on ASCII: space, \t, \n, \v, \f, \r.
func IsPCRESpace(c byte) bool {
	return c == ' ' || c >= '\t' && c <= '\r'
}
