package middleware

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/job"
)

// TestSpecs: each spec gives the middleware PHP's middleware() would build, in order.
func TestSpecs(t *testing.T) {
	overlap := func(f func(*WithoutOverlappingMiddleware)) *WithoutOverlappingMiddleware {
		m := WithoutOverlapping("")
		f(m)
		return m
	}
	te := func(redis bool, f func(*ThrottlesExceptionsMiddleware)) *ThrottlesExceptionsMiddleware {
		m := ThrottlesExceptions(DefaultThrottleAttempts, DefaultThrottleDecay)
		m.withRedis = redis
		f(m)
		return m
	}
	for _, tc := range []struct {
		spec  string
		class string
		want  []job.Middleware
	}{
		{`App\Jobs\SyncOrder=without-overlapping:orderId,release-after=10`, `App\Jobs\SyncOrder`,
			[]job.Middleware{overlap(func(m *WithoutOverlappingMiddleware) { m.keyProperty, m.releaseAfter = "orderId", 10 })}},
		{` App\Jobs\A = without-overlapping:order.id , dont-release, expire-after=300, prefix=p:, shared `, `App\Jobs\A`,
			[]job.Middleware{overlap(func(m *WithoutOverlappingMiddleware) {
				m.keyProperty, m.dontRelease, m.expiresAfter, m.prefix, m.shared = "order.id", true, 300, "p:", true
			})}},
		{`A=without-overlapping,key=global`, `A`, []job.Middleware{overlap(func(m *WithoutOverlappingMiddleware) { m.key = "global" })}},
		{`A=rate-limited:emails;rate-limited-with-redis:x,dont-release,connection=limits`, `A`, []job.Middleware{
			RateLimited("emails"), RateLimitedWithRedis("x").DontRelease().Connection("limits")}},
		{`A=rate-limited:emails,release-after=7`, `A`, []job.Middleware{RateLimited("emails").ReleaseAfter(7 * time.Second)}},
		{`A=throttles-exceptions`, `A`, []job.Middleware{te(false, func(*ThrottlesExceptionsMiddleware) {})}},
		{`A=throttles-exceptions-with-redis,max-attempts=3,decay=60,backoff=120,by-property=shopId,prefix=te:,connection=c`, `A`,
			[]job.Middleware{te(true, func(m *ThrottlesExceptionsMiddleware) {
				m.maxAttempts, m.decaySeconds, m.retryAfter, m.keyProperty, m.prefix, m.connection = 3, 60, 120, "shopId", "te:", "c"
			})}},
		{`A=throttles-exceptions,by=k;throttles-exceptions,by-job;skip-if-batch-cancelled`, `A`, []job.Middleware{
			te(false, func(m *ThrottlesExceptionsMiddleware) { m.key = "k" }),
			te(false, func(m *ThrottlesExceptionsMiddleware) { m.byJob = true }),
			SkipIfBatchCancelled()}},
	} {
		s := NewSpecs()
		if err := s.AddMiddleware(tc.spec); err != nil {
			t.Errorf("%s: %v", tc.spec, err)
			continue
		}
		if got := s.Classes[tc.class]; !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.spec, got, tc.want)
		}
	}
}

// TestSpecErrors: a spec that cannot be read says what and where, never half-applies.
func TestSpecErrors(t *testing.T) {
	for spec, want := range map[string]string{
		`without-overlapping:orderId`:                          "want CLASS=MIDDLEWARE",
		`=without-overlapping`:                                 "want CLASS=MIDDLEWARE",
		`App\Jobs\A B=skip-if-batch-cancelled`:                 `holds ' '`,
		`A=`:                                                   "without name",
		`A=overlap:x`:                                          `unknown middleware "overlap"`,
		`A=without-overlapping:x,key=y`:                        "both name the key",
		`A=without-overlapping:x,release-after=soon`:           `release-after="soon"`,
		`A=without-overlapping:x,release-after=-1`:             "from 0 to",
		`A=without-overlapping:x,dont-release=1`:               "takes no value",
		`A=without-overlapping:x,dont-release,release-after=1`: "together",
		`A=without-overlapping:x,shared,shared`:                "given twice",
		`A=without-overlapping:x,,shared`:                      "an empty option",
		`A=without-overlapping:a..b`:                           "an empty name",
		`A=without-overlapping:x,colour=red`:                   "unknown option colour",
		`A=rate-limited`:                                       "needs limiter",
		`A=rate-limited:e,connection=c`:                        "unknown option connection",
		`A=throttles-exceptions:3`:                             "no argument",
		`A=throttles-exceptions,by=a,by-job`:                   "one at most",
		`A=skip-if-batch-cancelled:x`:                          "no argument",
	} {
		s := NewSpecs()
		err := s.AddMiddleware(spec)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "\"") {
			t.Errorf("%s: %v, want an error with %q", spec, err, want)
		}
		if len(s.Classes) != 0 {
			t.Errorf("%s: half applied: %v", spec, s.Classes)
		}
	}
	for spec, want := range map[string]string{
		`emails`:                              "want NAME=LIMIT",
		`emails=10`:                           "want MAX/PERIOD",
		`emails=10/fortnight`:                 "the period is",
		`emails=10/0s`:                        "the period is",
		`emails=10/minute,by=a,by-property=b`: "one at most",
		`emails=10/minute,per=user`:           "unknown option per",
	} {
		if err := NewSpecs().AddLimiter(spec); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want an error with %q", spec, err, want)
		}
	}
}

// TestSpecFile: a file's lines, comments and limiters; an error names its line.
func TestSpecFile(t *testing.T) {
	s := NewSpecs()
	err := s.ReadFile(strings.NewReader("# the fleet's guards\n\nApp\\Jobs\\A=rate-limited:emails\nlimiter emails=10/minute;100/90s,by=x\nApp\\Jobs\\A=skip-if-batch-cancelled\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Classes[`App\Jobs\A`]) != 2 || !s.Limiters.Has("emails") {
		t.Errorf("classes %v, limiter defined %v", s.Classes, s.Limiters.Has("emails"))
	}
	limits, err := s.Limiters.lookup("emails")(&job.JobInfo{})
	if err != nil || !reflect.DeepEqual(limits, []Limit{PerMinute(10), Every(90*time.Second, 100).By("x")}) {
		t.Errorf("limits %+v %v", limits, err)
	}
	err = NewSpecs().ReadFile(strings.NewReader("A=skip-if-batch-cancelled\n\nB=nope\n"))
	if err == nil || !strings.HasPrefix(err.Error(), "line 3: ") {
		t.Errorf("error %v, want it on line 3", err)
	}
}

// FuzzSpecs: any text is read into middleware or refused with an error, never a panic,
// and what is read has a name.
func FuzzSpecs(f *testing.F) {
	for _, s := range []string{
		`App\Jobs\SyncOrder=without-overlapping:orderId,release-after=10`,
		`A=rate-limited:emails;throttles-exceptions-with-redis,max-attempts=3,by-property=a.b`,
		"limiter emails=10/minute;100/90s,by-property=userId",
		"A=skip-if-batch-cancelled\n# c\nlimiter x=1/second",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		s := NewSpecs()
		if err := s.ReadFile(strings.NewReader(text)); err != nil {
			return
		}
		for class, ms := range s.Classes {
			for _, m := range ms {
				if m == nil || Name(m) == "" || class == "" {
					t.Fatalf("%q: %q %v", text, class, ms)
				}
			}
		}
	})
}
