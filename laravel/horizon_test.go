package laravel

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/rdb"
	"github.com/laraq/laraq/internal/testenv"
)

// horizonCustom is a config/horizon.php written the ways applications write theirs.
const horizonCustom = `<?php

use Illuminate\Support\Str;
use App\Jobs\Quiet as QuietJob, App\Models;

/*
 | A comment with 'quotes' => and [brackets].
 */
return [
    'domain' => env('HORIZON_DOMAIN'),
    "use" => env('HORIZON_CONNECTION', 'horizon'), # hash comment
    'prefix' => env(
        'HORIZON_PREFIX',
        Str::slug(env('APP_NAME', 'laravel'), '_') . '_horizon:'
    ),
    'middleware' => ['web', \App\Http\Middleware\Admin::class],
    'waits' => ['redis:default' => 60],
    'trim' => [
        'recent' => (int) env('HORIZON_TRIM_RECENT', 120),
        'pending' => env('HORIZON_TRIM_PENDING') ?? 30,
        'completed' => 60 * 2,
        'failed' => env('HORIZON_TRIM_FAILED', '20160'),
        'monitored' => 7 * 24 * 60,
    ],
    'silenced' => [
        QuietJob::class,
        \App\Jobs\Other::class,
        Models\Audit::class,
        'App\\Jobs\\Literal',
        "App\\Jobs\\Double",
    ],
    'metrics' => ['trim_snapshots' => ['job' => 24, 'queue' => 24]],
    'fast_termination' => false,
    'memory_limit' => 64,
    'defaults' => [
        'supervisor-1' => [
            'connection' => 'redis',
            'queue' => ['default'],
            'maxProcesses' => 1,
            'tries' => 1,
        ],
    ],
    'environments' => [
        'production' => ['supervisor-1' => ['maxProcesses' => env('MAX', 10), 'balanceMaxShift' => 1]],
        'staging' => [],
        'local' => array('supervisor-1' => array('maxProcesses' => 3)),
    ],
];
`

// horizonPartial leaves trim's failed and silenced out: the package defaults apply only
// to top-level keys.
const horizonPartial = `<?php
return [
    'prefix' => 'myapp-horizon:',
    'trim' => ['recent' => 5, 'completed' => 7],
];
`

func horizonPackageConfig(t *testing.T) string {
	return filepath.Join(testenv.PeersDir(t), "horizon", "config", "horizon.php")
}

// TestParseHorizonConfigMatchesPHP evaluates config files with PHP (Laravel's env() and
// Str::slug, the package config merged under the application's) and with
// ParseHorizonConfig under the same environments.
func TestParseHorizonConfigMatchesPHP(t *testing.T) {
	testenv.NeedPHP(t)
	pkg := horizonPackageConfig(t)
	stock, err := os.ReadFile(pkg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	files := map[string]string{"stock": string(stock), "custom": horizonCustom, "partial": horizonPartial}
	envs := []map[string]string{
		{},
		{"APP_NAME": "My App"},
		{"APP_NAME": `"Acme Corp. (EU)"`, "HORIZON_TRIM_RECENT": "15 minutes", "HORIZON_TRIM_FAILED": "(null)"},
		{"HORIZON_PREFIX": "custom:", "HORIZON_CONNECTION": "queue", "HORIZON_TRIM_PENDING": "45"},
		{"HORIZON_PREFIX": "null"},
		{"HORIZON_PREFIX": "(empty)", "APP_NAME": "Café"},
		{"HORIZON_PREFIX": "true"},
	}
	for name, src := range files {
		path := filepath.Join(dir, name+".php")
		if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		for i, env := range envs {
			t.Run(fmt.Sprintf("%s/env%d", name, i), func(t *testing.T) {
				cmd := exec.Command("php", testenv.Testdata("php", "horizon", "config.php"), path, pkg)
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
					Prefix       any
					Use          any
					Trim         map[string]any
					Silenced     []string
					Environments []string
				}
				d := json.NewDecoder(bytes.NewReader(out))
				d.UseNumber()
				if err := d.Decode(&php); err != nil {
					t.Fatal(err)
				}
				got, err := ParseHorizonConfig([]byte(src), func(n string) (string, bool) { v, ok := env[n]; return v, ok })
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Unevaluated) > 0 {
					t.Errorf("unevaluated: %v", got.Unevaluated)
				}
				if want := hzPHPString(php.Prefix); got.Prefix != want {
					t.Errorf("prefix %q, PHP %q", got.Prefix, want)
				}
				if want := hzPHPString(php.Use); got.Use != want {
					t.Errorf("use %q, PHP %q", got.Use, want)
				}
				wantTrim := rdb.HorizonTrim{}
				for k, v := range php.Trim {
					n := 0
					if num, ok := v.(json.Number); ok {
						i, err := num.Int64()
						if err != nil {
							t.Fatalf("trim.%s = %v", k, v)
						}
						n = int(i)
					} else if s, ok := v.(string); ok {
						fmt.Sscan(s, &n)
					}
					switch k {
					case "recent":
						wantTrim.Recent = n
					case "pending":
						wantTrim.Pending = n
					case "completed":
						wantTrim.Completed = n
					case "recent_failed":
						wantTrim.RecentFailed = n
					case "failed":
						wantTrim.Failed = n
					case "monitored":
						wantTrim.Monitored = n
					}
				}
				if got.Trim != wantTrim {
					t.Errorf("trim %+v, PHP %+v", got.Trim, wantTrim)
				}
				if !reflect.DeepEqual(nonNil(got.Silenced), nonNil(php.Silenced)) {
					t.Errorf("silenced %q, PHP %q", got.Silenced, php.Silenced)
				}
				if !reflect.DeepEqual(got.Environments, php.Environments) {
					t.Errorf("environments %q, PHP %q", got.Environments, php.Environments)
				}
			})
		}
	}
}

// hzPHPString is (string) of a JSON-decoded PHP scalar.
func hzPHPString(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case bool:
		if v {
			return "1"
		}
		return ""
	case json.Number:
		return v.String()
	case string:
		return v
	}
	return fmt.Sprint(v)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func TestParseHorizonConfigReportsWhatItCannotEvaluate(t *testing.T) {
	src := `<?php
$name = config('app.name');
return [
    'prefix' => config('app.name') . '_horizon:',
    'use' => $connection,
    'trim' => ['recent' => 'soon', 'failed' => 100, 'monitored' => Cfg::MINUTES],
    'silenced' => [App\Jobs\A::class, "App\\Jobs\\{$x}", strtoupper('x'), 'App\Jobs\B'],
    'environments' => ['production' => fn () => [], 'local' => []],
];`
	h, err := ParseHorizonConfig([]byte(src), func(n string) (string, bool) { return map[string]string{"APP_NAME": "Shop"}[n], n == "APP_NAME" })
	if err != nil {
		t.Fatal(err)
	}
	if h.Prefix != "shop_horizon:" || h.Use != "default" || h.EffectivePrefix() != "shop_horizon:" {
		t.Errorf("defaults kept: prefix %q use %q", h.Prefix, h.Use)
	}
	if (h.Trim != rdb.HorizonTrim{Failed: 100}) {
		t.Errorf("trim %+v", h.Trim)
	}
	if strings.Join(h.Silenced, ",") != `App\Jobs\A,App\Jobs\B` {
		t.Errorf("silenced %q", h.Silenced)
	}
	if strings.Join(h.Environments, ",") != "production,local" {
		t.Errorf("environments %q", h.Environments)
	}
	var keys []string
	for _, u := range h.Unevaluated {
		keys = append(keys, u.Key)
		if u.Expr == "" || u.Reason == "" {
			t.Errorf("incomplete report %+v", u)
		}
	}
	want := "(file) prefix use trim.recent trim.monitored silenced.1 silenced.2"
	if got := strings.Join(keys, " "); got != want {
		t.Errorf("unevaluated %q, want %q\n%v", got, want, h.Unevaluated)
	}
}

func TestParseHorizonConfigErrors(t *testing.T) {
	for src, want := range map[string]string{
		``:                                  "no <?php open tag",
		`<?php echo 1;`:                     "no return statement",
		`<?php return 'x';`:                 "not an array",
		`<?php return ['a' => 'b`:           "unterminated string",
		`<?php return ['a' => <<<EOT`:       "heredoc",
		`<?php return [1, 2` + "\n":         `line 2: expected "]"`,
		`<?php /* open`:                     "unterminated comment",
		`<?php return ['prefix' => 'x'] ?>`: "closing tag",
	} {
		_, err := ParseHorizonConfig([]byte(src), nil)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", src, err, want)
		}
	}
	deep := "<?php return " + strings.Repeat("[", 5000) + strings.Repeat("]", 5000) + ";"
	if _, err := ParseHorizonConfig([]byte(deep), nil); err != nil {
		t.Errorf("a deep array the reader skips: %v", err)
	}
}

func FuzzParseHorizonConfig(f *testing.F) {
	f.Add([]byte(horizonCustom))
	f.Add([]byte(horizonPartial))
	f.Add([]byte(`<?php return ['prefix' => env('A', Str::slug("x" . 1.5, '-')) ?: (string) -0x1F, 'trim' => ['failed' => 1e3 / 8 % 3]];`))
	f.Add([]byte(`<?php use A\B as C; return [C\D::class => [ 'x' ? 'y' : 'z' ], ...$a];`))
	f.Fuzz(func(t *testing.T, src []byte) {
		h, err := ParseHorizonConfig(src, func(n string) (string, bool) { return n, len(n)%2 == 0 })
		if err != nil {
			return
		}
		if h.Use == "" && len(h.Unevaluated) == 0 && !bytes.Contains(src, []byte("use")) {
			t.Fatalf("empty use without a reason: %q", src)
		}
	})
}
