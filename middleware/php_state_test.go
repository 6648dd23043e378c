package middleware_test

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	fdb "github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/internal/testenv"
)

// The state both sides leave, read and made relative to the second of their attempt.

var ownerShape = regexp.MustCompile(`^[A-Za-z0-9]{16}$`)

// norm turns a value into its form relative to now: numbers near now become {now±N},
// lock owners {owner}.
// With now = raw the numbers stay as they are (see renorm).
func norm(v string, now int64) string {
	if ownerShape.MatchString(v) {
		if _, err := strconv.ParseInt(v, 10, 64); err != nil {
			return "{owner}"
		}
	}
	if now == raw {
		return v
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > now-1e6 && n < now+1e8 {
		return fmt.Sprintf("{now%+d}", n-now)
	}
	return v
}

// raw asks dumpSide for absolute times, to be made relative later with renorm.
const raw = -1

var absTime = regexp.MustCompile(`(ttl=)?\b(1\d{9})\b`)

// renorm makes the absolute times of a raw dump relative to now, as dumpSide(now) would.
func renorm(m map[string]string, now int64) map[string]string {
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = absTime.ReplaceAllStringFunc(v, func(tok string) string {
			n, _ := strconv.ParseInt(strings.TrimPrefix(tok, "ttl="), 10, 64)
			if strings.HasPrefix(tok, "ttl=") {
				return fmt.Sprintf("ttl=%d", n-now)
			}
			return fmt.Sprintf("{now%+d}", n-now)
		})
	}
	return out
}

// dumpSide reads one side's whole state, normalised to the side's now.
func dumpSide(t *testing.T, srv *testenv.Redis, s side, now int64) map[string]string {
	t.Helper()
	out := map[string]string{}
	ctx := context.Background()
	for dbn, conn := range []string{"default", "cache"} {
		c := srv.Client(t, dbn)
		keys, err := testenv.Keys(ctx, c, testenv.EscapeGlob(s.prefix))
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range keys {
			var val string
			switch typ := c.Type(ctx, key).Val(); typ {
			case "string":
				val = norm(c.Get(ctx, key).Val(), now)
			case "hash":
				var fields []string
				for f, v := range c.HGetAll(ctx, key).Val() {
					fields = append(fields, f+"="+norm(v, now))
				}
				sort.Strings(fields)
				val = "hash{" + strings.Join(fields, " ") + "}"
			case "zset": // a queue's delayed or reserved set: each job's attempts and bytes
				var members []string
				for _, z := range c.ZRangeWithScores(ctx, key, 0, -1).Val() {
					members = append(members, fmt.Sprintf("%s at=%s", jobShape(z.Member.(string)), norm(strconv.FormatInt(int64(z.Score), 10), now)))
				}
				val = "zset{" + strings.Join(members, " ") + "}"
			case "list":
				var items []string
				for _, v := range c.LRange(ctx, key, 0, -1).Val() {
					items = append(items, jobShape(v))
				}
				val = "list{" + strings.Join(items, " ") + "}"
			default:
				val = typ + "?"
			}
			// The expiry in milliseconds, relative to the start of the attempt's second: a
			// TTL of N set during that second reads N (EXPIRETIME would round).
			if at := c.PExpireTime(ctx, key).Val(); at > 0 {
				ref := now
				if now == raw {
					ref = 0
				}
				val += fmt.Sprintf(" ttl=%d", (int64(at/time.Millisecond)-ref*1000)/1000)
			}
			out[conn+" "+strings.TrimPrefix(key, s.prefix)] = val
		}
	}
	if s.dbFile != "" {
		db, _, _, err := fdb.OpenDB(context.Background(), "sqlite:"+s.dbFile)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		for _, q := range []struct{ table, col string }{{"cache", "value"}, {"cache_locks", "owner"}} {
			rows, err := db.Query(fmt.Sprintf(`select "key", %q, "expiration" from %q`, q.col, q.table))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var k, v string
				var exp int64
				if err := rows.Scan(&k, &v, &exp); err != nil {
					t.Fatal(err)
				}
				if q.col == "value" {
					v = normSerialized(v, now)
				}
				out[q.table+" "+k] = fmt.Sprintf("%s expiration=%s", norm(v, now), norm(strconv.FormatInt(exp, 10), now))
			}
			if err := rows.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	return out
}

// jobShape is a queued payload as the dumps compare it: its attempts and a hash of its
// exact bytes (both sides run the same payload); another value as it is.
func jobShape(v string) string {
	var p struct {
		Attempts *int64 `json:"attempts"`
	}
	if json.Unmarshal([]byte(v), &p) != nil || p.Attempts == nil {
		return v
	}
	sum := sha256.Sum256([]byte(v))
	return fmt.Sprintf("job(attempts=%d bytes=%x)", *p.Attempts, sum[:4])
}

var serializedInt = regexp.MustCompile(`^i:(-?\d+);$`)

func normSerialized(v string, now int64) string {
	if m := serializedInt.FindStringSubmatch(v); m != nil {
		return "i:" + norm(m[1], now) + ";"
	}
	return v
}

func showDump(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n    %s = %s", k, m[k])
	}
	if b.Len() == 0 {
		return "(nothing)"
	}
	return b.String()
}

func sameDump(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
