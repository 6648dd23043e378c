package middleware

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/laraq/laraq/internal/job"
	"github.com/laraq/laraq/phpser"
)

// Specs are Laravel's middleware given to PHP classes by name, and the named limiters
// they count with, read from text: what `laraq work --middleware`, `--limiter` and
// `--middleware-file` hold, for jobs without a Go type (--forward, HandleFunc) whose
// PHP class declares middleware(). A spec names the class and its middleware in order,
// each with the property of the command its key comes from, as PHP's middleware()
// computes it from $this:
//
//	App\Jobs\SyncOrder=without-overlapping:orderId,release-after=10,expire-after=300
//	App\Jobs\SendMail=rate-limited:emails;throttles-exceptions,max-attempts=5,decay=300,backoff=60
//
// and a limiter names its limits, RateLimiter::for's:
//
//	emails=10/minute,by-property=userId;1000/day
//
// A file holds one spec a line, a limiter line starting with "limiter "; blank lines
// and lines starting with # are skipped. Put Classes in WorkerConfig.ClassMiddleware and
// Limiters in WorkerConfig.Limiters.
//
// The middleware (their options after commas, in any order):
//
//	without-overlapping[:PROP]   key from property PROP (a.b for $this->a->b), or key=TEXT;
//	                             release-after=S, dont-release, expire-after=S, prefix=P, shared
//	rate-limited:LIMITER         dont-release, release-after=S
//	rate-limited-with-redis:LIMITER   the same, connection=NAME
//	throttles-exceptions         max-attempts=N (10), decay=S (600), backoff=S, by=TEXT,
//	                             by-property=PROP, by-job, prefix=P
//	throttles-exceptions-with-redis   the same, connection=NAME
//	skip-if-batch-cancelled
//
// S is whole seconds. Limits are MAX/PERIOD, PERIOD one of second, minute, hour, day or
// a number of seconds followed by s (90s), with by=TEXT or by-property=PROP.
type Specs struct {
	Classes  map[string][]job.Middleware
	Limiters *Limiters
}

// NewSpecs returns an empty set.
func NewSpecs() *Specs {
	return &Specs{Classes: map[string][]job.Middleware{}, Limiters: NewLimiters()}
}

// SpecError is a spec that cannot be read: what is wrong, and where.
type SpecError struct {
	Spec string // the spec as given
	Line int    // its line in a file, 0 for a flag
	Err  error
}

func (e *SpecError) Error() string {
	spec := e.Spec
	if len(spec) > 120 {
		spec = spec[:120] + "…"
	}
	if e.Line > 0 {
		return fmt.Sprintf("line %d: %q: %v", e.Line, spec, e.Err)
	}
	return fmt.Sprintf("%q: %v", spec, e.Err)
}

func (e *SpecError) Unwrap() error { return e.Err }

// AddMiddleware reads CLASS=MIDDLEWARE[;MIDDLEWARE...] and appends the middleware to the
// class's.
func (s *Specs) AddMiddleware(spec string) error {
	class, ms, err := parseClassSpec(spec)
	if err != nil {
		return &SpecError{Spec: spec, Err: err}
	}
	s.Classes[class] = append(s.Classes[class], ms...)
	return nil
}

// AddLimiter reads NAME=LIMIT[;LIMIT...] and defines the limiter, as RateLimiter::for.
func (s *Specs) AddLimiter(spec string) error {
	name, fn, err := parseLimiterSpec(spec)
	if err != nil {
		return &SpecError{Spec: spec, Err: err}
	}
	s.Limiters.set(name, fn)
	return nil
}

// maxSpecLine bounds a file's line.
const maxSpecLine = 64 << 10

// ReadFile reads a file of specs (see Specs).
func (s *Specs) ReadFile(r io.Reader) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 4096), maxSpecLine)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		var err error
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			continue
		case strings.HasPrefix(line, "limiter "):
			err = s.AddLimiter(strings.TrimSpace(strings.TrimPrefix(line, "limiter ")))
		default:
			err = s.AddMiddleware(line)
		}
		if se, ok := err.(*SpecError); ok {
			se.Line = n
			return se
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading middleware specs: %w", err)
	}
	return nil
}

// cutSpec splits NAME=REST, the name (a label's) checked.
func cutSpec(spec, label, want, example string) (name, rest string, err error) {
	name, rest, ok := strings.Cut(spec, "=")
	name = strings.TrimSpace(name)
	if !ok || name == "" {
		return "", "", fmt.Errorf("want %s, e.g. '%s'", want, example)
	}
	return name, rest, checkName(label, name)
}

// parseClassSpec reads CLASS=MIDDLEWARE[;MIDDLEWARE...].
func parseClassSpec(spec string) (string, []job.Middleware, error) {
	class, rest, err := cutSpec(spec, "class", "CLASS=MIDDLEWARE", `App\Jobs\SyncOrder=without-overlapping:orderId`)
	if err != nil {
		return "", nil, err
	}
	var ms []job.Middleware
	for _, part := range strings.Split(rest, ";") {
		m, err := parseMiddleware(strings.TrimSpace(part))
		if err != nil {
			return "", nil, err
		}
		ms = append(ms, m)
	}
	return class, ms, nil
}

// checkName refuses names with spaces or control characters.
func checkName(what, s string) error {
	for _, r := range s {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == unicode.ReplacementChar {
			return fmt.Errorf("%s %q holds %q", what, s, r)
		}
	}
	return nil
}

// options are a middleware's options by key; a key given without value is "".
type options struct {
	name string
	m    map[string]string
	used map[string]bool
}

func parseOptions(name string, parts []string) (*options, error) {
	o := &options{name: name, m: map[string]string{}, used: map[string]bool{}}
	for _, p := range parts {
		k, v, _ := strings.Cut(strings.TrimSpace(p), "=")
		k = strings.TrimSpace(k)
		if k == "" {
			return nil, fmt.Errorf("%s: an empty option", name)
		}
		if _, dup := o.m[k]; dup {
			return nil, fmt.Errorf("%s: option %s given twice", name, k)
		}
		o.m[k] = strings.TrimSpace(v)
	}
	return o, nil
}

func (o *options) text(k string) (string, bool) {
	v, ok := o.m[k]
	o.used[k] = true
	return v, ok
}

// flag is an option without value.
func (o *options) flag(k string) (bool, error) {
	v, ok := o.text(k)
	if ok && v != "" {
		return false, fmt.Errorf("%s: %s takes no value", o.name, k)
	}
	return ok, nil
}

// seconds reads a whole number of seconds (at most ten years, as Laravel's caches keep).
func (o *options) seconds(k string) (time.Duration, bool, error) {
	n, ok, err := o.int(k, 315360000)
	return time.Duration(n) * time.Second, ok, err
}

func (o *options) int(k string, limit int64) (int64, bool, error) {
	v, ok := o.text(k)
	if !ok {
		return 0, false, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 || n > limit {
		return 0, false, fmt.Errorf("%s: %s=%q: want a whole number from 0 to %d", o.name, k, v, limit)
	}
	return n, true, nil
}

// done fails on an option no one read.
func (o *options) done() error {
	for k := range o.m {
		if !o.used[k] {
			return fmt.Errorf("%s: unknown option %s", o.name, k)
		}
	}
	return nil
}

// parseMiddleware reads NAME[:ARG]{,OPTION}.
func parseMiddleware(s string) (job.Middleware, error) {
	parts := strings.Split(s, ",")
	name, arg, hasArg := strings.Cut(strings.TrimSpace(parts[0]), ":")
	name, arg = strings.TrimSpace(name), strings.TrimSpace(arg)
	o, err := parseOptions(name, parts[1:])
	if err != nil {
		return nil, err
	}
	needArg := func(what string) error {
		if !hasArg || arg == "" {
			return fmt.Errorf("%s needs %s: %s:%s", name, what, name, strings.ToUpper(strings.ReplaceAll(what, " ", "-")))
		}
		return checkName(what, arg)
	}
	var m job.Middleware
	switch name {
	case "without-overlapping":
		m, err = overlappingSpec(o, arg, hasArg)
	case "rate-limited", "rate-limited-with-redis":
		if err := needArg("limiter"); err != nil {
			return nil, err
		}
		m, err = rateLimitedSpec(o, arg, name == "rate-limited-with-redis")
	case "throttles-exceptions", "throttles-exceptions-with-redis":
		if hasArg {
			return nil, fmt.Errorf("%s takes no argument, only options", name)
		}
		m, err = throttlesSpec(o, name == "throttles-exceptions-with-redis")
	case "skip-if-batch-cancelled":
		if hasArg {
			return nil, fmt.Errorf("%s takes no argument", name)
		}
		m = SkipIfBatchCancelled()
	case "":
		return nil, fmt.Errorf("a middleware without name")
	default:
		return nil, fmt.Errorf("unknown middleware %q (want without-overlapping, rate-limited, rate-limited-with-redis, throttles-exceptions, throttles-exceptions-with-redis or skip-if-batch-cancelled)", name)
	}
	if err != nil {
		return nil, err
	}
	if err := o.done(); err != nil {
		return nil, err
	}
	return m, nil
}

func overlappingSpec(o *options, prop string, hasProp bool) (job.Middleware, error) {
	m := WithoutOverlapping("")
	key, hasKey := o.text("key")
	switch {
	case hasProp && hasKey:
		return nil, fmt.Errorf("without-overlapping: a property (%s) and key= both name the key", prop)
	case hasProp:
		if err := checkProperty(prop); err != nil {
			return nil, fmt.Errorf("without-overlapping: %w", err)
		}
		m.keyProperty = prop
	default:
		m.key = key
	}
	if d, ok, err := o.seconds("release-after"); err != nil {
		return nil, err
	} else if ok {
		m.ReleaseAfter(d)
	}
	if dont, err := o.flag("dont-release"); err != nil {
		return nil, err
	} else if dont {
		if _, ok := o.m["release-after"]; ok {
			return nil, fmt.Errorf("without-overlapping: release-after and dont-release together")
		}
		m.DontRelease()
	}
	if d, ok, err := o.seconds("expire-after"); err != nil {
		return nil, err
	} else if ok {
		m.ExpireAfter(d)
	}
	if p, ok := o.text("prefix"); ok {
		m.WithPrefix(p)
	}
	if shared, err := o.flag("shared"); err != nil {
		return nil, err
	} else if shared {
		m.Shared()
	}
	return m, nil
}

func rateLimitedSpec(o *options, limiter string, withRedis bool) (job.Middleware, error) {
	m := RateLimited(limiter)
	m.withRedis = withRedis
	if dont, err := o.flag("dont-release"); err != nil {
		return nil, err
	} else if dont {
		m.DontRelease()
	}
	if d, ok, err := o.seconds("release-after"); err != nil {
		return nil, err
	} else if ok {
		m.ReleaseAfter(d)
	}
	if withRedis {
		if c, ok := o.text("connection"); ok {
			m.Connection(c)
		}
	}
	return m, nil
}

func throttlesSpec(o *options, withRedis bool) (job.Middleware, error) {
	maxAttempts, ok, err := o.int("max-attempts", 1<<31)
	if err != nil {
		return nil, err
	}
	if !ok {
		maxAttempts = DefaultThrottleAttempts
	}
	decay, ok, err := o.seconds("decay")
	if err != nil {
		return nil, err
	}
	if !ok {
		decay = DefaultThrottleDecay
	}
	m := ThrottlesExceptions(maxAttempts, decay)
	m.withRedis = withRedis
	if d, ok, err := o.seconds("backoff"); err != nil {
		return nil, err
	} else if ok {
		m.Backoff(d)
	}
	by, hasBy := o.text("by")
	prop, hasProp := o.text("by-property")
	byJob, err := o.flag("by-job")
	if err != nil {
		return nil, err
	}
	if n := btoi(hasBy) + btoi(hasProp) + btoi(byJob); n > 1 {
		return nil, fmt.Errorf("%s: by, by-property and by-job: one at most", m.name())
	}
	switch {
	case hasBy:
		m.By(by)
	case hasProp:
		if err := checkProperty(prop); err != nil {
			return nil, fmt.Errorf("%s: %w", m.name(), err)
		}
		m.keyProperty = prop
	case byJob:
		m.ByJob()
	}
	if p, ok := o.text("prefix"); ok {
		m.WithPrefix(p)
	}
	if withRedis {
		if c, ok := o.text("connection"); ok {
			m.Connection(c)
		}
	}
	return m, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// parseLimiterSpec reads NAME=LIMIT[;LIMIT...].
func parseLimiterSpec(spec string) (string, limitsFunc, error) {
	name, rest, err := cutSpec(spec, "limiter", "NAME=LIMIT", "emails=10/minute")
	if err != nil {
		return "", nil, err
	}
	type limitSpec struct {
		limit Limit
		prop  string
	}
	var specs []limitSpec
	for _, part := range strings.Split(rest, ";") {
		fields := strings.Split(strings.TrimSpace(part), ",")
		l, err := parseLimit(strings.TrimSpace(fields[0]))
		if err != nil {
			return "", nil, err
		}
		o, err := parseOptions("limit "+fields[0], fields[1:])
		if err != nil {
			return "", nil, err
		}
		ls := limitSpec{limit: l}
		by, hasBy := o.text("by")
		prop, hasProp := o.text("by-property")
		switch {
		case hasBy && hasProp:
			return "", nil, fmt.Errorf("limit %s: by and by-property: one at most", fields[0])
		case hasBy:
			ls.limit = ls.limit.By(by)
		case hasProp:
			if err := checkProperty(prop); err != nil {
				return "", nil, fmt.Errorf("limit %s: %w", fields[0], err)
			}
			ls.prop = prop
		}
		if err := o.done(); err != nil {
			return "", nil, err
		}
		specs = append(specs, ls)
	}
	return name, func(info *job.JobInfo) ([]Limit, error) {
		out := make([]Limit, len(specs))
		for i, s := range specs {
			out[i] = s.limit
			if s.prop != "" {
				key, err := Property(info, s.prop)
				if err != nil {
					return nil, err
				}
				out[i] = s.limit.By(key)
			}
		}
		return out, nil
	}, nil
}

// parseLimit reads MAX/PERIOD.
func parseLimit(s string) (Limit, error) {
	maxText, period, ok := strings.Cut(s, "/")
	maxAttempts, err := strconv.ParseInt(strings.TrimSpace(maxText), 10, 64)
	if !ok || err != nil || maxAttempts < 0 || maxAttempts > 1<<40 {
		return Limit{}, fmt.Errorf("limit %q: want MAX/PERIOD, e.g. 10/minute", s)
	}
	switch p := strings.TrimSpace(period); p {
	case "second":
		return PerSecond(maxAttempts), nil
	case "minute":
		return PerMinute(maxAttempts), nil
	case "hour":
		return PerHour(maxAttempts), nil
	case "day":
		return PerDay(maxAttempts), nil
	default:
		n, err := strconv.ParseInt(strings.TrimSuffix(p, "s"), 10, 64)
		if !strings.HasSuffix(p, "s") || err != nil || n < 1 || n > 315360000 {
			return Limit{}, fmt.Errorf("limit %q: the period is second, minute, hour, day or a number of seconds (90s)", s)
		}
		return Every(time.Duration(n)*time.Second, maxAttempts), nil
	}
}

// checkProperty accepts a property path: names separated by dots.
func checkProperty(path string) error {
	for _, p := range strings.Split(path, ".") {
		if p == "" {
			return fmt.Errorf("property %q: an empty name", path)
		}
		if err := checkName("property", p); err != nil {
			return err
		}
	}
	return nil
}

// Property is the command's property path (a.b: $this->a->b, an Eloquent model's key
// through its ModelIdentifier's id) in PHP's string form, as a middleware() building a
// key from it sees it ((string) $this->orderId). A missing property, a null on the way, or
// a value PHP does not turn into a string (an array, an object) is an error naming it:
// no key is better than a wrong one that would let jobs overlap.
func Property(info *job.JobInfo, path string) (string, error) {
	v, err := info.Unserialized()
	if err != nil {
		return "", err
	}
	where := info.Class
	for _, name := range strings.Split(path, ".") {
		v = v.Deref()
		if v == nil || v.Kind() != phpser.KindObject {
			return "", fmt.Errorf("%s is no object, so it has no property %s", where, name)
		}
		next, ok := v.Prop(name)
		if !ok {
			return "", fmt.Errorf("%s has no property %s", where, name)
		}
		where, v = where+"->"+name, next
	}
	v = v.Deref()
	if v == nil || v.IsNull() {
		return "", fmt.Errorf("%s is null", where)
	}
	s, ok := v.StringCast()
	if !ok {
		return "", fmt.Errorf("%s is a %s, not a key", where, v.Kind())
	}
	return s, nil
}
