package database

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	fdb "github.com/laraq/laraq/failed/database"
	"github.com/laraq/laraq/internal/testenv"
)

// TestLockLottery: a won draw of the lock lottery deletes every expired lock row (and
// only those) after the acquisition, as DatabaseLock::pruneExpiredLocks; a lost draw
// deletes nothing; the draw is random_int(1, odds[1]) <= odds[0].
func TestLockLottery(t *testing.T) {
	ctx := context.Background()
	db, d, _, err := fdb.OpenDB(ctx, testenv.SQLite(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`create table "cache" ("key" varchar not null primary key, "value" text not null, "expiration" integer not null)`,
		`create table "cache_locks" ("key" varchar not null primary key, "owner" varchar not null, "expiration" integer not null)`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Unix(1_800_000_000, 0)
	if _, err := New(ctx, db, d, Options{LockLottery: [2]int{1, 0}}); err == nil {
		t.Error("odds of 1 in 0 were taken")
	}
	s, err := New(ctx, db, d, Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	locks := func() []string {
		t.Helper()
		rows, err := db.QueryContext(ctx, `select "key" from "cache_locks" order by "key"`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var keys []string
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				t.Fatal(err)
			}
			keys = append(keys, k)
		}
		return keys
	}
	for _, row := range []struct {
		key string
		exp int64
	}{{"stale", now.Unix() - 10}, {"due", now.Unix()}, {"live", now.Unix() + 100}} {
		if _, err := db.ExecContext(ctx, `insert into "cache_locks" values (?, 'other', ?)`, row.key, row.exp); err != nil {
			t.Fatal(err)
		}
	}

	var asked []int
	draw := func(got int) func(int) int {
		return func(n int) int { asked = append(asked, n); return got }
	}
	s.draw = draw(3) // 3 > 2: lost
	if ok, err := s.AcquireLock(ctx, "a", "me", 60); err != nil || !ok {
		t.Fatalf("acquire a: %v %v", ok, err)
	}
	if got := fmt.Sprint(locks()); got != "[a due live stale]" {
		t.Errorf("after a lost draw: %s", got)
	}
	s.draw = draw(2) // won; and a refused acquisition draws too
	if ok, err := s.AcquireLock(ctx, "live", "me", 60); err != nil || ok {
		t.Fatalf("acquire live: %v %v", ok, err)
	}
	if got := fmt.Sprint(locks()); got != "[a live]" {
		t.Errorf("after a won draw: %s", got)
	}
	if !slices.Equal(asked, []int{100, 100}) {
		t.Errorf("drew %v, want random_int(1, 100) twice", asked)
	}

	s2, err := New(ctx, db, d, Options{LockLottery: [2]int{0, 1}, Now: func() time.Time { return now.Add(time.Hour) }})
	if err != nil {
		t.Fatal(err)
	}
	for range 20 {
		if _, err := s2.AcquireLock(ctx, "b", "me", 60); err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(locks()); got != "[a b live]" {
		t.Errorf("odds of 0 in 1 pruned: %s", got)
	}

	// lock_timeout: the lifetime of a lock taken for 0 seconds.
	s3, err := New(ctx, db, d, Options{LockTimeout: 30, LockLottery: [2]int{0, 1}, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := s3.AcquireLock(ctx, "c", "me", 0); err != nil || !ok {
		t.Fatalf("acquire c: %v %v", ok, err)
	}
	var exp int64
	if err := db.QueryRowContext(ctx, `select "expiration" from "cache_locks" where "key" = 'c'`).Scan(&exp); err != nil || exp != now.Unix()+30 {
		t.Errorf("a 0-second lock expires at %d (%v), want now + lock_timeout", exp, err)
	}
}
