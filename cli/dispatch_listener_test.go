package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
)

// TestDispatchQueuedListenerOnEveryRelease: `laraq dispatch` queues a queued listener
// (Illuminate\Events\CallQueuedListener, whose properties include data and job) from the
// properties `laraq decode` shows, byte for byte as each release's event() queues it
// (displayName the listener class), and PHP's worker runs it; the whole decode document
// goes through --payload.
func TestDispatchQueuedListenerOnEveryRelease(t *testing.T) {
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		ctx := context.Background()
		client := srv.Client(t, 0)
		prefix := testenv.Prefix(t)
		record := filepath.Join(t.TempDir(), "record.jsonl")
		php := testenv.PHPEnv{Major: major, Redis: srv, Prefix: prefix, Record: record}
		version := strings.TrimPrefix(testenv.Peer(t, major).Tag, "v")
		d := php.Dispatch(t, nil, `{"event":"App\\Events\\OrderShipped","props":{"orderId":7},"watch":["listeners"]}`)[0]
		if d.Queue != "listeners" || !strings.Contains(d.Payload, `"displayName":"App\\Listeners\\SendShipmentNotice"`) {
			t.Fatalf("PHP queued %s on %s", d.Payload, d.Queue)
		}
		decoded, errOut, rc := runCLI(t, []byte(d.Payload), "decode")
		if rc != 0 {
			t.Fatalf("decode: %s", errOut)
		}
		var doc struct {
			Data struct {
				Command json.RawMessage `json:"command"`
			} `json:"data"`
		}
		if err := json.Unmarshal([]byte(decoded), &doc); err != nil {
			t.Fatal(err)
		}
		propsFile := filepath.Join(t.TempDir(), "props.json")
		if err := os.WriteFile(propsFile, doc.Data.Command, 0o600); err != nil {
			t.Fatal(err)
		}
		base := []string{"dispatch", "--redis", fmt.Sprintf("redis://%s/0", srv.Addr), "--prefix", prefix, "--laravel-version", version}
		var ids []string
		for _, args := range [][]string{
			{"--props", propsFile, "--queue", "listeners", `Illuminate\Events\CallQueuedListener`},
			{"--payload", "-", "--queue", "listeners"},
		} {
			out, errOut, rc := runCLI(t, []byte(decoded), append(base, args...)...)
			if rc != 0 {
				t.Fatalf("dispatch %v: %s", args, errOut)
			}
			ids = append(ids, strings.TrimSpace(out))
		}
		// The decode document as --props is refused with a pointer to --payload.
		if _, errOut, rc := runCLI(t, []byte(decoded), append(base, "--props", "-")...); rc == 0 || !strings.Contains(errOut, "--payload") {
			t.Errorf("decode document as --props: rc %d, %q", rc, errOut)
		}

		queued := client.LRange(ctx, prefix+"queues:listeners", 0, -1).Val()
		if len(queued) != 3 {
			keys, _ := testenv.Keys(ctx, client, prefix)
			t.Fatalf("queues:listeners holds %d jobs, want PHP's and two of laraq's; keys %v ids %v\n%s", len(queued), keys, ids, decoded)
		}
		for i, id := range ids {
			var got string
			for _, q := range queued {
				if strings.Contains(q, `"id":"`+id+`"`) {
					got = q
				}
			}
			if a, b := normalizeIDs(t, got, d.Payload), normalizeIDs(t, d.Payload, d.Payload); a != b {
				t.Errorf("dispatch %d: laraq queued\n%s\nLaravel\n%s", i, a, b)
			}
		}
		php.Run(t, nil, "work.php", "--stop-when-empty", "--sleep=0", "--queue=listeners")
		recs := testenv.ReadRecords(t, record)
		ran := 0
		for _, r := range recs {
			if r.Kind == "listener" && r.Class == `App\Listeners\SendShipmentNotice` && fmt.Sprint(r.Fields["orderId"]) == "7" {
				ran++
			}
		}
		if ran != 3 {
			t.Errorf("the listener ran %d times, want 3: %+v", ran, recs)
		}
	})
}

// normalizeIDs re-encodes a payload with the uuid, id and createdAt of ref, so that two
// dispatches of one job compare equal when all else is.
func normalizeIDs(t *testing.T, raw, ref string) string {
	t.Helper()
	v, err := payload.DecodeValue([]byte(raw))
	if err != nil {
		t.Fatalf("%v: %s", err, raw)
	}
	r, _ := payload.DecodeValue([]byte(ref))
	for _, k := range []string{"uuid", "id", "createdAt"} {
		if x := r.Get(k); x != nil && v.Get(k) != nil {
			v.Set(k, *x)
		}
	}
	b, err := v.AppendJSON(nil, payload.JSONUnescapedUnicode)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
