package laravel

import (
	"path/filepath"
	"slices"
	"testing"
)

// TestAlternativeCacheKeys: when the version is only guessed, the other versions' restart
// keys are listed, keeping what the application states; with a named version none are.
func TestAlternativeCacheKeys(t *testing.T) {
	skel8 := filepath.Join("testdata", "skeleton", "laravel8.env")
	skel11 := filepath.Join("testdata", "skeleton", "laravel11.env")
	for _, tc := range []struct {
		name    string
		src     App
		restart string   // the primary scheme's key
		also    []string // the alternatives' keys, in order
	}{
		{"nothing known", App{}, "laravel_cache_illuminate:queue:restart", []string{
			"laravel_cache:illuminate:queue:restart",
			"laravel_cache_:illuminate:queue:restart",
			"laravel-cache-illuminate:queue:restart",
		}},
		{"Laravel 8 skeleton .env", App{EnvFile: skel8}, "laravel_database_laravel_cache:illuminate:queue:restart", []string{
			"laravel_database_laravel_cache_:illuminate:queue:restart",
			"laravel_database_laravel_cache_illuminate:queue:restart",
			"laravel-database-laravel-cache-illuminate:queue:restart",
		}},
		{"explicit version 8", App{EnvFile: skel8, Release: majorRelease(8)}, "laravel_database_laravel_cache:illuminate:queue:restart", nil},
		{"--laravel-version 8", App{EnvFile: skel8, Flags: map[string]string{"LARAQ_LARAVEL_VERSION": "8"}},
			"laravel_database_laravel_cache:illuminate:queue:restart", nil},
		{"LARAQ_LARAVEL_VERSION 11", App{LookupEnv: env("LARAQ_LARAVEL_VERSION", "11")}, "laravel_cache_illuminate:queue:restart", nil},
		{"framework under the root", App{Root: "testdata/app8"}, "acme_shop_database_acme_shop_cache:illuminate:queue:restart", nil},
		// A stated cache prefix is kept: only the separator and the 12.x connection prefix vary.
		{"explicit CACHE_PREFIX", App{EnvFile: writeEnv(t, "APP_NAME=\"My Shop\"\nCACHE_PREFIX=shop\n")},
			"my_shop_database_shopilluminate:queue:restart", []string{
				"my_shop_database_shop:illuminate:queue:restart",
				"my-shop-database-shopilluminate:queue:restart",
			}},
		// 11.x's .env.example sets CACHE_PREFIX= (empty); 12.x's too, under laravel-database-.
		{"Laravel 11 skeleton .env", App{EnvFile: skel11}, "laravel_database_illuminate:queue:restart", []string{
			"laravel-database-illuminate:queue:restart",
		}},
		{"explicit REDIS_PREFIX", App{EnvFile: writeEnv(t, "APP_NAME=Shop\nREDIS_PREFIX=p:\n")}, "p:shop_cache_illuminate:queue:restart", []string{
			"p:shop_cache:illuminate:queue:restart",
			"p:shop_cache_:illuminate:queue:restart",
			"p:shop-cache-illuminate:queue:restart",
		}},
		{"explicit --prefix", App{EnvFile: skel8, Flags: map[string]string{"LARAQ_REDIS_PREFIX": "q_"}}, "q_laravel_cache:illuminate:queue:restart", []string{
			"q_laravel_cache_:illuminate:queue:restart",
			"q_laravel_cache_illuminate:queue:restart",
			"q_laravel-cache-illuminate:queue:restart",
		}},
		{"hyphen style forced", App{EnvFile: writeEnv(t, "APP_NAME=Shop\n"), LookupEnv: env("LARAQ_PREFIX_STYLE", "hyphen")},
			"shop-database-shop-cache-illuminate:queue:restart", []string{
				"shop_database_shop_cache:illuminate:queue:restart",
				"shop_database_shop_cache_:illuminate:queue:restart",
				"shop_database_shop_cache_illuminate:queue:restart",
			}},
	} {
		c := mustLoad(t, tc.src)
		var got []string
		for _, k := range c.AlsoWatch() {
			got = append(got, k.RestartKey())
		}
		if primary := c.CacheScheme().RestartKey(); primary != tc.restart || !slices.Equal(got, tc.also) {
			t.Errorf("%s (version %d from %q): restart %q, also %q\nwant %q, also %q", tc.name,
				c.major(), c.Origins["Release"].String(), primary, got, tc.restart, tc.also)
		}
		if guessed := tc.also != nil; c.Release.Guessed != guessed {
			t.Errorf("%s: VersionGuessed %v", tc.name, c.Release.Guessed)
		}
	}
}
