package laraq_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/redis/go-redis/v9"
)

// side is one half of a parity run: a connection prefix on the shared redis-server, its
// cache keys (database 1, the release's skeleton cache prefix) and its failed-job
// table. PHP works one side, Go the other, from identical starting states.
type side struct {
	name   string
	prefix string
	queue  *redis.Client // database 0
	cache  *redis.Client // database 1
	store  failed.Store  // the side's failed_jobs table, read (and for Go written) by Go
	dsn    string        // that table's database
}

// stepState is what a step left: lines that must be equal on both sides, and notes that
// are shown but not compared.
type stepState struct {
	lines   []string
	summary string // "a1:throw → delayed+1", checked against the scenario's expectation
	note    string
}

func shortHash(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:4])
}

func attemptsIn(b []byte) string {
	env, err := payload.Parse(b)
	if err != nil {
		return "unparsable(" + err.Error() + ")"
	}
	return fmt.Sprint(env.Attempts)
}

// ttlText renders a TTL: Laravel's one-day counters as "1d" when within a few seconds of
// it (PHP's clock is frozen, Redis' is not), anything else as is.
func ttlText(d time.Duration) string {
	switch {
	case d < 0:
		return "none"
	case d <= 86400*time.Second && d >= 86390*time.Second:
		return "1d"
	}
	return d.String()
}

// firstLine reduces a PHP Throwable string to "Class: message", dropping " in file:line"
// and the trace, which differ between PHP and Go by nature.
func firstLine(exception string) string {
	line, _, _ := strings.Cut(exception, "\n")
	if i := strings.LastIndex(line, " in "); i >= 0 {
		line = line[:i]
	}
	return line
}

// capture reads everything a worker step can change on one side, relative to now.
func (s *side) capture(t *testing.T, ctx context.Context, now int64, uuid string) stepState {
	t.Helper()
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }

	keys, err := testenv.Keys(ctx, s.queue, s.prefix)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range keys {
		names = append(names, strings.TrimPrefix(k, s.prefix))
	}
	sort.Strings(names)
	add("keys: %s", strings.Join(names, " "))

	where := "gone"
	q := s.prefix + "queues:default"
	ready, err := s.queue.LRange(ctx, q, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ready {
		add("ready: attempts=%s bytes=%s", attemptsIn([]byte(p)), shortHash([]byte(p)))
		where = "ready"
	}
	for _, z := range []string{"delayed", "reserved"} {
		members, err := s.queue.ZRangeWithScores(ctx, q+":"+z, 0, -1).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range members {
			p := []byte(m.Member.(string))
			rel := int64(m.Score) - now
			add("%s: attempts=%s at=now%+d bytes=%s", z, attemptsIn(p), rel, shortHash(p))
			where = fmt.Sprintf("%s%+d", z, rel)
		}
	}
	notify, err := s.queue.LLen(ctx, q+":notify").Result()
	if err != nil {
		t.Fatal(err)
	}
	add("notify: %d", notify)

	ckeys, err := testenv.Keys(ctx, s.cache, s.prefix)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ckeys)
	exc := ""
	for _, k := range ckeys {
		v, err := s.cache.Get(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		ttl, err := s.cache.TTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		name := strings.ReplaceAll(strings.TrimPrefix(k, s.prefix), uuid, "<uuid>")
		add("cache %s: %q ttl=%s", name, v, ttlText(ttl))
		if strings.Contains(name, "job-exceptions:") {
			exc = " exc=" + v
		}
	}

	recs, err := s.store.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		u := r.UUID
		switch {
		case uuid != "" && u == uuid:
			u = "<uuid>"
		case uuid == "":
			u = "generated"
		}
		add("failed: uuid=%s connection=%s queue=%s attempts=%s payload=%s exception=%s",
			u, r.Connection, r.Queue, attemptsIn(r.Payload), shortHash(r.Payload), firstLine(r.Exception))
		if where == "gone" {
			class, _, _ := strings.Cut(firstLine(r.Exception), ":")
			where = "failed " + class[strings.LastIndex(class, `\`)+1:]
		}
	}
	return stepState{lines: lines, summary: where + exc}
}

// reset empties a side: its queue keys, its cache keys and its failed-job rows.
func (s *side) reset(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, c := range []*redis.Client{s.queue, s.cache} {
		keys, err := testenv.Keys(ctx, c, s.prefix)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) > 0 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.store.Flush(ctx, 0); err != nil {
		t.Fatal(err)
	}
}

// sideBySide renders two states as a line diff: common lines once, then the lines only
// PHP's side has ("PHP") and those only Go's side has (" Go"), aligned on the longest
// common subsequence so that one extra or missing line does not shift the rest.
func sideBySide(php, goSide []string) (string, bool) {
	n, m := len(php), len(goSide)
	lcs := make([][]int, n+1)
	for i := range lcs {
		lcs[i] = make([]int, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if php[i] == goSide[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var b strings.Builder
	same := true
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && php[i] == goSide[j]:
			fmt.Fprintf(&b, "        both %s\n", php[i])
			i++
			j++
		case j >= m || i < n && lcs[i+1][j] >= lcs[i][j+1]:
			fmt.Fprintf(&b, "    ≠    PHP %s\n", php[i])
			same = false
			i++
		default:
			fmt.Fprintf(&b, "    ≠     Go %s\n", goSide[j])
			same = false
			j++
		}
	}
	return b.String(), same
}

// runPHPStep runs Laravel's own Worker (work.php) for at most one job. A worker the
// timeout handler killed is reported by died; any other failure ends the test.
func runPHPStep(t *testing.T, env testenv.PHPEnv, args ...string) (output string, died bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	base := env.Command("work.php", args...)
	cmd := exec.CommandContext(ctx, base.Path, base.Args[1:]...)
	cmd.Env = base.Env
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return string(out), true
		}
	}
	if err != nil {
		t.Fatalf("work.php %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), false
}
