package laravel

import (
	"fmt"
	"strings"
)

// Origin says where a setting's value came from, for messages and for the decisions that
// depend on it (a prefix derived from a skeleton default is a guess; one the application
// states is a fact).
type Origin struct {
	Kind OriginKind
	// Name is the flag or variable (LARAQ_REDIS_URL, REDIS_HOST), the file (the .env
	// path, config/database.php, composer.lock), or for Inferred the .env keys the guess
	// rests on, comma-separated.
	Name string
	// Line is the line of a .env file or a config file, 0 otherwise.
	Line int
}

// OriginKind is the kind of place a setting came from, from most to least authoritative.
type OriginKind int

const (
	// Default: nothing named it; the skeleton's default (or laraq's) applies.
	Default OriginKind = iota
	// Flag: a command-line flag (App.Flags), named by its LARAQ_* key.
	Flag
	// LaraqEnv: a LARAQ_* variable of the process environment.
	LaraqEnv
	// Environment: the application's own variable in the process environment.
	Environment
	// DotEnv: the application's .env file, at Line.
	DotEnv
	// ConfigFile: one of the application's config/*.php files.
	ConfigFile
	// Framework: the installed framework (vendor/, composer.lock) for the release, and
	// the framework's own config files (vendor/laravel/framework/config, 11.x+) for what
	// the application's config files leave out.
	Framework
	// Given: App.Release.
	Given
	// Inferred: guessed from the keys of the .env file (Name lists them).
	Inferred
	// NoApplication: no application was named (no .env, root or APP_NAME), so there is
	// nothing to derive the setting from.
	NoApplication
	// AppFiles: guessed from the application's files (Name says which and why): the
	// laravel/framework requirement of composer.json, or forms of config/*.php only one
	// skeleton wrote, when the framework is not installed.
	AppFiles
	// EnvDir: the .env file's directory (Name), taken as the application root because it
	// holds one (artisan, or config/ beside composer.json).
	EnvDir
)

// Named reports whether something other than a default or a guess decided the setting.
func (o Origin) Named() bool {
	return o.Kind != Default && o.Kind != Inferred && o.Kind != NoApplication && o.Kind != AppFiles
}

func (o Origin) String() string {
	switch o.Kind {
	case Default:
		return "default"
	case Flag:
		return "flag " + o.Name
	case LaraqEnv, Environment:
		return "environment " + o.Name
	case DotEnv:
		return fmt.Sprintf("%s:%d", o.Name, o.Line)
	case ConfigFile, Framework:
		if o.Line > 0 {
			return fmt.Sprintf("%s:%d", o.Name, o.Line)
		}
		return o.Name
	case Given:
		return "App.Release"
	case Inferred:
		return "inferred from .env keys " + o.Name
	case NoApplication:
		return "default (no application: no .env, Laravel root or APP_NAME)"
	case AppFiles:
		return "guessed from " + o.Name
	case EnvDir:
		return "the .env file's directory " + o.Name
	}
	return fmt.Sprintf("OriginKind(%d)", int(o.Kind))
}

// inferred builds the Origin of a guess from .env keys.
func inferred(keys []string) Origin { return Origin{Kind: Inferred, Name: strings.Join(keys, ", ")} }
