package database

import (
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"testing"
	"time"
)

func FuzzPayloadUUID(f *testing.F) {
	for _, p := range samplePayloads {
		f.Add([]byte(p))
	}
	for _, p := range []string{`{"uuid":"a","uuid":"b"}`, `{"UUID":"x"}`, `{"uuid":null}`, `[1]`, `{"uuid":"\u00e9"}`, `{`} {
		f.Add([]byte(p))
	}
	f.Fuzz(func(t *testing.T, payload []byte) {
		id, ok := payloadUUID(payload)
		if ok && (id == "" || !json.Valid(payload)) {
			t.Fatalf("payloadUUID(%q) = %q, true", payload, id)
		}
		if !ok && id != "" {
			t.Fatalf("payloadUUID(%q) = %q, false", payload, id)
		}
	})
}

func FuzzParseDSN(f *testing.F) {
	for _, d := range []string{
		"sqlite:/tmp/x.db", "sqlite:x.db?mode=ro", "mysql://u:p%40ss@h/db", "mysql://user:longsecret@h:3306/db?time_zone=%27%2B00%3A00%27",
		"pgsql://u:p@h:5433/db", "postgresql://u@h/db?sslmode=disable", "postgres://u:longsecret@/db", "null", "ftp://x", "mysql://[::1]:3306/db",
	} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, dsn string) {
		target, err := parseDSN(dsn)
		if err != nil {
			if !errors.Is(err, ErrBadDSN) {
				t.Fatalf("parseDSN(%q): error %v does not wrap ErrBadDSN", dsn, err)
			}
			// A password must not be echoed (checked when it is distinctive).
			if u, perr := url.Parse(dsn); perr == nil && u.User != nil {
				if p, ok := u.User.Password(); ok && len(p) >= 8 && strings.Count(dsn, p) == 1 && strings.Contains(err.Error(), p) {
					t.Fatalf("error repeats the password: %v", err)
				}
			}
			return
		}
		if target.driverName == "" || target.connString == "" {
			t.Fatalf("parseDSN(%q) = %+v", dsn, target)
		}
	})
}

func FuzzWallClock(f *testing.F) {
	for _, s := range []string{"2024-02-03 04:05:06", "2024-02-03T04:05:06Z", "2024-02-03", "", "0000-00-00 00:00:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := wallClock(s, time.UTC)
		if err == nil && got.IsZero() && s != "" && !strings.HasPrefix(s, "0001-01-01") {
			t.Fatalf("wallClock(%q) = zero time without error", s)
		}
		_, _ = wallClock([]byte(s), time.UTC)
	})
}
