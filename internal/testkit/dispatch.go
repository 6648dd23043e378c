package testkit

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/laraq/laraq/payload"
)

// FixedIDs makes ids and uuids predictable: id-1, id-2, … (32 characters, as Laravel's).
func FixedIDs(cfg *DispatchSetup) {
	n, u := 0, 0
	cfg.NewID = func() string { n++; return fmt.Sprintf("%032d", n) }
	cfg.NewUUID = func() string { u++; return fmt.Sprintf("00000000-0000-4000-8000-%012d", u) }
}

// SameExceptIDs fails unless got (Go's payload) and want (Laravel's) are byte for byte
// equal once Laravel's uuid and id are replaced by Go's.
func SameExceptIDs(t *testing.T, what string, got, want []byte) {
	t.Helper()
	ids := func(b []byte) (uuid, id string) {
		v, err := payload.DecodeValue(b)
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, b)
		}
		if u := v.Get("uuid"); u != nil {
			uuid = u.Str
		}
		if i := v.Get("id"); i != nil {
			id = i.Str
		}
		return uuid, id
	}
	gu, gi := ids(got)
	wu, wi := ids(want)
	norm := bytes.Replace(want, []byte(`"uuid":"`+wu+`"`), []byte(`"uuid":"`+gu+`"`), 1)
	norm = bytes.Replace(norm, []byte(`"id":"`+wi+`"`), []byte(`"id":"`+gi+`"`), 1)
	if !bytes.Equal(got, norm) {
		i := 0
		for i < len(got) && i < len(norm) && got[i] == norm[i] {
			i++
		}
		lo := max(0, i-80)
		t.Errorf("%s: payload differs from Laravel's at byte %d:\n go: …%s\nphp: …%s", what, i,
			clip(got[lo:], 200), clip(norm[lo:], 200))
	}
}

func clip(b []byte, n int) string {
	if len(b) > n {
		b = b[:n]
	}
	return strings.ReplaceAll(string(b), "\x00", `\0`)
}
