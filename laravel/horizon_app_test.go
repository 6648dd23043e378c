package laravel

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// writeApp creates an application directory with the given files (path → content; a
// path ending in "/" is a directory).
func writeApp(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, name)
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

func noLookup(string) (string, bool) { return "", false }

// TestLoadFindsHorizon: Horizon's records are written for an application that has
// laravel/horizon (installed, required, locked or configured), or with LARAQ_HORIZON=on;
// never with LARAQ_HORIZON=off or for an application without it.
func TestLoadFindsHorizon(t *testing.T) {
	apps := map[string]map[string]string{
		"vendor":   {"vendor/laravel/horizon/": ""},
		"composer": {"composer.json": `{"require": {"laravel/framework": "^11.0", "laravel/horizon": "^5.29"}}`},
		"lock":     {"composer.lock": `{"packages": [{"name": "laravel/horizon", "version": "v5.29.1"}]}`},
		"config":   {"config/horizon.php": "<?php\nreturn ['prefix' => 'shop-horizon:'];\n"},
		"none":     {"composer.json": `{"require": {"laravel/framework": "^11.0", "laravel/horizon-like": "1"}}`},
	}
	for name, files := range apps {
		for _, mode := range []string{"", "auto", "on", "off", "ON"} {
			root := writeApp(t, files)
			flags := map[string]string{}
			if mode != "" {
				flags["LARAQ_HORIZON"] = mode
			}
			cfg, err := Load(App{Root: root, LookupEnv: noLookup, Flags: flags})
			if err != nil {
				t.Fatalf("%s/%s: %v", name, mode, err)
			}
			want := name != "none" && strings.ToLower(mode) != "off" || strings.ToLower(mode) == "on"
			if got := cfg.Horizon != nil; got != want {
				t.Errorf("%s, LARAQ_HORIZON=%q: Horizon %v, want %v", name, mode, got, want)
			}
			if cfg.Horizon == nil {
				if cfg.HorizonOptions() != nil {
					t.Errorf("%s/%s: options without Horizon", name, mode)
				}
				continue
			}
			wantPrefix := "laravel_horizon:"
			if name == "config" {
				wantPrefix = "shop-horizon:"
			}
			if o := cfg.HorizonOptions(); o.Prefix != wantPrefix || o.Trim.Failed != 10080 || o.Client != nil {
				t.Errorf("%s/%s: options %+v, want prefix %s", name, mode, o, wantPrefix)
			}
		}
	}
	if _, err := Load(App{LookupEnv: noLookup, Flags: map[string]string{"LARAQ_HORIZON": "sometimes"}}); err == nil ||
		!strings.Contains(err.Error(), "LARAQ_HORIZON") {
		t.Errorf("LARAQ_HORIZON=sometimes: %v", err)
	}
	// No application at all, Horizon forced on: the package's defaults for APP_NAME.
	cfg, err := Load(App{LookupEnv: func(k string) (string, bool) {
		if k == "APP_NAME" {
			return "Acme Shop", true
		}
		return "", false
	}, Flags: map[string]string{"LARAQ_HORIZON": "on"}})
	if err != nil || cfg.Horizon == nil || cfg.HorizonOptions().Prefix != "acme_shop_horizon:" {
		t.Fatalf("on without an application: %v, %+v", err, cfg.Horizon)
	}
}

// TestLoadHorizonMatchesPHP compares the Horizon settings Load reads with what
// Laravel's config() holds (testdata/php/horizon/config.php: the application's file
// merged over the package's, env() on the .env values): a config/horizon.php that sets
// its prefix, one that does not (the package's env('HORIZON_PREFIX', …) then applies,
// which ParseHorizonConfig alone does not see), and none at all.
func TestLoadHorizonMatchesPHP(t *testing.T) {
	testenv.NeedPHP(t)
	pkg := horizonPackageConfig(t)
	for name, file := range map[string]string{
		"own prefix": "<?php\nreturn ['prefix' => env('HORIZON_PREFIX', 'x:').'y:', 'silenced' => [App\\Jobs\\Quiet::class]];\n",
		"no prefix":  "<?php\nreturn ['trim' => ['recent' => 30, 'failed' => 60], 'silenced' => ['App\\Jobs\\Quiet']];\n",
		"no file":    "",
	} {
		for _, env := range []map[string]string{{}, {"HORIZON_PREFIX": "shop:", "APP_NAME": "Shop"}, {"APP_NAME": "Café Bar"}} {
			files := map[string]string{"composer.json": `{"require": {"laravel/horizon": "^5.0"}}`}
			var lines []string
			for k, v := range env {
				lines = append(lines, k+`="`+v+`"`)
			}
			files[".env"] = strings.Join(lines, "\n") + "\n"
			appFile := pkg
			if file != "" {
				files["config/horizon.php"] = file
			}
			root := writeApp(t, files)
			if file != "" {
				appFile = filepath.Join(root, "config", "horizon.php")
			}
			cmd := exec.Command("php", testenv.Testdata("php", "horizon", "config.php"), appFile, pkg)
			cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
			for k, v := range env {
				cmd.Env = append(cmd.Env, k+"="+v)
			}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("php: %v\n%s", err, stderr.String())
			}
			var php struct {
				Prefix   string
				Silenced []string
			}
			if err := json.Unmarshal(out, &php); err != nil {
				t.Fatal(err)
			}
			cfg, err := Load(App{Root: root, LookupEnv: noLookup})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.Horizon == nil || cfg.Horizon.Prefix != php.Prefix || strings.Join(cfg.Horizon.Silenced, ",") != strings.Join(php.Silenced, ",") {
				t.Errorf("%s, env %v: laraq %+v, PHP prefix %q silenced %v", name, env, cfg.Horizon, php.Prefix, php.Silenced)
			}
		}
	}
}

// TestConnectHorizonUse: horizon.use names the Redis connection of Horizon's records;
// "cache" on another database than the queue's gets the cache client.
func TestConnectHorizonUse(t *testing.T) {
	srv := testenv.RedisServer(t)
	for use, wantCache := range map[string]bool{"default": false, "cache": true} {
		root := writeApp(t, map[string]string{
			"config/horizon.php": "<?php\nreturn ['use' => '" + use + "'];\n",
			".env":               "REDIS_DB=3\nREDIS_CACHE_DB=4\nREDIS_PORT=" + strconv.Itoa(srv.Port) + "\n",
		})
		cfg, err := Load(App{Root: root, LookupEnv: noLookup})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := cfg.Connect(context.Background(), ConnectOptions{WithoutFailedStore: true})
		if err != nil {
			t.Fatal(err)
		}
		if conn.Horizon == nil {
			t.Fatalf("%s: no Horizon", use)
		}
		if got := conn.Horizon.Client == conn.Cache.Client && conn.Horizon.Client != nil; got != wantCache {
			t.Errorf("use %s: Horizon client is the cache's: %v", use, got)
		}
		conn.Close()
	}
	root := writeApp(t, map[string]string{"config/horizon.php": "<?php\nreturn ['use' => 'horizon-redis', 'prefix' => config('app.x')];\n"})
	cfg, err := Load(App{Root: root, LookupEnv: noLookup})
	if err != nil {
		t.Fatal(err)
	}
	w := strings.Join(cfg.Warnings, "\n")
	if !strings.Contains(w, `horizon.use is "horizon-redis"`) || !strings.Contains(w, "horizon.prefix") {
		t.Errorf("warnings:\n%s", w)
	}
}
