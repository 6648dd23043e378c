package config

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// appFiles is what Load learns from a Laravel application directory besides its .env.
type appFiles struct {
	version      int    // major version from the installed framework, 0 if unknown
	versionFile  string // where it was read
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

func (e *slugExpr) prefix(appName string) string { return Slug(appName, e.sep) + e.suffix }

// tzExpr is config/app.php's timezone: a literal, or env('APP_TIMEZONE', 'DEFAULT').
type tzExpr struct {
	fromEnv bool
	value   string // the literal, or env()'s default
}

var (
	versionConst = regexp.MustCompile(`const\s+VERSION\s*=\s*'(\d+)\.`)
	lockVersion  = regexp.MustCompile(`"name":\s*"laravel/framework",\s*"version":\s*"v?(\d+)\.`)
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
			a.version, _ = strconv.Atoi(string(m[1]))
			a.versionFile = f
			break
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
