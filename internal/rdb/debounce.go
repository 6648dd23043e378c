package rdb

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/laraq/laraq/internal/php"
)

// cacheDebouncedJob is the cache key prefix of Laravel 13.6+'s DebounceLock.
const cacheDebouncedJob = "laravel_debounced_job:"

// DebouncedJob is the key DebounceLock::getKey names for a debounced job (13.6+):
// "laravel_debounced_job:" + job name + ":" + debounce id, where the job name is the
// command class, or php.XXH128 of its displayName() when the class has that method.
func (k CacheKeys) DebouncedJob(jobName, debounceID string) string {
	return k.Key(cacheDebouncedJob + jobName + ":" + debounceID)
}

// DebounceValue is the value DebounceLock::getCurrentOwner reads, as PHP sees it after
// RedisStore's unserialize.
type DebounceValue struct {
	Set      bool   // the key exists and does not hold null (PHP: ! is_null)
	IsString bool   // the value is a PHP string (the owner token DebounceLock::acquire puts)
	Str      string // the string
}

// DebounceOwner reads the owner token of a debounced job: GET key, unserialized as
// RedisStore::get does (a numeric value is kept as its string, anything else goes through
// unserialize()). The worker runs the job only when the token is missing or equals the
// job's debounceOwner (strict ===, so a value that is no string never does).
func (c *Cache) DebounceOwner(ctx context.Context, jobName, debounceID string) (DebounceValue, error) {
	key := c.keys.DebouncedJob(jobName, debounceID)
	v, err := c.client.Get(ctx, key).Result()
	if isNil(err) {
		return DebounceValue{}, nil
	}
	if err != nil {
		return DebounceValue{}, fmt.Errorf("rdb: read debounce owner %s: %w", key, err)
	}
	return debounceValue(v), nil
}

// debounceValue is RedisStore::unserialize of a stored value, reduced to what the
// owner check needs: null, a string, or something else.
func debounceValue(v string) DebounceValue {
	if php.IsNumeric(v) {
		return DebounceValue{Set: true, IsString: true, Str: v}
	}
	if v == "N;" {
		return DebounceValue{}
	}
	if s, ok := unserializeString(v); ok {
		return DebounceValue{Set: true, IsString: true, Str: s}
	}
	// Another type, or no serialized value at all (unserialize() gives false): either
	// way not the owner.
	return DebounceValue{Set: true}
}

// unserializeString reads a `s:N:"…";` value; like unserialize(), it ignores what
// follows (PHP 8.3+ only warns about it).
func unserializeString(v string) (string, bool) {
	rest, ok := strings.CutPrefix(v, "s:")
	if !ok {
		return "", false
	}
	colon := strings.IndexByte(rest, ':')
	if colon <= 0 {
		return "", false
	}
	n, err := strconv.Atoi(rest[:colon])
	if err != nil || n < 0 || rest[0] == '+' || rest[0] == '-' {
		return "", false
	}
	body := rest[colon+1:]
	if len(body) < n+3 || body[0] != '"' || body[n+1] != '"' || body[n+2] != ';' {
		return "", false
	}
	return body[1 : n+1], true
}
