package phpser

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
)

// phpUnserialize runs PHP's unserialize() on each input (testdata/phpser/unserialize.php)
// and returns canon.php's JSON for each, or {"error": ...} where PHP refused.
func phpUnserialize(t *testing.T, mode string, inputs ...[]byte) [][]byte {
	t.Helper()
	testenv.NeedPHP(t)
	dir := t.TempDir()
	args := []string{testenv.Testdata("phpser", "unserialize.php"), mode}
	for i, in := range inputs {
		p := filepath.Join(dir, fmt.Sprintf("%03d.ser", i))
		if err := os.WriteFile(p, in, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p)
	}
	cmd := exec.Command("php", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("php unserialize.php: %v\n%s", err, stderr.String())
	}
	lines := bytes.Split(bytes.TrimRight(out, "\n"), []byte("\n"))
	if len(lines) != len(inputs) {
		t.Fatalf("php printed %d lines for %d inputs:\n%s\n%s", len(lines), len(inputs), out, stderr.String())
	}
	return lines
}

func phpError(line []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(line, &e) == nil && e.Error != "" {
		return e.Error
	}
	return ""
}

// TestGoldenEncodeThroughPHP feeds Encode's output for every golden case to PHP's
// unserialize() and compares what PHP rebuilt with the case's expected value.
func TestGoldenEncodeThroughPHP(t *testing.T) {
	goldens := loadGoldens(t)
	var inputs [][]byte
	for _, g := range goldens {
		v, err := Decode(g.ser)
		if err != nil {
			t.Fatal(err)
		}
		out, err := Encode(stripNumberText(v))
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, out)
	}
	for i, line := range phpUnserialize(t, "fixtures", inputs...) {
		if e := phpError(line); e != "" {
			t.Errorf("%s: PHP refused Go's bytes: %s", goldens[i].name, e)
			continue
		}
		if !jsonEqual(t, line, goldens[i].canon) {
			t.Errorf("%s: PHP rebuilt\n%s\nwant\n%s", goldens[i].name, line, goldens[i].canon)
		}
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v: %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return bytes.Equal(xa, ya)
}

// phpScalars are the values check_encode.php expects, index for index.
func phpScalars() []*Value {
	return []*Value{Null(), Bool(true), Bool(false), Int(0), Int(-1), Int(math.MaxInt64), Int(math.MinInt64),
		Float(0.1), Float(1e100), Float(math.Copysign(0, -1)), Float(1.5e-300), Float(math.Inf(1)), Float(math.Inf(-1)), Float(math.NaN()),
		String(""), String("héllo 日本 🎧"), String("it's"), String(`back\slash \n \x41`), String(`quote"semi;brace}`), String("nul\x00byte"),
		String("\xff\x00\x01")}
}

// TestBuiltValuesThroughPHP checks values built with the constructors, not decoded:
// PHP must read back exactly what PHP itself would have serialized.
func TestBuiltValuesThroughPHP(t *testing.T) {
	testenv.NeedPHP(t)
	type check struct {
		name string
		v    *Value
		want []byte // canon; from the golden files where one exists
	}
	var checks []check
	for i, s := range phpScalars() {
		checks = append(checks, check{name: fmt.Sprintf("scalar_%02d", i), v: s})
	}
	golden := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(fixturesDir(), name+".json"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	checks = append(checks,
		check{"object_visibility", NewObject(`Fx\Vis`,
			PublicProp("pub", String("pub-v")), ProtectedProp("prot", String("prot-v")), PrivateProp(`Fx\Vis`, "priv", String("priv-v"))),
			golden("object_visibility")},
		check{"array_mixed_keys", NewArray(IntEntry(5, String("five")), StrEntry("k", String("kay")), IntEntry(-3, String("neg")),
			IntEntry(10, String("numeric-string-key-becomes-int")), StrEntry("007", String("stays-string")),
			StrEntry("list", List(Int(1), Int(2)))), golden("array_mixed_keys")},
		check{"enum_pure", List(NewEnum(`Fx\Suit`, "Hearts"), NewEnum(`Fx\Suit`, "Spades")), golden("enum_pure")},
		check{"serializable_C", NewCustom(`Fx\LegacySerializable`, `{"k":"v","n":1}`), golden("serializable_C")},
		check{"ref_r_object", NewArray(StrEntry("first", NewObject(`Fx\Vis`, PublicProp("pub", String("same")),
			ProtectedProp("prot", String("q")), PrivateProp(`Fx\Vis`, "priv", String("r")))), StrEntry("second", NewRef(2))),
			golden("ref_r_object")},
		check{"ref_R_value", NewArray(StrEntry("a", String("shared")), StrEntry("b", NewHardRef(2)), StrEntry("c", String("plain"))),
			golden("ref_R_value")},
		check{"carbon_date", NewTime(time.Date(2024, 3, 5, 6, 7, 8, 123456000, mustLoc(t, "Europe/Berlin")), ""), golden("carbon_date")},
	)
	var inputs [][]byte
	for _, c := range checks {
		b, err := Encode(c.v)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		inputs = append(inputs, b)
	}
	for i, line := range phpUnserialize(t, "fixtures", inputs...) {
		c := checks[i]
		if e := phpError(line); e != "" {
			t.Errorf("%s: PHP refused %q: %s", c.name, inputs[i], e)
			continue
		}
		want := c.want
		if want == nil {
			// Scalars: PHP's canon of the value must match ours of the value we built.
			want, _ = json.Marshal(canon(c.v, nil))
		}
		if !jsonEqual(t, line, want) {
			t.Errorf("%s: PHP rebuilt\n%s\nwant\n%s", c.name, line, want)
		}
	}
}

func mustLoc(t testing.TB, name string) *time.Location {
	t.Helper()
	l, err := time.LoadLocation(name)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestPHPRefusesWhatDecodeRefuses spot-checks that inputs Decode rejects are ones PHP
// rejects too (PHP is only more lenient where it clamps or ignores trailing data).
func TestPHPRefusesWhatDecodeRefuses(t *testing.T) {
	bad := []string{`b:7;`, `s:-1:"";`, `a:-1:{}`, `a:1:{}`, `a:1:{i:0;r:1;}`, `a:1:{i:0;R:2;}`, `a:2:{i:0;i:5;i:1;r:2;}`,
		`O:0:"":0:{}`, `O:9:"std-Class":0:{}`, `d:+INF;`, `d:1e;`, `E:3:"Foo";`, `s:3:"ab";`, `x:1;`}
	var inputs [][]byte
	for _, b := range bad {
		if _, err := DecodeString(b); err == nil {
			t.Errorf("Decode accepted %q", b)
		}
		inputs = append(inputs, []byte(b))
	}
	for i, line := range phpUnserialize(t, "fixtures", inputs...) {
		if phpError(line) == "" {
			t.Errorf("PHP accepted %q as %s", bad[i], line)
		}
	}
}

// TestTimezonesMatchPHP has PHP serialize dates in every zone abbreviation the table
// knows (timezone_type 2), in offsets (type 1) and in tz database names (type 3), and
// checks that TimeOf reads the instant PHP means.
func TestTimezonesMatchPHP(t *testing.T) {
	testenv.NeedPHP(t)
	var zones []string
	for a := range tzAbbreviations {
		zones = append(zones, a)
	}
	zones = append(zones, "+05:30", "-03:00", "+00:00", "Europe/Berlin", "America/New_York", "Asia/Kathmandu", "UTC")
	script := `foreach (array_slice($argv, 1) as $z) { $d = new DateTime("2024-07-15 12:34:56.789 $z"); echo $d->getTimestamp(), "\t", base64_encode(serialize($d)), "\n"; }`
	out, err := exec.Command("php", append([]string{"-r", script, "--"}, zones...)...).Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(lines) != len(zones) {
		t.Fatalf("%d lines for %d zones", len(lines), len(zones))
	}
	types := map[int64]int{}
	for i, line := range lines {
		ts, ser, _ := strings.Cut(line, "\t")
		raw, _ := base64.StdEncoding.DecodeString(ser)
		v, err := Decode(raw)
		if err != nil {
			t.Fatal(err)
		}
		tt, _ := v.Prop("timezone_type")
		types[tt.Int()]++
		got, err := TimeOf(v)
		if err != nil {
			t.Errorf("%s: %v", zones[i], err)
			continue
		}
		if strconv.FormatInt(got.Unix(), 10) != ts || got.Nanosecond() != 789000000 {
			t.Errorf("%s (%q): Go reads %v (%d), PHP means %s", zones[i], raw, got, got.Unix(), ts)
		}
	}
	if types[1] < 3 || types[2] < len(tzAbbreviations)-1 || types[3] < 4 {
		t.Errorf("timezone types seen: %v", types)
	}
}
