package laravel

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/php"
)

// appFiles is what Load learns from a Laravel application directory besides its .env.
type appFiles struct {
	release      laraq.Release // from the installed framework, zero if unknown
	releaseFile  string        // where it was read
	redisPrefix  *slugExpr
	cachePrefix  *slugExpr
	timezone     *tzExpr
	configCached bool   // bootstrap/cache/config.php exists: Laravel ignores .env
	databaseDir  string // database_path()
}

// slugExpr is a prefix written as the skeletons write it:
// env('NAME', Str::slug(env('APP_NAME', 'laravel')[, 'SEP']).'SUFFIX').
type slugExpr struct {
	defaultApp string
	sep        string
	suffix     string
}

func (e *slugExpr) prefix(appName string) string { return php.Slug(appName, e.sep) + e.suffix }

// tzExpr is config/app.php's timezone: a literal, or env('APP_TIMEZONE', 'DEFAULT').
type tzExpr struct {
	fromEnv bool
	value   string // the literal, or env()'s default
}

var (
	versionConst = regexp.MustCompile(`const\s+VERSION\s*=\s*'(\d+(?:\.\d+){0,2})`)
	lockVersion  = regexp.MustCompile(`"name":\s*"laravel/framework",\s*"version":\s*"v?(\d+(?:\.\d+){0,2})`)
	slugPattern  = `env\(\s*'%s'\s*,\s*Str::slug\(\s*env\(\s*'APP_NAME'\s*,\s*'([^']*)'\s*\)\s*(?:,\s*'([^']*)'\s*)?\)\s*\.\s*'([^']*)'\s*\)`
	redisPrefix  = regexp.MustCompile(fmt.Sprintf(slugPattern, "REDIS_PREFIX"))
	cachePrefix  = regexp.MustCompile(fmt.Sprintf(slugPattern, "CACHE_PREFIX"))
	tzEnv        = regexp.MustCompile(`'timezone'\s*=>\s*env\(\s*'APP_TIMEZONE'\s*,\s*'([^']*)'\s*\)`)
	tzLiteral    = regexp.MustCompile(`'timezone'\s*=>\s*'([^']*)'`)
)

// readApp inspects a Laravel application directory. Missing files are not errors: each
// piece of knowledge is optional.
func readApp(root string) appFiles {
	var a appFiles
	for _, f := range []string{
		filepath.Join(root, "vendor", "laravel", "framework", "src", "Illuminate", "Foundation", "Application.php"),
		filepath.Join(root, "composer.lock"),
	} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		re := versionConst
		if filepath.Base(f) == "composer.lock" {
			re = lockVersion
		}
		if m := re.FindSubmatch(b); m != nil {
			if rel, err := laraq.ParseRelease(string(m[1])); err == nil {
				a.release, a.releaseFile = rel, f
				break
			}
		}
	}
	if b, err := os.ReadFile(filepath.Join(root, "config", "database.php")); err == nil {
		a.redisPrefix = findSlug(redisPrefix, b)
	}
	if b, err := os.ReadFile(filepath.Join(root, "config", "cache.php")); err == nil {
		a.cachePrefix = findSlug(cachePrefix, b)
	}
	if b, err := os.ReadFile(filepath.Join(root, "config", "app.php")); err == nil {
		if m := tzEnv.FindSubmatch(b); m != nil {
			a.timezone = &tzExpr{fromEnv: true, value: string(m[1])}
		} else if m := tzLiteral.FindSubmatch(b); m != nil {
			a.timezone = &tzExpr{value: string(m[1])}
		}
	}
	if _, err := os.Stat(filepath.Join(root, "bootstrap", "cache", "config.php")); err == nil {
		a.configCached = true
	}
	a.databaseDir = filepath.Join(root, "database")
	return a
}

func findSlug(re *regexp.Regexp, b []byte) *slugExpr {
	m := re.FindSubmatch(b)
	if m == nil {
		return nil
	}
	e := &slugExpr{defaultApp: string(m[1]), sep: "-", suffix: string(m[3])}
	if m[2] != nil {
		e.sep = string(m[2])
	}
	return e
}

// inferVersion guesses the major version of the skeleton an application was created
// from by the keys of its .env, for when no framework is at hand. Each skeleton's
// .env.example names the settings its config files read, and those were renamed over
// time:
//
//	5.8–8.x   CACHE_DRIVER, BROADCAST_DRIVER, FILESYSTEM_DRIVER (8.x), MIX_* (Laravel Mix)
//	9.x       FILESYSTEM_DISK replaces FILESYSTEM_DRIVER; VITE_* replaces MIX_* from 9.19
//	10.x      as late 9.x (CACHE_DRIVER, FILESYSTEM_DISK, VITE_*)
//	11.x+     CACHE_STORE, BROADCAST_CONNECTION, APP_MAINTENANCE_DRIVER, BCRYPT_ROUNDS,
//	          APP_LOCALE, LOG_STACK …
//
// What the version decides here (the cache prefix suffix and the ":" after it) is the
// same for 9.x and 10.x and for 5.8–8.x, so the guess only has to tell those groups and
// 11.x apart. A key only 11.x+ configuration files read wins, since upgrading to 11.x
// means renaming CACHE_DRIVER to CACHE_STORE; keys an application of any version may add
// (APP_LOCALE, BCRYPT_ROUNDS) count only when no older key is there. With the old keys
// alone the guess is 8, whose cache keys 5.8–7.x share, unless FILESYSTEM_DISK or VITE_*
// say 9.x or later (10 then: 9.x and 10.x keys are the same). keys are the names in the
// file, in order; evidence lists the ones the guess rests on. 0: nothing to go by.
func inferVersion(keys []string) (version int, evidence []string) {
	has := map[string]bool{}
	var mix, vite string // first MIX_* and VITE_* key
	for _, k := range keys {
		has[k] = true
		if mix == "" && strings.HasPrefix(k, "MIX_") {
			mix = k
		}
		if vite == "" && strings.HasPrefix(k, "VITE_") {
			vite = k
		}
	}
	pick := func(names ...string) []string {
		var out []string
		for _, n := range names {
			if n != "" && has[n] {
				out = append(out, n)
			}
		}
		return out
	}
	if e := pick("CACHE_STORE", "BROADCAST_CONNECTION", "APP_MAINTENANCE_DRIVER"); len(e) > 0 {
		return 11, e
	}
	old := pick("CACHE_DRIVER", "BROADCAST_DRIVER", "FILESYSTEM_DRIVER", "FILESYSTEM_DISK", mix)
	switch {
	case has["FILESYSTEM_DRIVER"]:
		return 8, old
	case has["FILESYSTEM_DISK"] && mix != "":
		return 9, old
	case has["FILESYSTEM_DISK"]:
		return 10, append(old, pick(vite)...)
	case mix != "":
		return 8, old
	case len(old) > 0 && vite != "":
		return 10, append(old, vite)
	case len(old) > 0:
		return 8, old
	}
	if e := pick("APP_MAINTENANCE_STORE", "APP_LOCALE", "APP_FALLBACK_LOCALE", "APP_FAKER_LOCALE", "BCRYPT_ROUNDS", "LOG_STACK", "PHP_CLI_SERVER_WORKERS"); len(e) > 0 {
		return 11, e
	}
	return 0, nil
}
