package rdb

import (
	"context"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/redis/go-redis/v9"
)

// BenchmarkHorizonJob measures the Horizon bookkeeping of one job that completes, the way
// a worker sends it: after the pop, one pipeline with Reserved; after the job, one
// pipeline with the acknowledgement (ZREM of the reserved copy), Completed and Metrics.
// "plain" is the same two round trips without Horizon, the baseline.
func BenchmarkHorizonJob(b *testing.B) {
	for _, horizon := range []bool{false, true} {
		name := "plain"
		if horizon {
			name = "horizon"
		}
		b.Run(name, func(b *testing.B) {
			r, q := benchEnv(b)
			c := r.Client().(*redis.Client)
			hzPrefix := "lq" + testenv.RandomName(4) + "_horizon:"
			b.Cleanup(func() { cleanupKeys(c, hzPrefix) })
			h, err := NewHorizon(HorizonOptions{Prefix: hzPrefix})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if err := h.LoadScripts(ctx, c); err != nil {
				b.Fatal(err)
			}
			seedReady(b, r, q, b.N)
			k := r.Keys(q)
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				popped, reserved, err := r.Pop(ctx, q, now)
				if err != nil || popped == nil {
					b.Fatal(err)
				}
				var job HorizonJob
				var reservedAt time.Time
				p := c.Pipeline()
				if horizon {
					env, err := payload.Parse(popped)
					if err != nil {
						b.Fatal(err)
					}
					if job, err = NewHorizonJob(env, "redis", q, reserved); err != nil {
						b.Fatal(err)
					}
					if reservedAt, err = h.Reserved(ctx, p, job); err != nil {
						b.Fatal(err)
					}
				}
				p.Ping(ctx) // the reserve round trip a worker makes anyway (heartbeat, metrics)
				if _, err := p.Exec(ctx); err != nil {
					b.Fatal(err)
				}
				p = c.Pipeline()
				p.ZRem(ctx, k.Reserved, reserved)
				if horizon {
					if err := h.Completed(ctx, p, job); err != nil {
						b.Fatal(err)
					}
					h.Metrics(ctx, p, q, job.Name, reservedAt)
				}
				if _, err := p.Exec(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
