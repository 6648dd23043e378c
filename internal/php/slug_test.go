package php

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

var slugCases = []struct{ in, underscore, hyphen string }{
	{"Laravel", "laravel", "laravel"},
	{"My App", "my_app", "my-app"},
	{" --My__App-- ", "my_app", "my-app"},
	{"a@b", "a_at_b", "a-at-b"},
	{"Café Ünïcode", "cafe_unicode", "cafe-unicode"},
	{"Straße", "strasse", "strasse"},
	{"ÆØÅ æøå", "aeoa_aeoa", "aeoa-aeoa"},
	{"Москва", "moskva", "moskva"},
	{"Ελληνικά", "ellinika", "ellinika"},
	{"東京", "", ""},
	{"x\u2014y", "x_y", "x-y"},
	{"Ça va?", "ca_va", "ca-va"},
	{"İstanbul", "istanbul", "istanbul"},
	{"tab\there\nnl", "tab_here_nl", "tab-here-nl"},
	{"1", "1", "1"},
	{"", "", ""},
	{"__", "", ""},
	{"Ķ Ḁbc", "k_bc", "k-bc"},
	{"Acme Corp. (EU) — Billing #2", "acme_corp_eu_billing_2", "acme-corp-eu-billing-2"},
}

func TestSlug(t *testing.T) {
	for _, c := range slugCases {
		if got := Slug(c.in, "_"); got != c.underscore {
			t.Errorf("Slug(%q, _) = %q, want %q", c.in, got, c.underscore)
		}
		if got := Slug(c.in, "-"); got != c.hyphen {
			t.Errorf("Slug(%q, -) = %q, want %q", c.in, got, c.hyphen)
		}
	}
}

// TestSlugMatchesPHP compares whole strings (not just single characters) with Laravel's
// Str::slug, both separators.
func TestSlugMatchesPHP(t *testing.T) {
	testenv.NeedPHP(t)
	args := []string{"slug"}
	for _, c := range slugCases {
		args = append(args, c.in)
	}
	// Characters from every table range, mixed with separators and punctuation.
	args = append(args, "Ǆemal ǈubljana", "Ŀlama-ŉ_Ŧest", "Ωmega_Ψ-Ж", "ﬁne ﬂow", "Ａｐｐ", "a\u00a0b\u2009c",
		"x@@y", "--_--", "ĳssel", "Tiếng Việt", "ℌello", "😀 ok", "a\x01b\x7fc")
	out := testenv.PHPEnv{}.Run(t, nil, "ops_ascii.php", args...)
	n := 0
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var row struct{ In, Underscore, Hyphen, ASCII string }
		if err := json.Unmarshal(line, &row); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		n++
		if got := ASCII(row.In); got != row.ASCII {
			t.Errorf("ASCII(%q) = %q, PHP %q", row.In, got, row.ASCII)
		}
		if got := Slug(row.In, "_"); got != row.Underscore {
			t.Errorf("Slug(%q, _) = %q, PHP %q", row.In, got, row.Underscore)
		}
		if got := Slug(row.In, "-"); got != row.Hyphen {
			t.Errorf("Slug(%q, -) = %q, PHP %q", row.In, got, row.Hyphen)
		}
	}
	if n != len(args)-1 {
		t.Fatalf("PHP answered %d strings, asked %d", n, len(args)-1)
	}
}

func FuzzSlug(f *testing.F) {
	for _, c := range slugCases {
		f.Add(c.in)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, sep := range []string{"_", "-"} {
			out := Slug(s, sep)
			for i := 0; i < len(out); i++ {
				c := out[i]
				if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || string(c) == sep) {
					t.Fatalf("Slug(%q, %q) = %q has %q", s, sep, out, c)
				}
			}
			if len(out) > 0 && (out[:1] == sep || out[len(out)-1:] == sep) {
				t.Fatalf("Slug(%q, %q) = %q not trimmed", s, sep, out)
			}
		}
	})
}
