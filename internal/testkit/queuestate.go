package testkit

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
)

// Queued is every payload under a prefix: "queue-key(score-now)" → payload, uuid and id
// replaced by placeholders, so that two dispatches of the same job compare equal.
func Queued(t *testing.T, ctx context.Context, srv *testenv.Redis, prefix string, now int64) map[string]string {
	t.Helper()
	c := srv.Client(t, 0)
	keys, err := testenv.AppKeys(ctx, c, prefix)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, k := range keys {
		name := strings.TrimPrefix(k, prefix)
		switch typ := c.Type(ctx, k).Val(); typ {
		case "list":
			items := c.LRange(ctx, k, 0, -1).Val()
			if strings.HasSuffix(name, ":notify") {
				out[name] = fmt.Sprint(len(items), " tokens")
				continue
			}
			for i, p := range items {
				out[fmt.Sprintf("%s[%d]", name, i)] = anonymous(t, p)
			}
		case "zset":
			for _, z := range c.ZRangeWithScores(ctx, k, 0, -1).Val() {
				out[fmt.Sprintf("%s(now%+d)", name, int64(z.Score)-now)] = anonymous(t, z.Member.(string))
			}
		default:
			out[name] = typ
		}
	}
	return out
}

func anonymous(t *testing.T, p string) string {
	t.Helper()
	env, err := payload.Parse([]byte(p))
	if err != nil {
		t.Fatalf("%v: %s", err, p)
	}
	p = strings.Replace(p, `"uuid":"`+env.UUID+`"`, `"uuid":"<uuid>"`, 1)
	return strings.Replace(p, `"id":"`+env.ID+`"`, `"id":"<id>"`, 1)
}

// Describe prints a queue state of Queued one key a line, sorted.
func Describe(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %s: %s\n", k, m[k])
	}
	return b.String()
}

// FirstDifference shows where two payloads part, with some context.
func FirstDifference(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-40)
	return fmt.Sprintf("differ at byte %d:\n    PHP …%s\n     Go …%s", i, a[from:min(len(a), i+60)], b[from:min(len(b), i+60)])
}
