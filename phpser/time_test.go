package phpser

import (
	"testing"
	"time"
)

// appendCarbonDate is AppendFormat(carbonLayout) written out: the same text for every
// date, four-digit years or not.
func TestAppendCarbonDate(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2024, 3, 5, 6, 7, 8, 0, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 999, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 123456789, time.UTC),
		time.Date(-1, 6, 15, 12, 30, 0, 1000, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 500000, time.FixedZone("X", -3600)),
		time.Unix(1700000000, 42000).In(time.FixedZone("Y", 5*3600+1800)),
	} {
		if got, want := string(appendCarbonDate(nil, tm)), tm.Format(carbonLayout); got != want {
			t.Errorf("%v: %q, want %q", tm, got, want)
		}
	}
}

// The fast path for PHP's own form reads what the general grammar reads, and leaves
// everything else (and every error) to it.
func TestParseCarbonDateAgrees(t *testing.T) {
	loc := time.FixedZone("X", 7200)
	for _, s := range []string{
		"2024-03-05 06:07:08.000000", "1970-01-01 00:00:00.000001", "9999-12-31 23:59:59.999999",
		"0001-01-01 00:00:00.000000", "2024-02-30 12:00:00.500000", "2024-13-01 00:00:00.000000",
		"2024-00-01 00:00:00.000000", "2024-01-00 00:00:00.000000", "2024-01-01 24:00:00.000000",
		"2024-01-01 00:60:00.000000", "2024-01-01 00:00:60.000000", "2024-01-01 00:00:00.00000a",
		"2024-01-01T00:00:00.000000", "+024-01-01 00:00:00.000000", "-024-01-01 00:00:00.000000",
		"12024-01-01 00:00:00.000000", "2024-01-01 00:00:00", "2024-01-01 00:00:00.1",
		"2024-01-01 00:00:00.123456789", "2024-1-01 00:00:00.000000", " 024-01-01 00:00:00.000000",
	} {
		want, wantErr := parsePHPDateAny(s, loc)
		got, ok := parseCarbonDate(s, loc)
		if ok && (wantErr != nil || !got.Equal(want) || got.Location() != want.Location()) {
			t.Errorf("%q: fast path %v, general %v (%v)", s, got, want, wantErr)
		}
		all, err := parsePHPDate(s, loc)
		if (err == nil) != (wantErr == nil) || !all.Equal(want) {
			t.Errorf("%q: parsePHPDate %v (%v), general %v (%v)", s, all, err, want, wantErr)
		}
	}
}
