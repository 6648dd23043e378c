package failed

import (
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/laraq/laraq/internal/testenv"
)

func TestExceptionStringLayout(t *testing.T) {
	ex := &Exception{
		Class: `App\Exceptions\Outer`, Message: "boom\nsecond line", File: "/src/a.go", Line: 3,
		Trace:    []Frame{{File: "/src/b.go", Line: 10, Function: "pkg.f"}, {Function: "pkg.run"}},
		Previous: &Exception{Class: "Inner", File: "/src/c.go", Line: 1},
	}
	want := "Inner in /src/c.go:1\nStack trace:\n#0 {main}\n\n" +
		"Next App\\Exceptions\\Outer: boom\nsecond line in /src/a.go:3\nStack trace:\n" +
		"#0 /src/b.go(10): pkg.f()\n#1 [internal function]: pkg.run()\n#2 {main}"
	if got := ex.String(); got != want {
		t.Fatalf("String():\n%s\nwant:\n%s", got, want)
	}
}

// sections parses PHP's Throwable string form into its sections (innermost first) and
// checks the grammar: header, "Stack trace:", numbered frames, {main}.
type section struct {
	class, message, file string
	line                 int
	frames               []string
}

var (
	headerRe = regexp.MustCompile(`(?s)^([A-Za-z_\\][A-Za-z0-9_\\]*)(?:: (.*))? in (.+):(\d+)$`)
	frameRe  = regexp.MustCompile(`^#(\d+) (?:(.+)\((\d+)\)|\[internal function\]): (.+)\(.*\)$`)
	mainRe   = regexp.MustCompile(`^#(\d+) \{main\}$`)
)

func parseThrowable(s string) ([]section, error) {
	var out []section
	for i, part := range strings.Split(s, "\n\nNext ") {
		head, trace, ok := strings.Cut(part, "\nStack trace:\n")
		if !ok {
			return nil, fmt.Errorf("section %d: no stack trace", i)
		}
		m := headerRe.FindStringSubmatch(head)
		if m == nil {
			return nil, fmt.Errorf("section %d: header %q", i, head)
		}
		line, _ := strconv.Atoi(m[4])
		sec := section{class: m[1], message: m[2], file: m[3], line: line}
		lines := strings.Split(trace, "\n")
		for j, l := range lines {
			if j == len(lines)-1 {
				mm := mainRe.FindStringSubmatch(l)
				if mm == nil || mm[1] != strconv.Itoa(j) {
					return nil, fmt.Errorf("section %d: last trace line %q", i, l)
				}
				continue
			}
			fm := frameRe.FindStringSubmatch(l)
			if fm == nil || fm[1] != strconv.Itoa(j) {
				return nil, fmt.Errorf("section %d: trace line %q", i, l)
			}
			sec.frames = append(sec.frames, fm[4])
		}
		out = append(out, sec)
	}
	return out, nil
}

// The grammar parseThrowable checks is PHP's own: a chained exception with an
// engine-called frame, printed by PHP, parses the same way as Go's output.
func TestExceptionGrammarMatchesPHP(t *testing.T) {
	testenv.NeedPHP(t)
	script := `function inner() { throw new RuntimeException("inner"); }
class W { function run() { try { array_map(function ($x) { inner(); }, [1]); } catch (Exception $e) { throw new LogicException("outer", 0, $e); } } }
try { (new W)->run(); } catch (Exception $e) { echo (string) $e; }`
	out, err := exec.Command("php", "-r", script).Output()
	if err != nil {
		t.Fatalf("php: %v", err)
	}
	phpSecs, err := parseThrowable(string(out))
	if err != nil {
		t.Fatalf("PHP's own output does not parse: %v\n%s", err, out)
	}
	if len(phpSecs) != 2 || phpSecs[0].class != "RuntimeException" || phpSecs[1].class != "LogicException" {
		t.Fatalf("PHP sections %+v", phpSecs)
	}
	if !strings.Contains(string(out), "[internal function]: W->{closure}()") {
		t.Fatalf("PHP output has no engine frame:\n%s", out)
	}

	goText := Capture(fmt.Errorf("outer: %w", errors.New("inner")), 0).String()
	goSecs, err := parseThrowable(goText)
	if err != nil {
		t.Fatalf("Go output does not parse: %v\n%s", err, goText)
	}
	if len(goSecs) != 2 || goSecs[0].message != "inner" || goSecs[1].message != "outer: inner" {
		t.Fatalf("Go sections %+v", goSecs)
	}
	if !strings.Contains(goText, "[internal function]: testing.tRunner()") {
		t.Fatalf("Go trace does not end with the goroutine entry as an engine frame:\n%s", goText)
	}
}

func TestCaptureLocation(t *testing.T) {
	_, file, line, _ := runtime.Caller(0)
	ex := Capture(errors.New("here"), 0)
	if ex.File != file || ex.Line != line+1 {
		t.Fatalf("Capture at %s:%d, want %s:%d", ex.File, ex.Line, file, line+1)
	}
	if len(ex.Trace) < 2 || ex.Trace[0].Function != "github.com/laraq/laraq/failed.TestCaptureLocation" {
		t.Fatalf("trace %+v", ex.Trace)
	}
	last := ex.Trace[len(ex.Trace)-1]
	if last.File != "" || last.Function != "testing.tRunner" {
		t.Fatalf("last frame %+v, want the goroutine entry without file", last)
	}
	ex2, wantLine := captureOneLevelUp()
	if ex2.File != file || ex2.Line != wantLine {
		t.Fatalf("Capture(skip 1) at %s:%d, want %s:%d", ex2.File, ex2.Line, file, wantLine)
	}
	if Capture(nil, 0) != nil {
		t.Fatal("Capture(nil) != nil")
	}
}

func captureOneLevelUp() (*Exception, int) {
	_, _, line, _ := runtime.Caller(0)
	return captureForCaller(), line + 1
}

func captureForCaller() *Exception { return Capture(errors.New("x"), 1) }

type declinedError struct{ code int }

func (e *declinedError) Error() string    { return "declined " + strconv.Itoa(e.code) }
func (e *declinedError) PHPClass() string { return `App\Billing\Declined` }

var errSentinel = errors.New("sentinel")

func deepFailure() error { return Capture(fmt.Errorf("deep: %w", errSentinel), 0) }

func TestCaptureChain(t *testing.T) {
	base := errors.New("base")
	ex := Capture(fmt.Errorf("a: %w", fmt.Errorf("b: %w", base)), 0)
	secs, err := parseThrowable(ex.String())
	if err != nil {
		t.Fatal(err)
	}
	got := []string{}
	for _, s := range secs {
		got = append(got, s.class+": "+s.message)
	}
	want := []string{`errors\errorString: base`, `fmt\wrapError: b: base`, `fmt\wrapError: a: b: base`}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("sections %q, want %q", got, want)
	}

	// An Exception captured deeper keeps its own location; wrapping it adds a section.
	inner := deepFailure()
	outer := Capture(fmt.Errorf("handler: %w", inner), 0)
	var deep *Exception
	if !errors.As(inner, &deep) || outer.Previous != deep {
		t.Fatalf("outer.Previous = %p, want the deep exception %p", outer.Previous, deep)
	}
	if deep.Line == outer.Line || deep.Trace[0].Function != "github.com/laraq/laraq/failed.deepFailure" {
		t.Fatalf("deep exception lost its location: %s:%d %+v", deep.File, deep.Line, deep.Trace[0])
	}
	if !errors.Is(outer, errSentinel) {
		t.Fatal("errors.Is does not see through Exception")
	}
	if Capture(inner, 0) != deep {
		t.Fatal("Capture of an *Exception must return it unchanged")
	}

	de := Capture(fmt.Errorf("charge: %w", &declinedError{code: 51}), 0)
	if de.Class != `fmt\wrapError` || de.Previous.Class != `App\Billing\Declined` || de.Previous.Message != "declined 51" {
		t.Fatalf("classes %q / %q", de.Class, de.Previous.Class)
	}
}

func TestFromPanic(t *testing.T) {
	var line int
	ex := func() (ex *Exception) {
		defer func() { ex = FromPanic(recover()) }()
		var m map[string]int
		_, _, line, _ = runtime.Caller(0)
		//lint:ignore SA5000 writing to a nil map is the panic under test
		m["x"]++
		return nil
	}()
	if ex.Class != PanicClass || ex.Message != "assignment to entry in nil map" || ex.Previous != nil {
		t.Fatalf("panic exception %q %q prev=%v", ex.Class, ex.Message, ex.Previous)
	}
	if ex.Line != line+2 || !strings.HasSuffix(ex.File, "exception_test.go") {
		t.Fatalf("panic located at %s:%d, want line %d", ex.File, ex.Line, line+2)
	}
	if !strings.HasPrefix(ex.Trace[0].Function, "github.com/laraq/laraq/failed.TestFromPanic.func") {
		t.Fatalf("first frame %+v", ex.Trace[0])
	}

	ex = func() (ex *Exception) {
		defer func() { ex = FromPanic(recover()) }()
		panic(&declinedError{code: 5})
	}()
	if ex.Previous == nil || ex.Previous.Class != `App\Billing\Declined` || !strings.Contains(ex.String(), "\n\nNext Laraq\\Panic: declined 5 in ") {
		t.Fatalf("panic(error):\n%s", ex.String())
	}
	var de *declinedError
	if !errors.As(ex, &de) {
		t.Fatal("errors.As does not find the panic value")
	}
}

type genericErr[T any] struct{}

func (genericErr[T]) Error() string { return "g" }

func TestClassOf(t *testing.T) {
	cases := map[string]error{
		`App\Billing\Declined`:                          &declinedError{},
		`errors\errorString`:                            errors.New("x"),
		`failed\genericErr_int_`:                        genericErr[int]{},
		`Illuminate\Queue\MaxAttemptsExceededException`: New(MaxAttemptsExceededClass, "m", 0),
		DefaultClass:                                    nil,
	}
	for want, err := range cases {
		if got := ClassOf(err); got != want {
			t.Errorf("ClassOf(%T) = %q, want %q", err, got, want)
		}
	}
}

func TestExceptionOutputIsValidUTF8(t *testing.T) {
	ex := New("Bad\xffClass", "msg \xc3\x28 end", 0)
	s := ex.String()
	if !utf8.ValidString(s) || !strings.Contains(s, "msg \uFFFD( end") {
		t.Fatalf("String() = %q", s)
	}
}

func TestNewLaravelFailures(t *testing.T) {
	ex := New(ManuallyFailedClass, "", 0)
	first, _, _ := strings.Cut(ex.String(), "\n")
	if !regexp.MustCompile(`^Illuminate\\Queue\\ManuallyFailedException in .+exception_test\.go:\d+$`).MatchString(first) {
		t.Fatalf("first line %q", first)
	}
	got := FormatException("", "", errors.New("plain"), []Frame{{File: "/x.go", Line: 7, Function: "p.f"}, {File: "/y.go", Line: 9, Function: "p.g"}})
	want := "errors\\errorString: plain in /x.go:7\nStack trace:\n#0 /y.go(9): p.f()\n#1 [internal function]: p.g()\n#2 {main}"
	if got != want {
		t.Fatalf("FormatException:\n%s\nwant\n%s", got, want)
	}
	if got := FormatException("C", "m", nil, nil); got != "C: m in :0\nStack trace:\n#0 {main}" {
		t.Fatalf("FormatException without frames: %q", got)
	}
}

// The message is Laravel 8's, checked against the installed framework.
func TestMaxAttemptsExceededMessageMatchesLaravel(t *testing.T) {
	testenv.NeedPHP(t)
	script := `require "Illuminate/Queue/autoload.php";
$w = (new ReflectionClass(Illuminate\Queue\Worker::class))->newInstanceWithoutConstructor();
$m = new ReflectionMethod($w, "maxAttemptsExceededException"); $m->setAccessible(true);
$job = new class { function resolveName() { return "App\\Jobs\\Résumé"; } };
$e = $m->invoke($w, $job); echo get_class($e), "\n", $e->getMessage();`
	out, err := exec.Command("php", "-r", script).CombinedOutput()
	if err != nil {
		t.Fatalf("php: %v\n%s", err, out)
	}
	want := MaxAttemptsExceededClass + "\n" + MaxAttemptsExceededMessage(`App\Jobs\Résumé`)
	if string(out) != want {
		t.Fatalf("PHP says %q, Go %q", out, want)
	}
}
