package middleware

import (
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"github.com/laraq/laraq/internal/job"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/phpser"
)

var updateThrough = flag.Bool("update-through", false, "rewrite testdata/through/*.ser with each release's serialize()")

// goldenTag is the release each golden file was captured from.
var goldenTag = map[int]job.Release{8: {Major: 8, Minor: 83, Patch: 26}, 10: {Major: 10, Minor: 50, Patch: 3}, 11: {Major: 11, Minor: 56}, 12: {Major: 12, Minor: 67}, 13: {Major: 13, Minor: 26, Patch: 1}}

// throughExpr is the middleware array captured for release r: every Laravel middleware
// the release ships that a payload can carry, with settings that differ from the defaults.
func throughExpr(r job.Release) []string {
	e := []string{
		"(new WithoutOverlapping('order-7'))->releaseAfter(30)->expireAfter(180)->withPrefix('p:')",
		"(new WithoutOverlapping(42))->dontRelease()",
		"(new WithoutOverlapping('later'))->releaseAfter(\\Illuminate\\Support\\Carbon::createFromTimestamp(1900000000))",
		"(new RateLimited('emails'))->dontRelease()",
		"new RateLimitedWithRedis('emails')",
		"(new ThrottlesExceptions(3, 5))->backoff(2)->by('key-1')",
		"(new ThrottlesExceptionsWithRedis())->byJob()->withPrefix('te:')",
	}
	if r.AtLeast(9, 32, 0) {
		e = append(e, "(new WithoutOverlapping('acct'))->shared()")
	}
	if r.AtLeast(9, 49, 0) {
		e = append(e, "new SkipIfBatchCancelled")
	}
	if r.AtLeast(11, 23, 0) {
		e = append(e, "Skip::when(true)")
	}
	if r.AtLeast(12, 13, 0) {
		e = append(e, "(new RateLimited('x'))->releaseAfter(7)")
	}
	if r.AtLeast(12, 51, 0) {
		e = append(e, "(new RateLimitedWithRedis('x'))->connection('limits')", "(new ThrottlesExceptionsWithRedis(1, 60))->connection('limits')")
	}
	if r.AtLeast(13, 18, 1) {
		e = append(e, "Release::when(true, 15)")
	}
	return e
}

// throughWant is what each of throughExpr(r) decodes to.
func throughWant(r job.Release) []job.Middleware {
	// decay: minutes up to 10.x, seconds from 11.0.
	decay := func(minutes, seconds int64) int64 {
		if r.AtLeast(11, 0, 0) {
			return seconds
		}
		return minutes * 60
	}
	w := []job.Middleware{
		&WithoutOverlappingMiddleware{key: "order-7", releaseAfter: 30, expiresAfter: 180, prefix: "p:"},
		&WithoutOverlappingMiddleware{key: "42", dontRelease: true, prefix: "laravel-queue-overlap:"},
		&WithoutOverlappingMiddleware{key: "later", releaseAt: time.Unix(1900000000, 0), prefix: "laravel-queue-overlap:"},
		&RateLimitedMiddleware{limiterName: "emails"},
		&RateLimitedMiddleware{limiterName: "emails", shouldRelease: true, withRedis: true},
		&ThrottlesExceptionsMiddleware{maxAttempts: 3, decaySeconds: decay(5, 5), retryAfter: 120, key: "key-1", prefix: "laravel_throttles_exceptions:"},
		&ThrottlesExceptionsMiddleware{maxAttempts: 10, decaySeconds: 600, byJob: true, prefix: "te:", withRedis: true},
	}
	if r.AtLeast(9, 32, 0) {
		w = append(w, &WithoutOverlappingMiddleware{key: "acct", prefix: "laravel-queue-overlap:", shared: true})
	}
	if r.AtLeast(9, 49, 0) {
		w = append(w, &SkipIfBatchCancelledMiddleware{})
	}
	if r.AtLeast(11, 23, 0) {
		w = append(w, &SkipMiddleware{skip: true})
	}
	if r.AtLeast(12, 13, 0) {
		rl := &RateLimitedMiddleware{limiterName: "x", shouldRelease: true}
		if r.AtLeast(13, 18, 0) { // serialized from 13.18 only
			rl.releaseAfter = 7
		}
		w = append(w, rl)
	}
	if r.AtLeast(12, 51, 0) {
		w = append(w, &RateLimitedMiddleware{limiterName: "x", shouldRelease: true, withRedis: true, connection: "limits"},
			&ThrottlesExceptionsMiddleware{maxAttempts: 1, decaySeconds: 60, prefix: "laravel_throttles_exceptions:", withRedis: true, connection: "limits"})
	}
	if r.AtLeast(13, 18, 1) {
		w = append(w, &ReleaseMiddleware{release: true, releaseAfter: 15})
	}
	return w
}

func goldenPath(major int) string {
	return filepath.Join("testdata", "through", testenv.MajorName(major)+".ser")
}

// TestThroughGolden decodes the middleware property each release serialized (captured
// with -update-through from the release itself) into the expected Go forms.
func TestThroughGolden(t *testing.T) {
	for major, r := range goldenTag {
		t.Run(testenv.MajorName(major), func(t *testing.T) {
			if *updateThrough {
				captureThrough(t, major, r)
			}
			b, err := os.ReadFile(goldenPath(major))
			if err != nil {
				t.Fatal(err)
			}
			arr, err := phpser.Decode(b)
			if err != nil {
				t.Fatal(err)
			}
			got, err := LaravelDecoders().Through(phpser.NewObject(`App\Jobs\Probe`, phpser.PublicProp("middleware", arr)))
			if err != nil {
				t.Fatal(err)
			}
			want := throughWant(r)
			if len(got) != len(want) {
				t.Fatalf("%d middleware, want %d", len(got), len(want))
			}
			for i := range want {
				if w, ok := want[i].(*WithoutOverlappingMiddleware); ok && !w.releaseAt.IsZero() {
					if g, ok := got[i].(*WithoutOverlappingMiddleware); ok && g.releaseAt.Equal(w.releaseAt) {
						g.releaseAt = w.releaseAt // same instant; the zone is Carbon's
					}
				}
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("#%d %s:\n got %+v\nwant %+v", i, throughExpr(r)[i], got[i], want[i])
				}
			}
		})
	}
}

func captureThrough(t *testing.T, major int, r job.Release) {
	t.Helper()
	testenv.NeedPeer(t, major)
	in, _ := json.Marshal(map[string]string{"middleware": "[" + strings.Join(throughExpr(r), ", ") + "]"})
	var v struct {
		Serialized *string
		Error      string
	}
	if err := json.Unmarshal(testenv.PHPEnv{Major: major}.Run(t, in, "middleware_op.php", "serialize"), &v); err != nil {
		t.Fatal(err)
	}
	if v.Serialized == nil {
		t.Fatalf("serialize: %s", v.Error)
	}
	b, err := base64.StdEncoding.DecodeString(*v.Serialized)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(goldenPath(major)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(goldenPath(major), b, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", goldenPath(major), len(b))
}

// TestThroughErrors: what a Go worker cannot run is an error naming it, never a panic or a
// middleware silently dropped.
func TestThroughErrors(t *testing.T) {
	cmd := func(items ...*phpser.Value) *phpser.Value {
		return phpser.NewObject(`App\Jobs\Probe`, phpser.PublicProp("middleware", phpser.List(items...)))
	}
	obj := func(class string, props ...phpser.Entry) *phpser.Value { return phpser.NewObject(class, props...) }
	cases := []struct {
		name    string
		command *phpser.Value
		want    string
	}{
		{"an application's own middleware", cmd(obj(`App\Jobs\Middleware\EnsureTenant`)), `holds a App\Jobs\Middleware\EnsureTenant`},
		{"a subclass of Laravel's", cmd(obj(`App\Queue\MyOverlap`, phpser.PublicProp("key", phpser.String("x")))), `App\Queue\MyOverlap`},
		{"a serialized closure in when()", cmd(obj(ClassThrottlesExceptions,
			phpser.ProtectedProp("whenCallback", obj(`Laravel\SerializableClosure\SerializableClosure`)))), "whenCallback holds a PHP callback"},
		{"FailOnException", cmd(obj(ClassFailOnException)), "Closure"},
		{"an array as key", cmd(obj(ClassWithoutOverlapping, phpser.PublicProp("key", phpser.List(phpser.Int(1))))), "key is a array"},
		{"a string releaseAfter", cmd(obj(ClassWithoutOverlapping, phpser.PublicProp("releaseAfter", phpser.String("soon")))), "releaseAfter is string"},
		{"a scalar in the list", cmd(phpser.Int(3)), "not an object"},
		{"a middleware property that is no array", phpser.NewObject(`App\Jobs\Probe`, phpser.PublicProp("middleware", phpser.String("x"))), "not an array"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := LaravelDecoders().Through(tc.command)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Through = %v, %v; want an error with %q", ms, err, tc.want)
			}
		})
	}
	if ms, err := LaravelDecoders().Through(phpser.NewObject(`App\Jobs\Probe`)); err != nil || ms != nil {
		t.Errorf("a command without the property (9.4+ leaves a default [] out): %v %v", ms, err)
	}
}

// FuzzThrough: any serialized middleware property decodes to middleware or an error.
func FuzzThrough(f *testing.F) {
	for major := range goldenTag {
		if b, err := os.ReadFile(goldenPath(major)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(`a:1:{i:0;O:46:"Illuminate\Queue\Middleware\WithoutOverlapping":1:{s:3:"key";d:1.5;}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		arr, err := phpser.Decode(b)
		if err != nil {
			return
		}
		ms, err := LaravelDecoders().Through(phpser.NewObject(`App\Jobs\Probe`, phpser.PublicProp("middleware", arr)))
		if err == nil {
			for _, m := range ms {
				if m == nil || Name(m) == "" {
					t.Fatalf("decoded %v", fmt.Sprint(ms))
				}
			}
		}
	})
}
