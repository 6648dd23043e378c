package laravel

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// evalCase is an expression, the environment it is evaluated in, and its value as PHP's
// var_export writes it, or "" when laraq cannot evaluate it.
type evalCase struct {
	expr string
	env  map[string]string
	want string
}

var evalCases = []evalCase{
	{`'plain'`, nil, `'plain'`},
	{`"double \"quoted\"\t\x41\u{1F600}\101\$x"`, nil, "'double \"quoted\"\tA😀A$x'"},
	{`'it\'s \\ \n'`, nil, `'it\'s \\ \\n'`}, // single quotes keep \n
	{`42`, nil, `42`},
	{`-7`, nil, `-7`},
	{`1_000`, nil, `1000`},
	{`TRUE`, nil, `true`},
	{`Null`, nil, `null`},
	{`env('X')`, nil, `null`},
	{`env('X', 'd')`, nil, `'d'`},
	{`env('X', 'd')`, map[string]string{"X": "v"}, `'v'`},
	{`env('X', 'd')`, map[string]string{"X": ""}, `''`},
	{`env('X', 'd')`, map[string]string{"X": "(null)"}, `null`},
	{`env('X', 'd')`, map[string]string{"X": "False"}, `false`},
	{`env('X', 'd')`, map[string]string{"X": "empty"}, `''`},
	{`env('X', 'd')`, map[string]string{"X": `"quoted"`}, `'quoted'`},
	{`env('X', env('Y', env('Z', 'deep')))`, map[string]string{"Z": "z"}, `'z'`},
	{`env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_database_')`, nil, `'laravel_database_'`},
	{`env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_database_')`, map[string]string{"APP_NAME": "Café Crème & Co"}, `'cafe_creme_co_database_'`},
	{`env('REDIS_PREFIX', Str::slug((string) env('APP_NAME', 'laravel')).'-database-')`, map[string]string{"APP_NAME": "My Shop @ Home"}, `'my-shop-at-home-database-'`},
	{`Str::slug((string) env('APP_NAME', 'laravel')).'-cache-'`, map[string]string{"APP_NAME": "true"}, `'1-cache-'`},
	{`Str::slug(env('APP_NAME', 'laravel'), '_').'_cache'`, map[string]string{"APP_NAME": "null"}, `'_cache'`},
	{`\Illuminate\Support\Str::slug('Hello World', '.')`, nil, `'hello.world'`},
	{`(int) env('REDIS_QUEUE_RETRY_AFTER', 90)`, nil, `90`},
	{`(int) env('REDIS_QUEUE_RETRY_AFTER', 90)`, map[string]string{"REDIS_QUEUE_RETRY_AFTER": "600"}, `600`},
	{`(int) env('REDIS_QUEUE_RETRY_AFTER', 90)`, map[string]string{"REDIS_QUEUE_RETRY_AFTER": " 12abc"}, `12`},
	{`(integer) '0x1A'`, nil, `0`},
	{`(bool) env('X', '0')`, nil, `false`},
	{`(string) env('X', 5)`, nil, `'5'`},
	{`(string) (int) '7.9'`, nil, `'7'`},
	{`('a' . 'b') . (1)`, nil, `'ab1'`},
	{`'a' . true . false . null . 3`, nil, `'a13'`},
	{`env('DB_DATABASE', database_path('database.sqlite'))`, nil, `'/app/database/database.sqlite'`},
	{`database_path()`, nil, `'/app/database'`},
	{`database_path('/x')`, nil, `'/app/database/x'`},
	{`ENV('X', 'case')`, nil, `'case'`},
	{`env('X', 'trailing',)`, nil, `'trailing'`},
	// Not evaluated: laraq says so rather than guess.
	{`getenv('X') ?: 'y'`, nil, ""},
	{`env('X') ?? 'y'`, nil, ""},
	{`60 * 5`, nil, ""},
	{`1.5`, nil, ""},
	{`$prefix`, nil, ""},
	{`"a$prefix"`, nil, ""},
	{`env($name)`, nil, ""},
	{`env('X', default: 'y')`, nil, ""},
	{`Str::slug('a', '-', 'de')`, nil, ""},
	{`Str::lower('A')`, nil, ""},
	{`PHP_EOL`, nil, ""},
	{`['a']`, nil, ""},
	{`env('X', strtoupper('a'))`, map[string]string{"X": "set"}, `'set'`},
}

func evalString(t testing.TB, src string, env map[string]string, root string) (phpValue, error) {
	t.Helper()
	toks, err := tokenizePHP("<?php " + src)
	if err != nil {
		return phpValue{}, err
	}
	ev := &evaluator{root: root, env: func(name string) (envValue, Origin, bool) {
		v, ok := env[name]
		return phpEnv(v), Origin{Kind: Environment, Name: name}, ok
	}}
	r, err := ev.eval(parseExpr(toks))
	return r.v, err
}

func TestEvalExpressions(t *testing.T) {
	for _, tc := range evalCases {
		v, err := evalString(t, tc.expr, tc.env, "/app")
		switch {
		case tc.want == "" && err == nil:
			t.Errorf("%s: evaluated to %s, want an error", tc.expr, v.php())
		case tc.want != "" && err != nil:
			t.Errorf("%s: %v", tc.expr, err)
		case tc.want != "" && v.php() != tc.want:
			t.Errorf("%s with %v: %s, want %s", tc.expr, tc.env, v.php(), tc.want)
		}
	}
	if _, err := evalString(t, `database_path('x')`, nil, ""); err == nil || !strings.Contains(err.Error(), "application root") {
		t.Errorf("database_path without a root: %v", err)
	}
}

// TestEvalMatchesPHP evaluates the cases laraq can evaluate with each Laravel major's
// env() and Str::slug (testdata/php/laravel_expr.php) and compares the values.
func TestEvalMatchesPHP(t *testing.T) {
	var stdin bytes.Buffer
	var cases []evalCase
	for _, tc := range evalCases {
		if tc.want == "" {
			continue
		}
		line, _ := json.Marshal(map[string]any{"env": tc.env, "expr": tc.expr})
		stdin.Write(append(line, '\n'))
		cases = append(cases, tc)
	}
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		cmd := exec.Command("php", filepath.Join("testdata", "php", "laravel_expr.php"))
		cmd.Env = testenv.PHPEnv{Major: major}.Environ()
		cmd.Stdin = bytes.NewReader(stdin.Bytes())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("php: %v %s", err, out)
		}
		sc := bufio.NewScanner(bytes.NewReader(out))
		for i := 0; sc.Scan(); i++ {
			var got struct {
				Type  string          `json:"type"`
				Value json.RawMessage `json:"value"`
				Error string          `json:"error"`
			}
			if err := json.Unmarshal(sc.Bytes(), &got); err != nil || i >= len(cases) {
				t.Fatalf("line %d: %q %v", i, sc.Text(), err)
			}
			if got.Error != "" {
				t.Errorf("%s: PHP: %s", cases[i].expr, got.Error)
				continue
			}
			php := phpFromJSON(t, got.Type, got.Value)
			if php != cases[i].want {
				t.Errorf("%s with %v: PHP gives %s, laraq's table says %s", cases[i].expr, cases[i].env, php, cases[i].want)
			}
		}
	})
}

func phpFromJSON(t *testing.T, typ string, raw json.RawMessage) string {
	switch typ {
	case "null":
		return "null"
	case "bool", "int":
		return string(raw)
	case "string":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			t.Fatal(err)
		}
		return phpStr(s).php()
	}
	return fmt.Sprintf("<%s %s>", typ, raw)
}

func TestParseConfigFile(t *testing.T) {
	src := `<html>ignored <?php
declare(strict_types=1);
/* a comment with 'quotes' and [brackets */
use Illuminate\Support\Str; // another ] one
# shell comment (
function helper() { return ['not' => 'this']; }
$heredoc = <<<EOT
  text with ] and ' and ${x}
  EOT;
return array(
    'a' => ['b' => ['c' => 'deep', 'c' => 'last wins'], 'list' => ['x', 'y', 8 => 'z', 'w']],
    "dq" => env('A', "x"),
    'expr' => extension_loaded('pdo_mysql') ? array_filter([PDO::MYSQL_ATTR_SSL_CA => env('CA')]) : [],
    'spread' => [...$others, 'known' => 1],
    $computed => 'v',
    'nowdoc' => <<<'X'
    raw ) text
    X,
    7 => 'int key',
);
?>
trailing html`
	root, err := parseConfigFile(src)
	if err != nil {
		t.Fatal(err)
	}
	f := &configFile{rel: "config/x.php", root: root}
	for _, tc := range []struct {
		path   string
		status lookStatus
		src    string
	}{
		{"a.b.c", found, "'last wins'"},
		{"a.list.0", found, "'x'"},
		{"a.list.9", found, "'w'"},
		{"dq", found, `env('A', "x")`},
		{"expr", found, "extension_loaded('pdo_mysql') ? array_filter([PDO::MYSQL_ATTR_SSL_CA => env('CA')]) : []"},
		{"spread.known", found, "1"},
		{"spread.other", unknown, ""},
		{"missing", unknown, ""}, // the computed key might be it
		{"a.missing", absent, ""},
		{"a.b.c.d", unknown, ""},
		{"7", found, "'int key'"},
		{"nowdoc", found, "<<<…"},
	} {
		lk := walk(f, root, nil, strings.Split(tc.path, "."), nil)
		if lk.status != tc.status || lk.status == found && lk.node.source() != tc.src {
			src := ""
			if lk.node != nil {
				src = lk.node.source()
			}
			t.Errorf("%s: status %d %q, want %d %q", tc.path, lk.status, src, tc.status, tc.src)
		}
	}
	if lk := walk(f, root, nil, []string{"a", "b", "c"}, nil); lk.node.line != 11 {
		t.Errorf("line %d", lk.node.line)
	}
	for _, bad := range []string{
		"<?php return [",
		"<?php return ['a' => (];",
		"<?php return foo();",
		"<?php return ['a' => 'b'] + ['c' => 'd'];",
		"<?php $x = ['a' => 'b'];",
		"<?php return ['a' => 'unterminated];",
		"<?php /* open",
		"<?php return ['a' => <<<EOT\nno end",
		"<?php return " + strings.Repeat("[", 100) + strings.Repeat("]", 100) + ";",
		"<?php return ['a' => 'b' => 'c'];",
	} {
		if _, err := parseConfigFile(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// FuzzConfigFile feeds arbitrary bytes to the config-file reader and evaluates every
// value it finds: never a panic, and what evaluates has a PHP rendering.
func FuzzConfigFile(f *testing.F) {
	for _, n := range []string{"laravel-8", "laravel-11", "laravel-13"} {
		for _, file := range []string{"database", "cache", "queue", "app"} {
			if b, err := readLimited(filepath.Join("testdata", "skeletons", n, "config", file+".php"), maxPHPFileSize); err == nil {
				f.Add(string(b))
			}
		}
	}
	f.Add("<?php return ['a' => env('X', Str::slug((string) env('Y', 'z'), '_').'s'), 'b' => [...$c], $d => 1];")
	f.Add("<?php return array('a' => <<<'E'\nx\nE, 'b' => \"\\u{41}$x\", 'c' => (int) -1);")
	f.Fuzz(func(t *testing.T, src string) {
		root, err := parseConfigFile(src)
		if err != nil {
			return
		}
		var visit func(n *phpNode, depth int)
		visit = func(n *phpNode, depth int) {
			if depth > maxPHPDepth+1 {
				t.Fatalf("nesting %d beyond the limit", depth)
			}
			if !n.isArray {
				ev := &evaluator{root: "/app", env: func(name string) (envValue, Origin, bool) {
					return phpEnv(name), Origin{}, len(name)%2 == 0
				}}
				if r, err := ev.eval(parseExpr(n.expr)); err == nil {
					_ = r.v.php()
				}
				_ = n.source()
				return
			}
			for _, e := range n.entries {
				visit(e.value, depth+1)
			}
		}
		visit(root, 0)
	})
}

// FuzzEvalExpr evaluates arbitrary text as an expression: never a panic; a concatenation
// of integer literals evaluates to their digits.
func FuzzEvalExpr(f *testing.F) {
	for _, tc := range evalCases {
		f.Add(tc.expr)
	}
	f.Add(strings.Repeat("(string)", 200) + "'x'")
	f.Add(strings.Repeat("(", 80) + "'x'" + strings.Repeat(")", 80))
	f.Fuzz(func(t *testing.T, src string) {
		v, err := evalString(t, src, map[string]string{"A": "a", "N": "null"}, "/app")
		if err == nil {
			_ = v.php()
		}
		// Differential: digits joined by "." are their concatenation.
		var parts []string
		for _, r := range src {
			if r >= '1' && r <= '9' && len(parts) < 20 {
				parts = append(parts, string(r))
			}
		}
		if len(parts) > 0 {
			v, err := evalString(t, strings.Join(parts, " . "), nil, "")
			if err != nil || v.str() != strings.Join(parts, "") {
				t.Fatalf("%q: %v %v", strings.Join(parts, " . "), v, err)
			}
			if n, _ := strconv.Atoi(strings.Join(parts, "")); len(parts) < 19 && v.str() != strconv.Itoa(n) {
				t.Fatalf("digits %q", v.str())
			}
		}
	})
}
