package rdb

import (
	"encoding/base64"
	"encoding/json"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

func TestMiddlewareKeyNames(t *testing.T) {
	for _, tc := range []struct{ got, want string }{
		{OverlapLockName(OverlapPrefix, `App\Jobs\SyncOrder`, "42", false), `laravel-queue-overlap:App\Jobs\SyncOrder:42`},
		{OverlapLockName(OverlapPrefix, `App\Jobs\SyncOrder`, "42", true), `laravel-queue-overlap:42`},
		{OverlapLockName("p:", "", "", false), "p::"},
		// md5("emails" . "") and md5("emails" . "user:7"), as php -r prints them
		{RateLimitedKey("emails", ""), "af67ca2fe7ffcec86822126de0ffc4d7"},
		{RateLimitedKey("emails", "user:7"), "f99981cd589b1537d3ca90452315639c"},
		{LimiterTimer("af67ca2fe7ffcec86822126de0ffc4d7"), "af67ca2fe7ffcec86822126de0ffc4d7:timer"},
		{CleanRateLimiterKey("laravel_throttles_exceptions:a&b"), "laravel_throttles_exceptions:aab"},
		{CleanRateLimiterKey("café ½ 'x'"), "cafe &frac12; &#039;x&#039;"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// TestCleanRateLimiterKeyMatchesPHP runs RateLimiter::cleanRateLimiterKey's rule in PHP on
// keys a by() or withPrefix() may give, and compares.
func TestCleanRateLimiterKeyMatchesPHP(t *testing.T) {
	testenv.NeedPHP(t)
	keys := []string{
		"", "plain:key", "a&b", "&amp;", "&foo;", "&&x;", "<tag>", `"q"`, "'s'", "café", "ÆØÅ æøå",
		"€100", "½ ¼ ¾ ¹²³", "∴ ∞ ≠", "Ωmega", "naïve résumé", "a\xffb", "\xed\xa0\x80", "日本",
		"x&Eacute;y", "&;", "&a;", "&ab;", "tab\tnl\n", "laravel_throttles_exceptions:ユーザー",
	}
	enc := make([]string, len(keys))
	for i, k := range keys {
		enc[i] = base64.StdEncoding.EncodeToString([]byte(k))
	}
	in, _ := json.Marshal(enc)
	var out []string
	if err := json.Unmarshal(testenv.PHPEnv{}.Run(t, in, "ops_htmlentities.php", "clean"), &out); err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		want, _ := base64.StdEncoding.DecodeString(out[i])
		if got := CleanRateLimiterKey(k); got != string(want) {
			t.Errorf("clean(%q): PHP %q, Go %q", k, want, got)
		}
	}
}
