package testenv

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPeersDirHoldsEveryTree(t *testing.T) {
	dir := PeersDir(t)
	for _, tree := range []string{"laravel-5", "laravel-6", "laravel-7", "laravel-9", "laravel-10", "laravel-11", "laravel-12", "laravel-13", "laravel-13.4"} {
		if _, err := os.Stat(filepath.Join(dir, tree, "Illuminate", "Queue", "Worker.php")); err != nil {
			t.Errorf("%s: %v", tree, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "horizon", "src", "Repositories", "RedisJobRepository.php")); err != nil {
		t.Errorf("horizon: %v", err)
	}
}

// TestEveryReleaseBoots: each major of the peers boots as the release it claims to be,
// with its skeleton's prefixes (5.8-8.x's cache prefix laravel_cache, 9.0.1-11.x's
// laravel_cache_, 12.1+'s hyphenated ones; RedisStore's ':' up to 10.x) and the optional
// parts the matrix expects of it.
func TestEveryReleaseBoots(t *testing.T) {
	want := []struct {
		major             int
		tag, redis, cache string
	}{
		{5, "v5.8.38", "laravel_database_", "laravel_cache:"},
		{6, "v6.20.44", "laravel_database_", "laravel_cache:"},
		{7, "v7.30.7", "laravel_database_", "laravel_cache:"},
		{8, "v8.83", "", "laravel_cache:"}, // bootstrap_l8.php: no prefix unless given
		{9, "v9.52.22", "laravel_database_", "laravel_cache_:"},
		{10, "v10.50.3", "laravel_database_", "laravel_cache_:"},
		{11, "v11.56.0", "laravel_database_", "laravel_cache_"},
		{12, "v12.67.0", "laravel-database-", "laravel-cache-"},
		{13, "v13.26.1", "laravel-database-", "laravel-cache-"},
	}
	for _, w := range want {
		t.Run(MajorName(w.major), func(t *testing.T) {
			t.Parallel()
			info := Peer(t, w.major)
			if info.Major != w.major || info.Tag != w.tag || info.CachePrefix != w.cache {
				t.Errorf("booted %+v, want major %d tag %s cache prefix %q", info, w.major, w.tag, w.cache)
			}
			// PHPEnv says "no prefix" when Prefix is empty; the skeleton's shows with the
			// variable unset.
			cmd := PHPEnv{Major: w.major}.Command("peer_info.php")
			cmd.Env = slices.DeleteFunc(cmd.Env, func(kv string) bool { return strings.HasPrefix(kv, "LARAQ_REDIS_PREFIX=") })
			out, err := cmd.Output()
			var skel PeerInfo
			if err == nil {
				err = json.Unmarshal(out, &skel)
			}
			if err != nil || skel.RedisPrefix != w.redis {
				t.Errorf("%s: the skeleton's connection prefix is %q (%v), want %q", w.tag, skel.RedisPrefix, err, w.redis)
			}
			for _, f := range []Feature{Unique, Encrypted, Batches, Context} {
				if got := info.Components[f.Component]; got != f.Has(w.major) {
					t.Errorf("%s: %s = %v, the matrix says %v (%s+)", info.Tag, f.Component, got, f.Has(w.major), f.Since)
				}
			}
			for _, c := range []string{"notifications", "mail", "broadcasting"} {
				if !info.Components[c] {
					t.Errorf("%s boots without %s", info.Tag, c)
				}
			}
		})
	}
}

func TestSelectMajors(t *testing.T) {
	all := []int{5, 6, 7, 8, 9, 10, 11, 12, 13}
	for spec, want := range map[string][]int{
		"":           all,
		"8,10-13":    {8, 10, 11, 12, 13},
		" 13 , 5-7 ": {5, 6, 7, 13},
		"9-9,9":      {9},
		"4":          all, // none of them
		"x":          all, // not a major
		"13-10":      all, // an empty range
	} {
		if got := selectMajors(spec, all); !slices.Equal(got, want) {
			t.Errorf("selectMajors(%q) = %v, want %v", spec, got, want)
		}
	}
}
