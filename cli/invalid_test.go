package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
)

// TestInvalidPayloadsAreSeenAndHandled: payloads the pop script cannot reserve, set aside
// by `work`, are counted by stats, listed with their reason, recorded as failed jobs,
// requeued, and deleted by clear.
func TestInvalidPayloadsAreSeenAndHandled(t *testing.T) {
	srv := testenv.RedisServer(t)
	client := srv.Client(t, 0)
	prefix := testenv.Prefix(t)
	db := "sqlite:" + filepath.Join(t.TempDir(), "failed.sqlite")
	conn := []string{"--redis", "redis://" + srv.Addr + "/0", "--prefix", prefix}
	cli := func(args ...string) (string, string) {
		t.Helper()
		out, errOut, rc := runCLI(t, []byte("yes\n"), append(args, conn...)...)
		if rc != 0 {
			t.Fatalf("laraq %v: exit %d\n%s%s", args, rc, out, errOut)
		}
		return out, errOut
	}
	push := func(payloads ...string) {
		for _, p := range payloads {
			if err := client.RPush(t.Context(), prefix+"queues:default", p).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	push("not json at all", `{"job":"X@handle","data":{}}`, `["a"]`)
	cli("work", "--stop-when-empty", "--database", db, "--create-failed-table", "--quiet")

	out, _ := cli("stats", "--json")
	if !strings.Contains(strings.Join(strings.Fields(out), ""), `"invalid":3`) {
		t.Fatalf("stats does not count the set-aside payloads: %s", out)
	}
	out, _ = cli("invalid", "list", "--json")
	var reasons []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var row struct{ Reason, Payload string }
		if err := json.Unmarshal([]byte(line), &row); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		reasons = append(reasons, row.Reason)
	}
	if strings.Join(reasons, "|") != "it is not JSON|it has no attempts|it is not a JSON object" {
		t.Fatalf("reasons %q", reasons)
	}

	out, _ = cli("invalid", "fail", "--database", db)
	if !strings.Contains(out, "Recorded 3 set-aside payloads") {
		t.Fatalf("fail: %s", out)
	}
	out, _ = cli("failed", "list", "--json", "--database", db)
	if strings.Count(out, `"id"`) != 3 {
		t.Fatalf("failed rows: %s", out)
	}
	if n, _ := client.LLen(t.Context(), prefix+"queues:default:invalid").Result(); n != 0 {
		t.Fatalf("%d payloads still set aside after fail", n)
	}

	push(`{"job":"X@handle","data":{}}`)
	cli("work", "--stop-when-empty", "--database", db, "--quiet")
	// Repaired in place, then requeued.
	if err := client.LSet(t.Context(), prefix+"queues:default:invalid", 0, `{"job":"X@handle","data":{},"attempts":0}`).Err(); err != nil {
		t.Fatal(err)
	}
	out, _ = cli("invalid", "requeue")
	if !strings.Contains(out, "Moved 1 set-aside payloads back") {
		t.Fatalf("requeue: %s", out)
	}
	if l, _ := client.LRange(t.Context(), prefix+"queues:default", 0, -1).Result(); len(l) != 1 || !strings.Contains(l[0], `"attempts":0`) {
		t.Fatalf("ready list after requeue: %q", l)
	}

	push("still not json")
	cli("work", "--stop-when-empty", "--database", db, "--quiet", "--unhandled", "release")
	out, _ = cli("clear", "--force")
	if !strings.Contains(out, "Deleted 1 set-aside payloads") {
		t.Fatalf("clear: %s", out)
	}
	if keys, _ := testenv.Keys(t.Context(), client, prefix); len(keys) != 0 {
		t.Fatalf("keys left: %v", keys)
	}
}
