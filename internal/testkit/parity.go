package testkit

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/failed"
	"github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/redis/go-redis/v9"
)

// The parity suite's clock and timing: every step of a run is ParityStepGap seconds after
// the last, from ParityT0, so no backoff or retry_after of a step reaches into the next.
const (
	ParityT0         = 1_700_000_000
	ParityStepGap    = 100 // seconds between steps: more than any backoff and retry_after
	ParityRetryAfter = 60
)

// NewSide is one half of a parity run named name ("php" or "go"): a fresh prefix on
// srv, and a failed_jobs table in a SQLite file of its own, migrated by PHP on the PHP side.
func NewSide(t *testing.T, ctx context.Context, srv *testenv.Redis, name string, major int) *Side {
	t.Helper()
	file := filepath.Join(t.TempDir(), name+".sqlite")
	if err := os.WriteFile(file, nil, 0o600); err != nil { // PHP's SQLite connector wants the file
		t.Fatal(err)
	}
	dsn := "sqlite:" + file
	s := &Side{name: name, Prefix: testenv.Prefix(t), Queue: srv.Client(t, 0), Cache: srv.Client(t, 1), DSN: dsn}
	if name == "php" {
		// The table as `php artisan queue:failed-table` + migrate creates it.
		testenv.PHPEnv{Major: major, FailedDB: dsn}.Run(t, nil, "failed_op.php", "migrate")
	}
	store, err := database.Open(ctx, dsn, database.Options{Logger: QuietLogger(t), CreateTable: database.CreateIfMissing, Driver: failedDriver(major)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	s.Store = store
	return s
}

// failedDriver is the failed-job driver of a major's skeleton: `database` (a table
// without uuid) before 8.x, whose database-uuids provider is the default from 8.x.
func failedDriver(major int) database.Driver {
	if !testenv.DatabaseUUIDs.Has(major) {
		return database.Database
	}
	return database.DatabaseUUIDs
}

// PeerInfoRelease is the release a peer booted as ("v12.67.0" → 12.67.0; Debian's "v8.83").
func PeerInfoRelease(t testing.TB, peer testenv.PeerInfo) laraq.Release {
	t.Helper()
	return MustRelease(t, peer.Tag)
}

// PeerCache is the cache store of the peer's skeleton as laraq names it: the store
// prefix without the ":" RedisStore appends up to 10.x (the release adds it back).
func PeerCache(client *redis.Client, peer testenv.PeerInfo) laraq.CacheStore {
	prefix := peer.CachePrefix
	if peer.Major <= 10 {
		prefix = strings.TrimSuffix(prefix, ":")
	}
	return laraq.CacheStore{Client: client, Prefix: prefix}
}

// CopyQueueKeys copies every key under one side's prefix to the other's (DUMP/RESTORE,
// so lists, sorted sets and scores arrive byte for byte).
func CopyQueueKeys(t *testing.T, ctx context.Context, from, to *Side) {
	t.Helper()
	keys, err := testenv.Keys(ctx, from.Queue, from.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		dump, err := from.Queue.Dump(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if err := to.Queue.RestoreReplace(ctx, to.Prefix+strings.TrimPrefix(k, from.Prefix), 0, dump).Err(); err != nil {
			t.Fatal(err)
		}
	}
}

// Side is one half of a parity run: a connection prefix on the shared redis-server, its
// cache keys (database 1, the release's skeleton cache prefix) and its failed-job
// table. PHP works one side, Go the other, from identical starting states.
type Side struct {
	name   string
	Prefix string
	Queue  *redis.Client // database 0
	Cache  *redis.Client // database 1
	Store  failed.Store  // the side's failed_jobs table, read (and for Go written) by Go
	DSN    string        // that table's database
}

// stepState is what a step left: lines that must be equal on both sides, and notes that
// are shown but not compared.
type stepState struct {
	Lines   []string
	Summary string // "a1:throw → delayed+1", checked against the scenario's expectation
	Note    string
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

// Capture reads everything a worker step can change on one side, relative to now.
func (s *Side) Capture(t *testing.T, ctx context.Context, now int64, uuid string) stepState {
	t.Helper()
	var lines []string
	add := func(format string, args ...any) { lines = append(lines, fmt.Sprintf(format, args...)) }

	keys, err := testenv.Keys(ctx, s.Queue, s.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, k := range keys {
		names = append(names, strings.TrimPrefix(k, s.Prefix))
	}
	sort.Strings(names)
	add("keys: %s", strings.Join(names, " "))

	where := "gone"
	q := s.Prefix + "queues:default"
	ready, err := s.Queue.LRange(ctx, q, 0, -1).Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ready {
		add("ready: attempts=%s bytes=%s", attemptsIn([]byte(p)), shortHash([]byte(p)))
		where = "ready"
	}
	for _, z := range []string{"delayed", "reserved"} {
		members, err := s.Queue.ZRangeWithScores(ctx, q+":"+z, 0, -1).Result()
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
	notify, err := s.Queue.LLen(ctx, q+":notify").Result()
	if err != nil {
		t.Fatal(err)
	}
	add("notify: %d", notify)

	ckeys, err := testenv.Keys(ctx, s.Cache, s.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(ckeys)
	exc := ""
	for _, k := range ckeys {
		v, err := s.Cache.Get(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		ttl, err := s.Cache.TTL(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		name := strings.ReplaceAll(strings.TrimPrefix(k, s.Prefix), uuid, "<uuid>")
		add("cache %s: %q ttl=%s", name, v, ttlText(ttl))
		if strings.Contains(name, "job-exceptions:") {
			exc = " exc=" + v
		}
	}

	recs, err := s.Store.All(ctx)
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
	return stepState{Lines: lines, Summary: where + exc}
}

// Reset empties a side: its queue keys, its cache keys and its failed-job rows.
func (s *Side) Reset(t *testing.T, ctx context.Context) {
	t.Helper()
	for _, c := range []*redis.Client{s.Queue, s.Cache} {
		keys, err := testenv.Keys(ctx, c, s.Prefix)
		if err != nil {
			t.Fatal(err)
		}
		if len(keys) > 0 {
			if err := c.Del(ctx, keys...).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.Store.Flush(ctx, 0); err != nil {
		t.Fatal(err)
	}
}

// SideBySide renders two states as a line diff: common lines once, then the lines only
// PHP's side has ("PHP") and those only Go's side has (" Go"), aligned on the longest
// common subsequence so that one extra or missing line does not shift the rest.
func SideBySide(php, goSide []string) (string, bool) {
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

// EndState is what a run left on one side: the keys under its prefix and its failed
// rows as "class: exception's first line".
func (s *Side) EndState(t *testing.T, ctx context.Context) []string {
	t.Helper()
	keys, err := testenv.Keys(ctx, s.Queue, s.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range keys {
		out = append(out, "key "+strings.TrimPrefix(k, s.Prefix))
	}
	recs, err := s.Store.All(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		env, err := payload.Parse(r.Payload)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, "failed "+laraq.ClassOf(env)+": "+firstLine(r.Exception))
	}
	slices.Sort(out)
	return out
}
