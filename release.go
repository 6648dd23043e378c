package laraq

import "github.com/laraq/laraq/internal/job"

// Release is a Laravel framework release (laravel/framework's tag: Major, Minor, Patch,
// and Guessed when it was inferred rather than read or named). Every version-dependent
// fact laraq reproduces follows it: the payload shape Go writes (Shape), the properties
// the queue traits add (QueueableProps), the worker's failure messages, the cache key
// scheme of queue:restart and queue:pause, the unique-lock key (UniqueLockKey). A
// Connection carries the release of the application sharing its queues. Its methods:
// IsZero, Compare, AtLeast, String, Shape, QueueableProps, UniqueLockKey.
//
// The zero Release is unknown: laraq then writes and reads as the newest release it knows
// (LatestRelease) and, since that is a guess, the worker also reads the restart and pause
// signals under every release's cache keys (see CacheStore.AlsoWatch).
type Release = job.Release

// LatestRelease is the newest release laraq has been proved against, used when a
// Connection names none.
var LatestRelease = job.LatestRelease

// ParseRelease reads a release such as "8", "8.83", "12.51.0" or "v13.6". A bare major
// ("12") stands for the newest release of that major. Releases before 5.8 are refused
// (they have no connection prefix and no notify list).
func ParseRelease(s string) (Release, error) { return job.ParseRelease(s) }
