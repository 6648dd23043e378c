package rdb

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"
)

// QueuePrefix is a connection prefix under which a Redis database holds queue keys
// (PREFIX + "queues:" + NAME [+ suffix], see keys.go), with the names of those queues.
type QueuePrefix struct {
	Prefix string
	Queues []string // sorted
}

// prefixesPattern matches every queue key of any prefix.
const prefixesPattern = "*" + queuesSegment + "*"

// SplitQueueKey reads a key as PREFIX + "queues:" + NAME [+ ":delayed" | ":reserved" |
// ":notify" | ":invalid"], for a prefix that is not known. The prefix ends at the last
// "queues:" that leaves a name, since a prefix may itself end in "queues:" more often
// than a queue name starts with it. Cache keys that look alike (the cache store's
// `illuminate:queues:paused` of Laravel 13.25) are not queue keys: ok is false.
func SplitQueueKey(key string) (prefix, queue string, ok bool) {
	end := len(key)
	for {
		i := strings.LastIndex(key[:end], queuesSegment)
		if i < 0 {
			return "", "", false
		}
		prefix = key[:i]
		if name, ok := QueueNameFromKey(prefix, key); ok && !strings.HasSuffix(prefix, "illuminate:") {
			return prefix, name, true
		}
		if i == 0 {
			return "", "", false
		}
		end = i + len(queuesSegment) - 1
	}
}

// QueuePrefixes scans the client's database (every master of a Cluster) for queue keys
// of any prefix and returns each prefix that holds some, with its queues, sorted by
// prefix. It walks the whole keyspace with SCAN MATCH *queues:*, so it is for tools
// (`laraq stats`), not for a worker's loop.
func (r *RDB) QueuePrefixes(ctx context.Context) ([]QueuePrefix, error) {
	found := map[string]map[string]struct{}{}
	var mu sync.Mutex // ForEachMaster scans the masters concurrently
	scan := func(ctx context.Context, c redis.Cmdable) error {
		iter := c.Scan(ctx, 0, prefixesPattern, 1000).Iterator()
		for iter.Next(ctx) {
			prefix, name, ok := SplitQueueKey(iter.Val())
			if !ok {
				continue
			}
			mu.Lock()
			if found[prefix] == nil {
				found[prefix] = map[string]struct{}{}
			}
			found[prefix][name] = struct{}{}
			mu.Unlock()
		}
		return iter.Err()
	}
	var err error
	if cc, ok := r.client.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, c *redis.Client) error { return scan(ctx, c) })
	} else {
		err = scan(ctx, r.client)
	}
	if err != nil {
		return nil, fmt.Errorf("rdb: list queue prefixes: %w", err)
	}
	out := make([]QueuePrefix, 0, len(found))
	for p, names := range found {
		qp := QueuePrefix{Prefix: p}
		for n := range names {
			qp.Queues = append(qp.Queues, n)
		}
		slices.Sort(qp.Queues)
		out = append(out, qp)
	}
	slices.SortFunc(out, func(a, b QueuePrefix) int { return strings.Compare(a.Prefix, b.Prefix) })
	return out, nil
}
