package rdb

import (
	"context"
	"fmt"
	"reflect"
	"testing"
)

// MigrateExpiredJobs must leave exactly the state MigrateExpired leaves (proved against
// Laravel by the parity tests) and return the moved members in ready-list order.
func TestMigrateExpiredJobsMatchesMigrateExpired(t *testing.T) {
	var due []any
	for i := 0; i < 230; i++ {
		// Ties at the same score are ordered by member bytes.
		due = append(due, fmt.Sprintf(`{"uuid":"%03d","attempts":1}`, (i*7)%230), now-int64(i%5))
	}
	seed := state{
		"queues:%Q:delayed":  zset(append(append([]any{}, due...), `{"uuid":"later"}`, now+1)...),
		"queues:%Q:reserved": zset(`{"uuid":"r1"}`, now, `{"uuid":"r2"}`, now+90),
		"queues:%Q":          list(`{"uuid":"ready"}`),
		"queues:%Q:notify":   ones(1),
	}
	ctx := context.Background()
	for _, v := range variants() {
		for _, tc := range []struct {
			from  Zset
			limit int
		}{{Delayed, NoLimit}, {Delayed, 0}, {Delayed, 10}, {Delayed, 120}, {Reserved, NoLimit}} {
			t.Run(fmt.Sprintf("%s/%v/limit=%d", v.name, tc.from, tc.limit), func(t *testing.T) {
				a, b := newEnv(t, v), newEnv(t, v) // each has its own prefix or queue name
				a.seed(t, seed)
				b.seed(t, seed)
				var src string
				if tc.from == Delayed {
					src = "queues:%Q:delayed"
				} else {
					src = "queues:%Q:reserved"
				}
				before := a.dump(t)[src]
				n, err := a.r.MigrateExpired(ctx, tc.from, a.queue, now, tc.limit)
				if err != nil {
					t.Fatal(err)
				}
				moved, err := b.r.MigrateExpiredJobs(ctx, tc.from, b.queue, now, tc.limit)
				if err != nil {
					t.Fatal(err)
				}
				assertState(t, "state", b.dump(t), a.dump(t))
				if int64(len(moved)) != n {
					t.Fatalf("moved %d, MigrateExpired moved %d", len(moved), n)
				}
				var want [][]byte
				for _, m := range before.ZSet[:n] {
					want = append(want, []byte(m.Member))
				}
				if !reflect.DeepEqual(moved, want) {
					t.Errorf("moved members differ from the %d lowest-scored", n)
				}
			})
		}
	}
}
