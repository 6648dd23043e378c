package middleware

import (
	"github.com/laraq/laraq/internal/job"
	"reflect"
	"testing"

	"github.com/laraq/laraq/phpser"
)

// TestFallbackKeys: limits of one limiter that share a key (loosely, as Collection
// compares) get Limit::fallbackKey() from 11.29; 11.29–11.34 built it the wrong way
// round (the condition was inverted, fixed in 11.35 by #53763).
func TestFallbackKeys(t *testing.T) {
	limits := []Limit{PerMinute(5).By("u1"), PerHour(100).By("u1"), PerDay(9).By("other"), PerSecond(1)}
	for _, tc := range []struct {
		r    job.Release
		want []string
	}{
		{job.Release{Major: 11, Minor: 28, Patch: 0}, []string{"u1", "u1", "other", ""}},
		{job.Release{Major: 11, Minor: 29, Patch: 0}, []string{"attempts:5:decay:60", "attempts:100:decay:3600", "other", ""}},
		{job.Release{Major: 11, Minor: 35, Patch: 0}, []string{"u1:attempts:5:decay:60", "u1:attempts:100:decay:3600", "other", ""}},
		{job.Release{Major: 13, Minor: 26, Patch: 1}, []string{"u1:attempts:5:decay:60", "u1:attempts:100:decay:3600", "other", ""}},
	} {
		got := withFallbackKeys(limits, tc.r)
		keys := make([]string, len(got))
		for i, l := range got {
			keys[i] = l.Key
		}
		if !reflect.DeepEqual(keys, tc.want) {
			t.Errorf("%v: keys %q, want %q", tc.r, keys, tc.want)
		}
	}
	// Falsy keys ("" and "0") and numeric strings that are equal as numbers.
	got := withFallbackKeys([]Limit{PerMinute(1), PerMinute(2).By("0"), PerHour(3), PerDay(4).By("00")}, job.Release{Major: 11, Minor: 30, Patch: 0})
	want := []string{":attempts:1:decay:60", "0:attempts:2:decay:60", ":attempts:3:decay:3600", "attempts:4:decay:86400"}
	for i, l := range got {
		if l.Key != want[i] {
			t.Errorf("11.30 #%d: %q, want %q", i, l.Key, want[i])
		}
	}
	got = withFallbackKeys([]Limit{PerMinute(1), PerMinute(2).By("0"), PerHour(3), PerDay(4).By("00")}, job.Release{})
	want = []string{"attempts:1:decay:60", "attempts:2:decay:60", "attempts:3:decay:3600", "00:attempts:4:decay:86400"}
	for i, l := range got {
		if l.Key != want[i] {
			t.Errorf("latest #%d: %q, want %q", i, l.Key, want[i])
		}
	}
}

// TestCounterComparison: the counter read from a store compares with maxAttempts as PHP 8
// compares `$attempts >= $maxAttempts`.
func TestCounterComparison(t *testing.T) {
	for _, tc := range []struct {
		stored string
		max    int64
		want   bool
	}{
		{"5", 5, true}, {"4", 5, false}, {"i:5;", 5, true}, {"d:4.5;", 5, false}, {" 5", 5, true},
		{"N;", 0, true}, {"N;", 1, false}, {"b:1;", 9, true}, {"b:0;", 1, false},
		{`s:3:"abc";`, 5, true}, {`s:1:"1";`, 5, false}, {"a:0:{}", 5, true}, {"garbage", 1, false},
	} {
		got, err := greaterOrEqual(storedValue(tc.stored), tc.max)
		if err != nil || got != tc.want {
			t.Errorf("%q >= %d: %v %v, want %v", tc.stored, tc.max, got, err, tc.want)
		}
	}
	if _, err := greaterOrEqual(phpser.NewObject("X"), 1); err == nil {
		t.Error("an object compared without error")
	}
}

func TestLooseEqualStrings(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"1", "01", true}, {"1e1", "10", true}, {"abc", "ABC", false}, {"", "0", false}, {"1", "1 ", true}, {"x", "x", true},
	} {
		if got := looseEqualStrings(tc.a, tc.b); got != tc.want {
			t.Errorf("%q == %q: %v", tc.a, tc.b, got)
		}
	}
}
