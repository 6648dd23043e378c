package laravel

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// dotenvCase is a .env file, the process environment around it, and what env() gives.
type dotenvCase struct {
	name    string
	file    string
	environ map[string]string
	// want maps a name to env()'s value: a string, nil (null or unset), or a bool.
	want map[string]any
	// wantErr is part of phpdotenv's error message when the file is refused.
	wantErr string
}

var dotenvCases = []dotenvCase{
	{
		name: "skeleton",
		file: "APP_NAME=Laravel\nAPP_ENV=local\nAPP_KEY=base64:AAAA\nAPP_DEBUG=true\n\nREDIS_HOST=127.0.0.1\nREDIS_PASSWORD=null\nREDIS_PORT=6379\n# comment\nCACHE_DRIVER=file\nVITE_APP_NAME=\"${APP_NAME}\"\n",
		want: map[string]any{"APP_NAME": "Laravel", "APP_DEBUG": true, "REDIS_PASSWORD": nil, "REDIS_PORT": "6379",
			"VITE_APP_NAME": "Laravel", "MISSING": nil, "APP_KEY": "base64:AAAA"},
	},
	{
		name: "dollar without braces stays",
		file: "REDIS_PASSWORD=pa$W0rd$\nP2=\"a$B c\"\nP3='x${APP}'\n",
		want: map[string]any{"REDIS_PASSWORD": "pa$W0rd$", "P2": "a$B c", "P3": "x${APP}"},
	},
	{
		name:    "interpolation sees the process environment first",
		file:    "A=file\nB=${A}\nC=${LATER}-${NOPE}-${PROC}\nLATER=x\nA=again\n",
		environ: map[string]string{"PROC": "p", "A": "proc"},
		want:    map[string]any{"A": "proc", "B": "proc", "C": "${LATER}-${NOPE}-p", "LATER": "x"},
	},
	{
		name: "double quotes and escapes",
		file: `Q="a \"b\" \\ \$HOME \t|\n|" # trailing` + "\nR=\"${Q2}\"\nQ2=v\nS=\"x\\fy\"\n",
		want: map[string]any{"Q": "a \"b\" \\ $HOME \t|\n|", "R": "${Q2}", "S": "x\fy"},
	},
	{
		name: "keywords and quotes of env()",
		file: "T1=TRUE\nT2=(false)\nT3=empty\nT4=(Null)\nT5='\"inner\"'\nT6=\"'x'\"\nT7=\nT8=\"\"\n",
		want: map[string]any{"T1": true, "T2": false, "T3": "", "T4": nil, "T5": "inner", "T6": "x", "T7": "", "T8": ""},
	},
	{
		name: "comments and whitespace",
		file: "  # indented comment\nU1=value # note\nU2=a#b\nU3=#all comment\n\tU4 = spaced \nexport U5=exp\n\"U6\"=quoted-name\nU7=\"x\" # c\n",
		want: map[string]any{"U1": "value", "U2": "a", "U3": "", "U4": "spaced", "U5": "exp", "U6": "quoted-name", "U7": "x"},
	},
	{
		name: "multi-line double-quoted value",
		file: "M=\"line one\nline ${N}\n\"\nN=late\nO=after\r\nP=cr\rQ=end",
		want: map[string]any{"M": "line one\nline ${N}\n", "O": "after", "P": "cr", "Q": "end"},
	},
	{
		name: "line without equals unsets a name loaded before",
		file: "V=1\nV\nW=2\n",
		want: map[string]any{"V": nil, "W": "2"},
	},
	{
		name: "unicode and symbols",
		file: "X1=Café-Ünï\nX2=\"東京 ${X1}\"\nX3=a=b=c\nX4=(paren)\n",
		want: map[string]any{"X1": "Café-Ünï", "X2": "東京 Café-Ünï", "X3": "a=b=c", "X4": "(paren)"},
	},
	{name: "unquoted space", file: "A=b c\n", wantErr: "Encountered unexpected whitespace at [b c]."},
	{name: "unterminated quote", file: "A='abc\n", wantErr: "Encountered a missing closing quote at ['abc]."},
	{name: "bad escape", file: "A=\"a\\qb\"\n", wantErr: "Encountered an unexpected escape sequence at [\"a\\qb\"]."},
	{name: "bad name", file: "A-B=1\n", wantErr: "Encountered an invalid name at [A-B]."},
	{name: "short export", file: "export F=1\n", wantErr: "Encountered an invalid name at [export F]."},
	{name: "empty name", file: "=1\n", wantErr: "Encountered an unexpected equals at [=1]."},
}

// goDotenv loads the case with laraq's reader and returns env() of each name.
func goDotenv(t *testing.T, c dotenvCase, names []string) (map[string]any, error) {
	entries, err := parseDotenv(".env", c.file)
	if err != nil {
		return nil, err
	}
	lookup := func(k string) (string, bool) { v, ok := c.environ[k]; return v, ok }
	loaded, _ := loadDotenv(entries, lookup)
	out := map[string]any{}
	for _, n := range names {
		raw, ok := lookup(n)
		if !ok {
			raw, ok = loaded[n]
		}
		if !ok {
			out[n] = nil
			continue
		}
		v := phpEnv(raw)
		switch {
		case v.null:
			out[n] = nil
		case v.bool:
			out[n] = v.str == "1"
		default:
			out[n] = v.str
		}
	}
	return out, nil
}

func caseNames(c dotenvCase) []string {
	var names []string
	for n := range c.want {
		names = append(names, n)
	}
	return names
}

func TestDotenvCases(t *testing.T) {
	for _, c := range dotenvCases {
		t.Run(c.name, func(t *testing.T) {
			got, err := goDotenv(t, c, caseNames(c))
			if c.wantErr != "" {
				var de *DotenvError
				if !errors.As(err, &de) || de.Reason != c.wantErr {
					t.Fatalf("error = %v, want reason %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("got  %#v\nwant %#v", got, c.want)
			}
		})
	}
}

// TestDotenvMatchesPHP loads every case with phpdotenv 5 through Laravel's Env repository
// and compares each variable with laraq's reading.
func TestDotenvMatchesPHP(t *testing.T) {
	testenv.NeedPHP(t)
	probe := exec.Command("php", "-r", `require "Dotenv/autoload.php"; exit(class_exists("Dotenv\\Dotenv") ? 0 : 1);`)
	testenv.Need(t, probe.Run() == nil, "vlucas/phpdotenv 5 for PHP (Debian package php-vlucas-phpdotenv) is not installed")
	for _, c := range dotenvCases {
		t.Run(c.name, func(t *testing.T) { comparePHPDotenv(t, c) })
	}
}

// comparePHPDotenv loads c with phpdotenv through Laravel's Env repository and with laraq,
// and compares env() of every name of c.want (or the refusal of the file).
func comparePHPDotenv(t *testing.T, c dotenvCase) {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, ".env")
	if err := os.WriteFile(path, []byte(c.file), 0o600); err != nil {
		t.Fatal(err)
	}
	names := caseNames(c)
	cmd := exec.Command("php", append([]string{testenv.Testdata("php", "ops_dotenv.php"), path}, names...)...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	for k, v := range c.environ {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("php: %v\n%s", err, out)
	}
	var php struct {
		Error string                    `json:"error"`
		Vars  map[string]map[string]any `json:"vars"`
	}
	if err := json.Unmarshal(out, &php); err != nil {
		t.Fatalf("php output %q: %v", out, err)
	}
	got, goErr := goDotenv(t, c, names)
	if php.Error != "" {
		var de *DotenvError
		if !errors.As(goErr, &de) || !strings.HasSuffix(php.Error, de.Reason) {
			t.Fatalf("PHP refuses the file (%s), laraq: %v", php.Error, goErr)
		}
		return
	}
	if goErr != nil {
		t.Fatalf("PHP reads the file, laraq: %v", goErr)
	}
	for _, n := range names {
		if !reflect.DeepEqual(php.Vars[n]["env"], got[n]) {
			t.Errorf("%s: PHP env() = %#v, laraq %#v", n, php.Vars[n]["env"], got[n])
		}
	}
}

func TestDotenvErrorLine(t *testing.T) {
	_, err := parseDotenv("app/.env", "A=1\n\n# c\nB=\"multi\nline\" x\n")
	var de *DotenvError
	if !errors.As(err, &de) || de.Line != 4 || de.File != "app/.env" {
		t.Fatalf("err = %#v, want line 4 of app/.env", err)
	}
	if !strings.Contains(err.Error(), "app/.env:4: Encountered unexpected whitespace") {
		t.Errorf("message %q", err)
	}
}

func FuzzDotenv(f *testing.F) {
	for _, c := range dotenvCases {
		f.Add(c.file)
	}
	f.Fuzz(func(t *testing.T, s string) {
		entries, err := parseDotenv("f", s)
		if err != nil {
			var de *DotenvError
			if !errors.As(err, &de) || de.Line < 1 {
				t.Fatalf("error without a line: %v", err)
			}
			return
		}
		loaded, lines := loadDotenv(entries, func(string) (string, bool) { return "", false })
		for k := range loaded {
			if !dotenvName.MatchString(k) || lines[k] < 1 {
				t.Fatalf("loaded %q from line %d", k, lines[k])
			}
		}
	})
}

// TestDotenvRandomAgainstPHP builds .env files from random pieces of the grammar (quotes,
// escapes, references, comments, whitespace, multi-line values) and checks that laraq
// and phpdotenv accept the same files and read the same values.
func TestDotenvRandomAgainstPHP(t *testing.T) {
	testenv.NeedPHP(t)
	probe := exec.Command("php", "-r", `require "Dotenv/autoload.php"; exit(class_exists("Dotenv\\Dotenv") ? 0 : 1);`)
	testenv.Need(t, probe.Run() == nil, "vlucas/phpdotenv 5 for PHP (Debian package php-vlucas-phpdotenv) is not installed")
	pieces := []string{"a", "B1", " ", "\t", "#", "$", "${A}", "${N1}", "${PROC}", "${", "}", `\`, `\\`, `\n`, `\"`, `\$`,
		"'", `"`, "=", "x y", "é", "null", "(true)", "\n", "\r\n", "export ", ".", "_"}
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 60; i++ {
		var b strings.Builder
		names := []string{}
		for line := 0; line < 1+rng.IntN(4); line++ {
			name := fmt.Sprintf("N%d", line)
			names = append(names, name)
			if rng.IntN(6) == 0 {
				b.WriteString("export ")
			}
			b.WriteString(name + "=")
			switch rng.IntN(3) {
			case 0:
				b.WriteString(`"`)
			case 1:
				b.WriteString(`'`)
			}
			for k := 0; k < rng.IntN(6); k++ {
				b.WriteString(pieces[rng.IntN(len(pieces))])
			}
			b.WriteString("\n")
		}
		c := dotenvCase{name: fmt.Sprint(i), file: b.String(), environ: map[string]string{"PROC": "p"}, want: map[string]any{}}
		for _, n := range append(names, "A", "N1") {
			c.want[n] = nil
		}
		t.Run(c.name, func(t *testing.T) { comparePHPDotenv(t, c) })
	}
}
