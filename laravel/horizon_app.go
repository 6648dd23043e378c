package laravel

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
)

// An application that uses Laravel Horizon pushes and works its jobs through Horizon's
// RedisQueue, whose listeners keep the dashboard's records. Load notices Horizon in the
// application and reads config/horizon.php, so that Connect gives Go workers and
// dispatchers the settings to keep the same records (laraq.HorizonOptions).

// HorizonMode says whether laraq writes Horizon's records: LARAQ_HORIZON, or
// `laraq work --horizon`.
const (
	HorizonAuto = "auto" // when the application uses Horizon (default)
	HorizonOn   = "on"   // always; without config/horizon.php Horizon's defaults apply
	HorizonOff  = "off"  // never
)

// stockPrefixKey finds a top-level 'prefix' key in a config/horizon.php.
var stockPrefixKey = regexp.MustCompile(`['"]prefix['"]\s*=>`)

// usesHorizon reports whether the application at root has laravel/horizon: installed
// (vendor/laravel/horizon), required (composer.json, composer.lock) or configured
// (config/horizon.php). It names the evidence.
func usesHorizon(root string) (bool, string) {
	if root == "" {
		return false, ""
	}
	if st, err := os.Stat(filepath.Join(root, "vendor", "laravel", "horizon")); err == nil && st.IsDir() {
		return true, "vendor/laravel/horizon"
	}
	for _, f := range []string{"composer.json", "composer.lock"} {
		if b, err := os.ReadFile(filepath.Join(root, f)); err == nil && bytes.Contains(b, []byte(`"laravel/horizon"`)) {
			return true, f
		}
	}
	if fileExists(filepath.Join(root, "config", "horizon.php")) {
		return true, "config/horizon.php"
	}
	return false, ""
}

// loadHorizon decides whether the application's Horizon records are written and reads
// its settings into c.Horizon (nil: off).
func (c *Config) loadHorizon(r *resolver) error {
	mode := HorizonAuto
	if v, origin, ok := r.override("HORIZON"); ok {
		switch v = strings.ToLower(strings.TrimSpace(v)); v {
		case HorizonAuto, HorizonOn, HorizonOff, "":
			if v != "" {
				mode = v
			}
		default:
			return fmt.Errorf("config: %s: want auto, on or off, got %q", origin, v)
		}
		r.origins["Horizon"] = origin
	}
	uses, evidence := usesHorizon(c.root)
	if mode == HorizonOff || mode == HorizonAuto && !uses {
		return nil
	}
	if uses {
		r.origins["Horizon"] = Origin{Kind: ConfigFile, Name: evidence}
	}
	env := func(name string) (string, bool) {
		if v, ok := r.lookup(name); ok {
			return v, true
		}
		v, ok := r.file[name]
		return v, ok
	}
	h := HorizonDefaults(c.AppName)
	setsPrefix := false
	if c.root != "" {
		path := filepath.Join(c.root, "config", "horizon.php")
		src, err := os.ReadFile(path)
		switch {
		case err == nil:
			if h, err = ParseHorizonConfig(src, env); err != nil {
				return fmt.Errorf("config: %s: %w", path, err)
			}
			setsPrefix = stockPrefixKey.Match(src)
			for _, u := range h.Unevaluated {
				c.warn("%s: %s; laraq uses Horizon's default for it (set it with a literal or env() to share it)", path, u)
			}
		case !os.IsNotExist(err):
			return fmt.Errorf("config: %w", err)
		}
	}
	if !setsPrefix {
		// The package's own config/horizon.php, merged under the application's:
		// env('HORIZON_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_horizon:').
		if v, ok := env("HORIZON_PREFIX"); ok {
			h.Prefix = envToValue(phpEnv(v)).String()
		}
	}
	switch h.Use {
	case "default", "cache":
	default:
		c.warn("horizon.use is %q: laraq knows the skeleton's Redis connections default and cache only and writes Horizon's records on default", h.Use)
	}
	c.Horizon = h
	return nil
}

// HorizonOptions returns the laraq.HorizonOptions of the application's Horizon, nil when
// laraq does not write Horizon's records for it. Client is left nil (the queue's); see
// Connect.
func (c *Config) HorizonOptions() *laraq.HorizonOptions {
	if c.Horizon == nil {
		return nil
	}
	t := c.Horizon.Trim
	return &laraq.HorizonOptions{
		Prefix: c.Horizon.EffectivePrefix(),
		Trim: laraq.HorizonTrim{Recent: t.Recent, Pending: t.Pending, Completed: t.Completed,
			RecentFailed: t.RecentFailed, Failed: t.Failed, Monitored: t.Monitored},
		Silenced: append([]string(nil), c.Horizon.Silenced...),
	}
}

// connectHorizon sets conn.Horizon, on the client of horizon.use.
func (c *Config) connectHorizon(conn *laraq.Connection, queue, cache redis.UniversalClient) {
	conn.Horizon = c.HorizonOptions()
	if conn.Horizon != nil && c.Horizon.Use == "cache" && cache != queue {
		conn.Horizon.Client = cache
	}
}
