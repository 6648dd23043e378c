package job

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/laraq/laraq/internal/php"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// Release is a Laravel framework release (laravel/framework's tag). Every version-dependent
// fact laraq reproduces is a method of it: the payload shape Go writes, the properties the
// queue traits add, the worker's failure messages, the cache key scheme of queue:restart
// and queue:pause. A Connection carries the release of the application sharing its queues.
//
// The zero Release is unknown: laraq then writes and reads as the newest release it knows
// (LatestRelease) and, since that is a guess, the worker also reads the restart and pause
// signals under every release's cache keys (see CacheStore.AlsoWatch).
type Release struct {
	Major, Minor, Patch int
	// Guessed says the release was inferred (from an application's .env keys, or by
	// default) rather than read from its framework or named by its operator. A worker on a
	// guessed release watches the signals of every release's cache key scheme, so that a
	// wrong guess cannot hide `php artisan queue:restart`.
	Guessed bool
}

// anyMinor is the minor version of a release named by its major alone ("12"): the newest
// release of that major, later than every numbered one.
const anyMinor = 1 << 30

// LatestRelease is the newest release laraq has been proved against, used when a
// Connection names none.
var LatestRelease = Release{Major: 13, Minor: 26, Patch: 1}

// ParseRelease reads a release such as "8", "8.83", "12.51.0" or "v13.6". A bare major
// ("12") stands for the newest release of that major. Releases before 5.8 are refused
// (they have no connection prefix and no notify list).
func ParseRelease(s string) (Release, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.Split(t, ".")
	if t == "" || len(parts) > 3 {
		return Release{}, fmt.Errorf("laravel release %q: want MAJOR[.MINOR[.PATCH]], e.g. 12 or 12.51.0", s)
	}
	var n [3]int
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 {
			return Release{}, fmt.Errorf("laravel release %q: %q is not a number", s, p)
		}
		n[i] = v
	}
	r := Release{Major: n[0], Minor: n[1], Patch: n[2]}
	if len(parts) == 1 {
		r.Minor = anyMinor
	}
	if r.Major < 5 || r.Major == 5 && r.Minor < 8 {
		return Release{}, fmt.Errorf("laravel release %q: laraq works with Laravel 5.8 and later", s)
	}
	return r, nil
}

// IsZero reports whether the release is unknown.
func (r Release) IsZero() bool { return r.Major == 0 }

// OrLatest is the release laraq behaves as: r, or LatestRelease (guessed) when r is unknown.
func OrLatest(r Release) Release {
	if r.IsZero() {
		l := LatestRelease
		l.Guessed = true
		return l
	}
	return r
}

// Compare returns -1, 0 or +1 as r is older than, the same as, or newer than o.
// Guessed is not compared.
func (r Release) Compare(o Release) int {
	for _, d := range [3]int{r.Major - o.Major, r.Minor - o.Minor, r.Patch - o.Patch} {
		switch {
		case d < 0:
			return -1
		case d > 0:
			return 1
		}
	}
	return 0
}

// AtLeast reports whether r is major.minor.patch or later. The zero Release counts as
// LatestRelease.
func (r Release) AtLeast(major, minor, patch int) bool {
	return OrLatest(r).Compare(Release{Major: major, Minor: minor, Patch: patch}) >= 0
}

// String writes "12.51.0", "12.x" for a bare major, "unknown" for the zero Release, and
// adds " (guessed)" to a guessed one.
func (r Release) String() string {
	var s string
	switch {
	case r.IsZero():
		return "unknown"
	case r.Minor >= anyMinor:
		s = strconv.Itoa(r.Major) + ".x"
	default:
		s = fmt.Sprintf("%d.%d.%d", r.Major, r.Minor, r.Patch)
	}
	if r.Guessed {
		s += " (guessed)"
	}
	return s
}

// Shape is the payload envelope this release writes: 5.8–7.x's delay and timeoutAt
// (uuid and maxExceptions from 7.0), failOnTimeout from 8.43, unescaped unicode from
// 8.82, createdAt and the trailing dispatch delay from 12.11, data.batchId from 12.51,
// deleteWhenMissingModels from 13.0.
func (r Release) Shape() payload.Shape {
	return payload.Shape{
		RetryDelay:              !r.AtLeast(8, 0, 0),
		NoUUID:                  !r.AtLeast(7, 0, 0),
		NoFailOnTimeout:         !r.AtLeast(8, 43, 0),
		EscapeUnicode:           !r.AtLeast(8, 82, 0),
		CreatedAt:               r.AtLeast(12, 11, 0),
		BatchID:                 r.AtLeast(12, 51, 0),
		DeleteWhenMissingModels: r.AtLeast(13, 0, 0),
	}
}

// QueueableProps returns the properties `use InteractsWithQueue, Queueable;` adds to a job
// class in this release, in PHP's order, with their defaults:
//   - 5.8: job, connection, queue, chainConnection, chainQueue, delay, chained [];
//   - 6.0–7.x: the same with middleware [] before chained;
//   - 8.0–11.1: job, connection, queue, chainConnection, chainQueue, chainCatchCallbacks,
//     delay, afterCommit (8.19+), middleware [], chained [];
//   - 11.2+: job, connection, queue, delay, afterCommit, middleware, chained,
//     chainConnection, chainQueue, chainCatchCallbacks;
//   - 12.27 adds group after queue (renamed messageGroup in 12.28.1), 12.32 deduplicator
//     after it, 13.6 debounceOwner "" and 13.24 uniqueLockOwner "" after those.
//
// InteractsWithQueue's job is protected ("\x00*\x00job") before 7.7, public from 7.7.
// From 9.x SerializesModels leaves out properties that still hold their default, so a job
// using it serializes only those that changed.
func (r Release) QueueableProps() []phpser.Entry {
	null := phpser.Null
	job := phpser.PublicProp("job", null())
	if !r.AtLeast(7, 7, 0) {
		job = phpser.ProtectedProp("job", null())
	}
	p := []phpser.Entry{job, phpser.PublicProp("connection", null()), phpser.PublicProp("queue", null())}
	if !r.AtLeast(8, 0, 0) {
		p = append(p,
			phpser.PublicProp("chainConnection", null()),
			phpser.PublicProp("chainQueue", null()),
			phpser.PublicProp("delay", null()),
		)
		if r.AtLeast(6, 0, 0) {
			p = append(p, phpser.PublicProp("middleware", phpser.NewArray()))
		}
		return append(p, phpser.PublicProp("chained", phpser.NewArray()))
	}
	if !r.AtLeast(11, 2, 0) {
		p = append(p,
			phpser.PublicProp("chainConnection", null()),
			phpser.PublicProp("chainQueue", null()),
			phpser.PublicProp("chainCatchCallbacks", null()),
			phpser.PublicProp("delay", null()),
		)
		if r.AtLeast(8, 19, 0) {
			p = append(p, phpser.PublicProp("afterCommit", null()))
		}
		return append(p,
			phpser.PublicProp("middleware", phpser.NewArray()),
			phpser.PublicProp("chained", phpser.NewArray()),
		)
	}
	switch {
	case r.AtLeast(12, 28, 1):
		p = append(p, phpser.PublicProp("messageGroup", null()))
	case r.AtLeast(12, 27, 0):
		p = append(p, phpser.PublicProp("group", null()))
	}
	if r.AtLeast(12, 32, 0) {
		p = append(p, phpser.PublicProp("deduplicator", null()))
	}
	if r.AtLeast(13, 6, 0) {
		p = append(p, phpser.PublicProp("debounceOwner", phpser.String("")))
	}
	if r.AtLeast(13, 24, 0) {
		p = append(p, phpser.PublicProp("uniqueLockOwner", phpser.String("")))
	}
	return append(p,
		phpser.PublicProp("delay", null()),
		phpser.PublicProp("afterCommit", null()),
		phpser.PublicProp("middleware", phpser.NewArray()),
		phpser.PublicProp("chained", phpser.NewArray()),
		phpser.PublicProp("chainConnection", null()),
		phpser.PublicProp("chainQueue", null()),
		phpser.PublicProp("chainCatchCallbacks", null()),
	)
}

// UniqueLockKey is the cache key (before the cache store's prefix) under which this
// release locks a unique job of class: UniqueLock::getKey(). display is the class's
// displayName() when it has that method (hasDisplayName), uniqueID its uniqueId().
func (r Release) UniqueLockKey(class string, hasDisplayName bool, display, uniqueID string) string {
	r = OrLatest(r)
	if !r.AtLeast(11, 0, 0) {
		return "laravel_unique_job:" + class + uniqueID
	}
	name := class
	switch {
	case hasDisplayName && r.AtLeast(12, 54, 0):
		name = php.XXH128(display)
	case hasDisplayName && r.AtLeast(12, 41, 0):
		name = display
	}
	return "laravel_unique_job:" + name + ":" + uniqueID
}
