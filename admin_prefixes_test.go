package laraq_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// TestAdminPrefixes: jobs dispatched under two prefixes are found by an Admin whose own
// prefix holds none.
func TestAdminPrefixes(t *testing.T) {
	srv := testenv.RedisServer(t)
	client := srv.Client(t, 0)
	ctx := context.Background()
	mark := testenv.RandomName(4)
	for _, p := range []struct{ prefix, queue string }{
		{"shop-" + mark + "-database-", "emails"},
		{"shop-" + mark + "-database-", "default"},
		{"shop_" + mark + "_database_", "default"},
	} {
		d, err := laraq.NewDispatcher(&laraq.Connection{Client: client, Prefix: p.prefix, Release: laraq.Release{Major: 13, Minor: 26, Patch: 1}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.DispatchString(ctx, `App\Jobs\Ping@handle`, nil, laraq.OnQueue(p.queue)); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		keys, _ := testenv.Keys(context.Background(), client, "shop")
		for _, k := range keys {
			if strings.Contains(k, mark) {
				client.Del(context.Background(), k)
			}
		}
	})
	admin, err := laraq.NewAdmin(&laraq.Connection{Client: client, Prefix: "nothing-" + mark + "-"})
	if err != nil {
		t.Fatal(err)
	}
	if qs, err := admin.Queues(ctx); err != nil || len(qs) != 0 {
		t.Fatalf("queues under the admin's own prefix: %q %v", qs, err)
	}
	all, err := admin.Prefixes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []laraq.QueuePrefix
	for _, p := range all {
		if strings.Contains(p.Prefix, mark) {
			got = append(got, p)
		}
	}
	want := []laraq.QueuePrefix{
		{Prefix: "shop-" + mark + "-database-", Queues: []string{"default", "emails"}},
		{Prefix: "shop_" + mark + "_database_", Queues: []string{"default"}},
	}
	if !slices.EqualFunc(got, want, func(a, b laraq.QueuePrefix) bool { return a.Prefix == b.Prefix && slices.Equal(a.Queues, b.Queues) }) {
		t.Errorf("prefixes %+v, want %+v", got, want)
	}
}
