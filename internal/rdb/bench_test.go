package rdb

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/redis/go-redis/v9"
)

// benchPayload is an S8-sized (≈480 byte) job with a distinct id, so zset members differ.
func benchPayload(i int) []byte {
	return []byte(strings.Replace(sampleS8, `"id":"12e2071b-a412-410a-8d8a-68721001ce01"`, fmt.Sprintf(`"id":"%032d"`, i), 1))
}

func benchEnv(b *testing.B) (*RDB, string) {
	b.Helper()
	srv := testenv.RedisServer(b)
	c := srv.Client(b, 0)
	cacheClient := srv.Client(b, 1)
	prefix := testenv.Prefix(b)
	r, err := New(c, Options{Prefix: prefix, Cache: CacheOptions{Client: cacheClient,
		Keys: CacheKeys{RedisPrefix: prefix, Prefix: "laravel_cache", Separator: true}}})
	if err != nil {
		b.Fatal(err)
	}
	if err := r.LoadScripts(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cleanupKeys(c, prefix)
		cleanupKeys(cacheClient, prefix)
	})
	return r, "default"
}

func cleanupKeys(c *redis.Client, prefix string) {
	ctx := context.Background()
	if keys, _ := testenv.Keys(ctx, c, escapeGlob(prefix)); len(keys) > 0 {
		c.Del(ctx, keys...)
	}
}

// seedReady pushes n payloads (outside the timer).
func seedReady(b *testing.B, r *RDB, q string, n int) {
	b.Helper()
	ctx := context.Background()
	for first := 0; first < n; first += 1000 {
		batch := make([][]byte, 0, 1000)
		for i := first; i < n && i < first+1000; i++ {
			batch = append(batch, benchPayload(i))
		}
		if err := r.PushBulk(ctx, q, batch); err != nil {
			b.Fatal(err)
		}
	}
}

// seedReserved pops n jobs and returns them (outside the timer).
func seedReserved(b *testing.B, r *RDB, q string, n int) []PoppedJob {
	b.Helper()
	seedReady(b, r, q, n)
	var out []PoppedJob
	for len(out) < n {
		jobs, err := r.PopMany(context.Background(), q, now, 1000)
		if err != nil {
			b.Fatal(err)
		}
		out = append(out, jobs...)
	}
	return out
}

func BenchmarkPush(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	p := benchPayload(1)
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := r.Push(ctx, q, p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPushBulk100(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	batch := make([][]byte, 100)
	for i := range batch {
		batch[i] = benchPayload(i)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := r.PushBulk(ctx, q, batch); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLater(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	p := benchPayload(1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if err := r.Later(ctx, q, now+int64(i), p); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPop(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	seedReady(b, r, q, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, reserved, err := r.Pop(ctx, q, now); err != nil || reserved == nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPopEmpty(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := r.Pop(ctx, q, now); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkPopMany10(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	seedReady(b, r, q, 10*b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if jobs, err := r.PopMany(ctx, q, now, 10); err != nil || len(jobs) != 10 {
			b.Fatal(err)
		}
	}
}

// BenchmarkPopTicket and BenchmarkPopTicketMany10 are what a worker pays for pops that are
// safe to repeat: the same pops as BenchmarkPop and BenchmarkPopMany10, each keeping its
// reply under the ticket key.
func BenchmarkPopTicket(b *testing.B)       { benchPopTicket(b, 1) }
func BenchmarkPopTicketMany10(b *testing.B) { benchPopTicket(b, 10) }

func benchPopTicket(b *testing.B, n int) {
	r, q := benchEnv(b)
	ctx := context.Background()
	seedReady(b, r, q, n*b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t := Ticket{Owner: "bench", Seq: int64(i + 1), Keep: time.Minute}
		if jobs, err := r.PopTicket(ctx, q, now, n, t); err != nil || len(jobs) != n {
			b.Fatal(err)
		}
	}
}

func BenchmarkRelease(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	jobs := seedReserved(b, r, q, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ok, err := r.Release(ctx, q, jobs[i].Reserved, now+10); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkDeleteReserved(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	jobs := seedReserved(b, r, q, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ok, err := r.DeleteReserved(ctx, q, jobs[i].Reserved); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkUnreserve(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	jobs := seedReserved(b, r, q, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ok, err := r.Unreserve(ctx, q, jobs[i].Job, jobs[i].Reserved); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

// BenchmarkMigrateNothingDue is the idle case every pop pays twice.
func BenchmarkMigrateNothingDue(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	if err := r.Later(ctx, q, now+3600, benchPayload(0)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := r.MigrateDelayed(ctx, q, now, NoLimit); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMigrate100Due(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	for batch := 0; batch < b.N; batch++ {
		zs := make([]redis.Z, 100)
		for j := range zs {
			zs[j] = redis.Z{Score: float64(batch), Member: benchPayload(batch*100 + j)}
		}
		if err := r.Client().ZAdd(ctx, r.Keys(q).Delayed, zs...).Err(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if n, err := r.MigrateDelayed(ctx, q, int64(i), 100); n != 100 || err != nil {
			b.Fatal(n, err)
		}
	}
}

func BenchmarkSizes(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	seedReady(b, r, q, 10)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, _, err := r.Sizes(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkOldestReady(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	seedReady(b, r, q, 1)
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if p, err := r.OldestReady(ctx, q); p == nil || err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClear(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := r.Clear(ctx, q); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBlockForNotifyTokenWaiting(b *testing.B) {
	r, q := benchEnv(b)
	ctx := context.Background()
	args := make([]any, b.N)
	for i := range args {
		args[i] = "1"
	}
	if err := r.Client().RPush(ctx, r.Keys(q).Notify, args...).Err(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if ok, err := r.BlockForNotify(ctx, q, time.Second); !ok || err != nil {
			b.Fatal(ok, err)
		}
	}
}

func BenchmarkQueues(b *testing.B) {
	r, _ := benchEnv(b)
	ctx := context.Background()
	for i := 0; i < 20; i++ {
		seedReady(b, r, fmt.Sprintf("q%d", i), 1)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if qs, err := r.Queues(ctx); len(qs) != 20 || err != nil {
			b.Fatal(len(qs), err)
		}
	}
}

func BenchmarkCacheRestartTimestamp(b *testing.B) {
	r, _ := benchEnv(b)
	ctx := context.Background()
	if err := r.Cache().SignalRestart(ctx, now); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, ok, err := r.Cache().RestartTimestamp(ctx); !ok || err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCachePaused3(b *testing.B) {
	r, _ := benchEnv(b)
	ctx := context.Background()
	queues := []string{"high", "default", "low"}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := r.Cache().Paused(ctx, "redis", queues); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCacheCountJobException(b *testing.B) {
	r, _ := benchEnv(b)
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, _, err := r.Cache().CountJobException(ctx, "u", 1<<40); err != nil {
			b.Fatal(err)
		}
	}
}
