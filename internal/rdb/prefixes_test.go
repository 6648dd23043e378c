package rdb

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/internal/testenv"
)

func TestSplitQueueKey(t *testing.T) {
	for _, tc := range []struct {
		key, prefix, queue string
		ok                 bool
	}{
		{"laravel_database_queues:default", "laravel_database_", "default", true},
		{"laravel-database-queues:emails:delayed", "laravel-database-", "emails", true},
		{"queues:default:notify", "", "default", true},
		{"shop_live:queues:{default}:reserved", "shop_live:", "{default}", true},
		{"app_queues:queues:high:invalid", "app_queues:", "high", true},
		{"p_queues:emails:high", "p_", "emails:high", true},
		{"laravel-database-laravel-cache-illuminate:queues:paused", "", "", false}, // 13.25's pause-all cache key
		{"laravel_database_queues:", "", "", false},
		{"laravel_database_queues::delayed", "", "", false},
		{"laravel_horizon:recent_jobs", "", "", false},
		{"queues", "", "", false},
	} {
		prefix, queue, ok := SplitQueueKey(tc.key)
		if prefix != tc.prefix || queue != tc.queue || ok != tc.ok {
			t.Errorf("%q: %q %q %v, want %q %q %v", tc.key, prefix, queue, ok, tc.prefix, tc.queue, tc.ok)
		}
	}
}

func FuzzSplitQueueKey(f *testing.F) {
	for _, k := range []string{"laravel_database_queues:default", "a_queues:queues:b:notify", "x:illuminate:queues:paused", "queues:queues:", "queues:{x}:delayed"} {
		f.Add(k)
	}
	f.Fuzz(func(t *testing.T, key string) {
		prefix, queue, ok := SplitQueueKey(key)
		if !ok {
			return
		}
		if name, ok2 := QueueNameFromKey(prefix, key); !ok2 || name != queue || !strings.HasPrefix(key, prefix+queuesSegment+queue) {
			t.Fatalf("%q split as %q + %q, which does not give the key back", key, prefix, queue)
		}
	})
}

// TestQueuePrefixes seeds queue keys under several prefixes beside keys that only look
// alike, and lists the prefixes on a real redis-server.
func TestQueuePrefixes(t *testing.T) {
	srv := testenv.RedisServer(t)
	c := srv.Client(t, 0)
	ctx := context.Background()
	mark := testenv.RandomName(4)
	keys := map[string]string{
		"laravel_database_" + mark + "queues:default":                         "list",
		"laravel-database-" + mark + "queues:default:notify":                  "list",
		"laravel-database-" + mark + "queues:emails:delayed":                  "zset",
		"laravel-database-" + mark + "queues:{bulk}:reserved":                 "zset",
		mark + ":queues:high:invalid":                                         "list",
		"laravel-database-" + mark + "laravel-cache-illuminate:queues:paused": "string",
		"laravel-database-" + mark + "laravel-cache-illuminate:queue:restart": "string",
		"laravel_horizon:" + mark + ":recent_jobs":                            "zset",
	}
	for k, typ := range keys {
		var err error
		switch typ {
		case "list":
			err = c.RPush(ctx, k, "1").Err()
		case "zset":
			err = c.ZAdd(ctx, k, redis.Z{Score: 1, Member: "x"}).Err()
		default:
			err = c.Set(ctx, k, "1", 0).Err()
		}
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Del(context.Background(), k) })
	}
	r, err := New(c, Options{})
	if err != nil {
		t.Fatal(err)
	}
	all, err := r.QueuePrefixes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []QueuePrefix
	for _, p := range all {
		if strings.Contains(p.Prefix, mark) {
			got = append(got, p)
		}
	}
	want := []QueuePrefix{
		{Prefix: mark + ":", Queues: []string{"high"}},
		{Prefix: "laravel-database-" + mark, Queues: []string{"default", "emails", "{bulk}"}},
		{Prefix: "laravel_database_" + mark, Queues: []string{"default"}},
	}
	if !slices.EqualFunc(got, want, func(a, b QueuePrefix) bool { return a.Prefix == b.Prefix && slices.Equal(a.Queues, b.Queues) }) {
		t.Errorf("prefixes %+v\nwant %+v", got, want)
	}
}
