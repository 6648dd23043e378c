package laravel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/laraq/laraq"
)

// appFiles is what Load learns from a Laravel application directory besides its .env: the
// installed framework's release and the config files.
type appFiles struct {
	root          string
	release       laraq.Release // from the installed framework, zero if unknown
	releaseFrom   Origin
	constraint    laraq.Release // composer.json's laravel/framework requirement (a guess)
	constrainFrom Origin
	files         map[string]*configFile // config/<name>.php
	base          map[string]*configFile // vendor/laravel/framework/config/<name>.php (11.x+)
	cached        *configFile            // bootstrap/cache/config.php
}

// configFile is one parsed PHP config file; err says why it could not be read.
type configFile struct {
	rel  string // the path relative to the application root, for messages
	root *phpNode
	err  error
}

// looksLikeAppRoot reports whether dir holds a Laravel application: artisan, or a
// config/ directory beside composer.json. The .env of an application sits in its root.
func looksLikeAppRoot(dir string) bool {
	if fileExists(filepath.Join(dir, "artisan")) {
		return true
	}
	st, err := os.Stat(filepath.Join(dir, "config"))
	return err == nil && st.IsDir() && fileExists(filepath.Join(dir, "composer.json"))
}

// readApp inspects a Laravel application directory. Missing files are not errors: each
// piece of knowledge is optional.
func readApp(root string) *appFiles {
	a := &appFiles{root: root, files: map[string]*configFile{}, base: map[string]*configFile{}}
	a.release, a.releaseFrom = frameworkRelease(root)
	a.constraint, a.constrainFrom = composerConstraint(root)
	for _, name := range configFileNames {
		if f := readConfigFile(root, filepath.Join("config", name+".php")); f != nil {
			a.files[name] = f
		}
		if f := readConfigFile(root, filepath.Join("vendor", "laravel", "framework", "config", name+".php")); f != nil {
			a.base[name] = f
		}
	}
	a.cached = readConfigFile(root, filepath.Join("bootstrap", "cache", "config.php"))
	return a
}

// readConfigFile parses root/rel, nil when the file does not exist.
func readConfigFile(root, rel string) *configFile {
	b, err := readLimited(filepath.Join(root, rel), maxPHPFileSize)
	if os.IsNotExist(err) {
		return nil
	}
	f := &configFile{rel: filepath.ToSlash(rel)}
	if err == nil {
		f.root, err = parseConfigFile(string(b))
	}
	f.err = err
	return f
}

// readLimited reads a file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("larger than %d bytes", limit)
	}
	return b, nil
}

var versionConst = regexp.MustCompile(`const\s+VERSION\s*=\s*'v?(\d+(?:\.\d+){0,2})`)

// frameworkRelease reads the installed laravel/framework's release: the VERSION constant of
// its Application class (what runs), else Composer's record of the install
// (vendor/composer/installed.json, either format), else composer.lock.
func frameworkRelease(root string) (laraq.Release, Origin) {
	appPHP := filepath.Join(root, "vendor", "laravel", "framework", "src", "Illuminate", "Foundation", "Application.php")
	if b, err := readLimited(appPHP, maxPHPFileSize); err == nil {
		if m := versionConst.FindSubmatch(b); m != nil {
			if rel, err := laraq.ParseRelease(string(m[1])); err == nil {
				return rel, Origin{Kind: Framework, Name: appPHP}
			}
		}
	}
	for _, f := range []string{
		filepath.Join(root, "vendor", "composer", "installed.json"),
		filepath.Join(root, "composer.lock"),
	} {
		if rel, ok := composerPackageRelease(f); ok {
			return rel, Origin{Kind: Framework, Name: f}
		}
	}
	return laraq.Release{}, Origin{}
}

// composerPackage is an entry of composer.lock's packages or installed.json.
type composerPackage struct {
	Name              string `json:"name"`
	Version           string `json:"version"`
	VersionNormalized string `json:"version_normalized"`
}

// composerPackageRelease finds laravel/framework in composer.lock, or in
// vendor/composer/installed.json: a list of packages (Composer 1) or {"packages": [...]}
// (Composer 2).
func composerPackageRelease(path string) (laraq.Release, bool) {
	b, err := readLimited(path, 256<<20)
	if err != nil {
		return laraq.Release{}, false
	}
	var pkgs []composerPackage
	if t := bytes.TrimLeft(b, " \t\r\n\ufeff"); len(t) > 0 && t[0] == '[' {
		if json.Unmarshal(t, &pkgs) != nil {
			return laraq.Release{}, false
		}
	} else {
		var doc struct {
			Packages []composerPackage `json:"packages"`
		}
		if json.Unmarshal(t, &doc) != nil {
			return laraq.Release{}, false
		}
		pkgs = doc.Packages
	}
	for _, p := range pkgs {
		if p.Name != "laravel/framework" {
			continue
		}
		if rel, err := laraq.ParseRelease(p.Version); err == nil {
			return rel, true
		}
		// A branch install ("12.x-dev"): the normalized form still starts with the release.
		parts := strings.Split(p.VersionNormalized, ".")
		if len(parts) >= 3 {
			if rel, err := laraq.ParseRelease(strings.Join(parts[:3], ".")); err == nil {
				return rel, true
			}
		}
	}
	return laraq.Release{}, false
}

var constraintMajor = regexp.MustCompile(`(?:^|[^0-9.])v?(\d+)(?:\.|\b)`)

// composerConstraint reads composer.json's requirement on laravel/framework ("^13.0",
// "^9.0|^10.0"): the highest major it allows, as a guess of the release a `composer
// install` gives, for an application whose vendor/ and composer.lock are missing.
func composerConstraint(root string) (laraq.Release, Origin) {
	path := filepath.Join(root, "composer.json")
	b, err := readLimited(path, 16<<20)
	if err != nil {
		return laraq.Release{}, Origin{}
	}
	var doc struct {
		Require map[string]string `json:"require"`
	}
	if json.Unmarshal(b, &doc) != nil {
		return laraq.Release{}, Origin{}
	}
	c, ok := doc.Require["laravel/framework"]
	if !ok {
		return laraq.Release{}, Origin{}
	}
	best := 0
	for _, m := range constraintMajor.FindAllStringSubmatch(c, -1) {
		if n, err := strconv.Atoi(m[1]); err == nil && n > best && n < 100 {
			best = n
		}
	}
	if best < 5 {
		return laraq.Release{}, Origin{}
	}
	return laraq.Release{Major: best, Minor: 1 << 30, Guessed: true},
		Origin{Kind: AppFiles, Name: fmt.Sprintf("%s requires laravel/framework %s", path, c)}
}

// brokenFiles lists the config files that exist but cannot be read, with why: Load warns
// once about each, and their keys are the skeleton's.
func (a *appFiles) brokenFiles() []*configFile {
	var out []*configFile
	if a.cached != nil {
		if a.cached.err != nil {
			out = append(out, a.cached)
		}
		return out
	}
	for _, name := range configFileNames {
		if f := a.files[name]; f != nil && f.err != nil {
			out = append(out, f)
		}
		if f := a.base[name]; f != nil && f.err != nil {
			out = append(out, f)
		}
	}
	return out
}

// configLayers answers "what does config('file.a.b') hold" for the application the way
// Laravel loads it: the cached configuration alone when there is one; otherwise the
// application's config/*.php, with (11.x+) the framework's own files under it for the
// files and top-level keys the application leaves out; then laraq's restatement of the
// skeleton's files for what neither has.
type configLayers struct {
	app      *appFiles // nil: no application directory
	merge    bool      // 11.x+: the framework's config is the base
	base     map[string]*phpNode
	baseEra  era
	skeleton map[string]*phpNode
	skelEra  era
}

// lookStatus is what a lookup found.
type lookStatus int

const (
	found   lookStatus = iota // a value (node) in file
	absent                    // the application's config leaves the key out: Laravel sees null
	unknown                   // the file or a level above the key cannot be read (why)
	builtin                   // laraq's skeleton (node, may be nil)
)

type lookup struct {
	status lookStatus
	node   *phpNode
	file   string // where node is, relative to the root ("config/queue.php")
	why    string
}

// mergeable are the options LoadConfiguration merges a second level deep (11.x+): a
// connection the application does not define comes from the framework's file.
var mergeable = map[string]string{"cache": "stores", "database": "connections", "queue": "connections"}

func (l *configLayers) get(file string, path ...string) lookup {
	// A file that does not parse was reported once by Load (brokenFiles); its keys are
	// the skeleton's.
	if l.app != nil && l.app.cached != nil {
		f := l.app.cached
		if f.err != nil {
			return l.fromSkeleton(l.skeleton, file, path)
		}
		return walk(f, f.root, nil, append([]string{file}, path...), nil)
	}
	if l.app != nil {
		if f := l.app.files[file]; f != nil {
			if f.err != nil {
				return l.fromSkeleton(l.skeleton, file, path)
			}
			var fallback func(depth int) (lookup, bool)
			if l.merge {
				fallback = func(depth int) (lookup, bool) {
					if depth == 0 || depth == 1 && mergeable[file] == path[0] {
						return l.fromBase(file, path), true
					}
					return lookup{}, false
				}
			}
			return walk(f, f.root, []string{file}, path, fallback)
		}
		if l.merge {
			return l.fromBase(file, path)
		}
	}
	return l.fromSkeleton(l.skeleton, file, path)
}

func (l *configLayers) fromBase(file string, path []string) lookup {
	if f := l.app.base[file]; f != nil && f.err == nil {
		return walk(f, f.root, []string{file}, path, nil)
	}
	return l.fromSkeleton(l.base, file, path)
}

func (l *configLayers) fromSkeleton(files map[string]*phpNode, file string, path []string) lookup {
	lk := walk(&configFile{rel: "config/" + file + ".php"}, files[file], []string{file}, path, nil)
	if lk.status == found {
		return lookup{status: builtin, node: lk.node, file: lk.file}
	}
	return lookup{status: builtin, file: lk.file}
}

// walk follows path from node; base are the keys above node (the config file's name),
// for messages. fallback, when set, is asked for a key missing at a depth.
func walk(f *configFile, node *phpNode, base, path []string, fallback func(depth int) (lookup, bool)) lookup {
	name := func(i int) string { return strings.Join(append(slices.Clone(base), path[:i]...), ".") }
	for i, k := range path {
		if node == nil || !node.isArray {
			return lookup{status: unknown, file: f.rel, why: name(i) + " is not an array literal"}
		}
		child, ok := node.get(k)
		if !ok {
			if fallback != nil {
				if lk, ok := fallback(i); ok {
					return lk
				}
			}
			if node.dynamic {
				return lookup{status: unknown, file: f.rel, why: name(i) + " has entries laraq cannot read (a spread or a computed key)"}
			}
			return lookup{status: absent, file: f.rel}
		}
		node = child
	}
	return lookup{status: found, node: node, file: f.rel}
}

// skeletonGuess reads which skeleton the application's config files come from, by the
// forms only one skeleton wrote, for an application whose framework is not installed:
// hyphenated prefixes (v12.1.0+), CACHE_STORE with or without APP_TIMEZONE (12.0 / 11.x),
// CACHE_DRIVER with the cache prefix '_cache' (8.x) or '_cache_' (9.x–10.x).
func (a *appFiles) skeletonGuess() (laraq.Release, Origin) {
	expr := func(file string, path ...string) (*phpExpr, string) {
		f := a.files[file]
		if f == nil || f.err != nil {
			return nil, ""
		}
		lk := walk(f, f.root, []string{file}, path, nil)
		if lk.status != found || lk.node.isArray {
			return nil, ""
		}
		return parseExpr(lk.node.expr), fmt.Sprintf("%s:%d", f.rel, lk.node.line)
	}
	guess := func(major int, where, what string) (laraq.Release, Origin) {
		return laraq.Release{Major: major, Minor: 1 << 30, Guessed: true},
			Origin{Kind: AppFiles, Name: fmt.Sprintf("%s %s", where, what)}
	}
	for _, k := range []struct{ file, key, suffix string }{{"database", "redis.options.prefix", "-database-"}, {"cache", "prefix", "-cache-"}} {
		if e, where := expr(k.file, strings.Split(k.key, ".")...); e != nil && e.hasKind(exSlug) {
			if lits := e.literals(); len(lits) > 0 && lits[len(lits)-1] == k.suffix {
				return guess(12, where, "(the "+k.key+" of skeletons from v12.1.0)")
			}
		}
	}
	store, where := expr("cache", "default")
	if store == nil {
		return laraq.Release{}, Origin{}
	}
	names := strings.Join(store.envNames(), ",")
	switch {
	case names == "CACHE_STORE":
		if tz, tzWhere := expr("app", "timezone"); tz != nil {
			if tz.kind == exLit {
				return guess(12, tzWhere, "(a literal app.timezone beside CACHE_STORE: the 12.0 skeleton)")
			}
			if strings.Join(tz.envNames(), ",") == "APP_TIMEZONE" {
				return guess(11, tzWhere, "(env('APP_TIMEZONE') beside CACHE_STORE: the 11.x skeleton)")
			}
		}
		return guess(11, where, "(CACHE_STORE: skeletons from 11.x)")
	case names == "CACHE_DRIVER":
		if p, pWhere := expr("cache", "prefix"); p != nil && p.hasKind(exSlug) && len(p.literals()) > 0 {
			switch lits := p.literals(); lits[len(lits)-1] {
			case "_cache":
				return guess(8, pWhere, "(the cache prefix '_cache' of skeletons up to 8.x)")
			case "_cache_":
				return guess(10, pWhere, "(the cache prefix '_cache_' of the 9.x–10.x skeletons)")
			}
		}
		return guess(8, where, "(CACHE_DRIVER: skeletons up to 10.x)")
	}
	return laraq.Release{}, Origin{}
}
