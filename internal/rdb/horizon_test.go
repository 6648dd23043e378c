package rdb

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/php"
	"github.com/redis/go-redis/v9"
)

// The Horizon scripts, one operation each on seeded state, with the whole key state
// asserted afterwards. The clock is fixed, so every timestamp, score and expiry is exact.
// What the same events look like when PHP's Horizon writes them is proved by the interop
// tests (horizon_php_test.go).

const (
	hzPushedPayload   = `{"uuid":"J1","displayName":"App\\Jobs\\Send","id":"J1","attempts":0,"tags":["App\\Models\\User:1","urgent"]}`
	hzReservedPayload = `{"attempts":1,"displayName":"App\\Jobs\\Send","id":"J1","tags":["App\\Models\\User:1","urgent"],"uuid":"J1"}`
)

func hzJob(payload string, tags ...string) HorizonJob {
	return HorizonJob{ID: "J1", Name: `App\Jobs\Send`, Connection: "redis", Queue: "default", Payload: []byte(payload), Tags: tags}
}

func (e *hzEnv) t() float64  { f, _ := strconv.ParseFloat(e.T, 64); return f }
func (e *hzEnv) nt() float64 { f, _ := strconv.ParseFloat(e.NT, 64); return f }

// pushedState is what Pushed leaves for hzJob(hzPushedPayload) pushed at T0 (an earlier T).
func pushedState(e *hzEnv, t0 float64) hstate {
	t0s := php.FloatString(t0)
	return hstate{
		"recent_jobs":  hzset(0, "J1", -t0),
		"pending_jobs": hzset(0, "J1", -t0),
		"J1": hhash(e.in(60), "id", "J1", "connection", "redis", "queue", "default", "name", `App\Jobs\Send`,
			"status", "pending", "payload", hzPushedPayload, "created_at", t0s, "updated_at", t0s),
	}
}

func TestHorizonPushed(t *testing.T) {
	ctx := context.Background()
	t.Run("no tags monitored", func(t *testing.T) {
		e := newHzEnv(t, HorizonTrim{})
		e.seed(t, hstate{"monitoring": hset("other")})
		e.pipe(t, func(p redis.Pipeliner) error {
			return e.h.Pushed(ctx, p, hzJob(hzPushedPayload, `App\Models\User:1`, "urgent"))
		})
		assertHState(t, "pushed", e.dump(t), with(pushedState(e, e.t()), hstate{"monitoring": hset("other")}))
	})
	t.Run("monitored tag", func(t *testing.T) {
		e := newHzEnv(t, HorizonTrim{Pending: 5})
		e.seed(t, hstate{"monitoring": hset("urgent", "x")})
		e.pipe(t, func(p redis.Pipeliner) error {
			return e.h.Pushed(ctx, p, hzJob(hzPushedPayload, `App\Models\User:1`, "urgent"))
		})
		want := pushedState(e, e.t())
		j := want["J1"]
		j.ExpireAt = e.in(5)
		want["J1"] = j
		want["monitoring"] = hset("urgent", "x")
		want["urgent"] = hzset(0, "J1", e.t())
		assertHState(t, "pushed", e.dump(t), want)
	})
	t.Run("no id", func(t *testing.T) {
		e := newHzEnv(t, HorizonTrim{})
		j := hzJob(hzPushedPayload)
		j.ID = ""
		if err := e.h.Pushed(ctx, e.c.Pipeline(), j); err == nil {
			t.Fatal("no error for a job without id")
		}
	})
}

func TestHorizonReservedReleasedMigrated(t *testing.T) {
	ctx := context.Background()
	t0 := float64(time.Now().Unix()-30) + 0.5
	t.Run("reserved keeps the push record and TTL", func(t *testing.T) {
		e := newHzEnv(t, HorizonTrim{})
		seed := pushedState(e, t0)
		seed["J1"] = hkey{Type: "hash", Hash: seed["J1"].Hash, ExpireAt: e.in(60) - 30}
		e.seed(t, seed)
		var at time.Time
		e.pipe(t, func(p redis.Pipeliner) (err error) {
			at, err = e.h.Reserved(ctx, p, hzJob(hzReservedPayload))
			return err
		})
		if !at.Equal(e.at) {
			t.Errorf("reserved at %v, want %v", at, e.at)
		}
		want := pushedState(e, t0)
		want["J1"] = hhash(e.in(60)-30, "id", "J1", "connection", "redis", "queue", "default", "name", `App\Jobs\Send`,
			"status", "reserved", "payload", hzReservedPayload, "created_at", php.FloatString(t0),
			"updated_at", e.T, "reserved_at", e.T)
		assertHState(t, "reserved", e.dump(t), want)
	})
	t.Run("reserved adopts a job Horizon did not push", func(t *testing.T) {
		e := newHzEnv(t, HorizonTrim{Pending: 7})
		e.pipe(t, func(p redis.Pipeliner) error {
			_, err := e.h.Reserved(ctx, p, hzJob(hzReservedPayload))
			return err
		})
		assertHState(t, "reserved", e.dump(t), hstate{
			"recent_jobs":  hzset(0, "J1", e.nt()),
			"pending_jobs": hzset(0, "J1", e.nt()),
			"J1": hhash(e.in(7), "id", "J1", "connection", "redis", "queue", "default", "name", `App\Jobs\Send`,
				"status", "reserved", "payload", hzReservedPayload, "created_at", e.T, "updated_at", e.T, "reserved_at", e.T),
		})
	})
	t.Run("reserved adopts a partial hash", func(t *testing.T) {
		// What a PHP Horizon worker leaves for a job it did not push: no id, no TTL.
		e := newHzEnv(t, HorizonTrim{})
		e.seed(t, hstate{"J1": hhash(0, "status", "pending", "payload", "old", "updated_at", "1")})
		e.pipe(t, func(p redis.Pipeliner) error { return e.h.Released(ctx, p, hzJob(hzReservedPayload)) })
		assertHState(t, "released", e.dump(t), hstate{
			"recent_jobs":  hzset(0, "J1", e.nt()),
			"pending_jobs": hzset(0, "J1", e.nt()),
			"J1": hhash(e.in(60), "id", "J1", "connection", "redis", "queue", "default", "name", `App\Jobs\Send`,
				"status", "pending", "payload", hzReservedPayload, "created_at", e.T, "updated_at", e.T),
		})
	})
	t.Run("released", func(t *testing.T) {
		e := newHzEnv(t, HorizonTrim{})
		seed := pushedState(e, t0)
		seed["J1"].Hash["status"] = "reserved"
		seed["J1"].Hash["reserved_at"] = "1.5"
		e.seed(t, seed)
		e.pipe(t, func(p redis.Pipeliner) error { return e.h.Released(ctx, p, hzJob(hzReservedPayload)) })
		want := pushedState(e, t0)
		want["J1"].Hash["payload"] = hzReservedPayload
		want["J1"].Hash["updated_at"] = e.T
		want["J1"].Hash["reserved_at"] = "1.5"
		assertHState(t, "released", e.dump(t), want)
	})
	t.Run("migrated", func(t *testing.T) {
		e := newHzEnv(t, HorizonTrim{})
		seed := pushedState(e, t0)
		seed["J1"].Hash["status"] = "reserved"
		e.seed(t, seed)
		j2 := HorizonJob{ID: "J2", Name: "B", Connection: "redis", Queue: "default", Payload: []byte("p2")}
		e.pipe(t, func(p redis.Pipeliner) error { return e.h.Migrated(ctx, p, hzJob(hzReservedPayload), j2) })
		want := pushedState(e, t0)
		want["J1"].Hash["payload"] = hzReservedPayload
		want["J1"].Hash["updated_at"] = e.T
		want["recent_jobs"] = hzset(0, "J1", -t0, "J2", e.nt())
		want["pending_jobs"] = hzset(0, "J1", -t0, "J2", e.nt())
		want["J2"] = hhash(e.in(60), "id", "J2", "connection", "redis", "queue", "default", "name", "B",
			"status", "pending", "payload", "p2", "created_at", e.T, "updated_at", e.T)
		assertHState(t, "migrated", e.dump(t), want)
	})
}

// reservedState is hzJob reserved at t0 after being pushed at t0-1.
func reservedState(e *hzEnv, t0 float64) hstate {
	s := pushedState(e, t0-1)
	s["J1"].Hash["status"] = "reserved"
	s["J1"].Hash["payload"] = hzReservedPayload
	s["J1"].Hash["updated_at"] = php.FloatString(t0)
	s["J1"].Hash["reserved_at"] = php.FloatString(t0)
	return s
}

func TestHorizonCompleted(t *testing.T) {
	ctx := context.Background()
	t0 := float64(time.Now().Unix()-10) + 0.25
	complete := func(t *testing.T, e *hzEnv, j HorizonJob) {
		e.pipe(t, func(p redis.Pipeliner) error { return e.h.Completed(ctx, p, j) })
	}
	t.Run("completed", func(t *testing.T) {
		e := newHzEnv(t, HorizonTrim{Completed: 3})
		e.seed(t, with(reservedState(e, t0), hstate{"monitoring": hset("x")}))
		complete(t, e, hzJob(hzReservedPayload, "urgent"))
		want := reservedState(e, t0)
		delete(want, "pending_jobs")
		want["completed_jobs"] = hzset(0, "J1", e.nt())
		want["J1"].Hash["status"] = "completed"
		want["J1"].Hash["completed_at"] = e.T
		want["J1"] = hhash(e.in(3), flat(want["J1"].Hash)...)
		want["monitoring"] = hset("x")
		assertHState(t, "completed", e.dump(t), want)
	})
	t.Run("silenced", func(t *testing.T) {
		e := newHzEnv(t, HorizonTrim{})
		e.seed(t, reservedState(e, t0))
		j := hzJob(hzReservedPayload)
		j.Silenced = true
		complete(t, e, j)
		want := reservedState(e, t0)
		delete(want, "pending_jobs")
		want["silenced_jobs"] = hzset(0, "J1", e.nt())
		want["J1"].Hash["status"] = "completed"
		want["J1"].Hash["completed_at"] = e.T
		want["J1"] = hhash(e.in(60), flat(want["J1"].Hash)...)
		assertHState(t, "silenced", e.dump(t), want)
	})
	t.Run("monitored", func(t *testing.T) {
		e := newHzEnv(t, HorizonTrim{Monitored: 100})
		e.seed(t, with(reservedState(e, t0), hstate{"monitoring": hset("urgent")}))
		complete(t, e, hzJob(hzReservedPayload, `App\Models\User:1`, "urgent"))
		want := reservedState(e, t0)
		delete(want, "pending_jobs")
		want["completed_jobs"] = hzset(0, "J1", e.nt())
		want["monitored_jobs"] = hzset(0, "J1", e.nt())
		want["monitoring"] = hset("urgent")
		want["J1"].Hash["status"] = "completed"
		want["J1"].Hash["completed_at"] = e.T
		want["J1"] = hhash(e.in(100), flat(want["J1"].Hash)...)
		assertHState(t, "monitored", e.dump(t), want)
	})
	t.Run("adopts", func(t *testing.T) {
		e := newHzEnv(t, HorizonTrim{})
		complete(t, e, hzJob(hzReservedPayload))
		assertHState(t, "adopted", e.dump(t), hstate{
			"recent_jobs":    hzset(0, "J1", e.nt()),
			"completed_jobs": hzset(0, "J1", e.nt()),
			"J1": hhash(e.in(60), "id", "J1", "connection", "redis", "queue", "default", "name", `App\Jobs\Send`,
				"status", "completed", "payload", hzReservedPayload, "created_at", e.T, "updated_at", e.T, "completed_at", e.T),
		})
	})
}

func flat(m map[string]string) []string {
	out := make([]string, 0, 2*len(m))
	for k, v := range m {
		out = append(out, k, v)
	}
	return out
}

func TestHorizonRetriedBy(t *testing.T) {
	ctx := context.Background()
	const (
		one   = `[{"id":"R1","status":"pending","retried_at":1700000000}]`
		three = `[{"id":"R0","status":"failed","retried_at":1699999000},{"id":"R1","status":"pending","retried_at":1700000000},{"id":"R2","status":"pending","retried_at":1700000100}]`
	)
	for _, tc := range []struct {
		name, status, before, after string
	}{
		{"completed", "completed", one, `[{"id":"R1","status":"completed","retried_at":1700000000}]`},
		{"failed among others", "failed", three,
			`[{"id":"R0","status":"failed","retried_at":1699999000},{"id":"R1","status":"failed","retried_at":1700000000},{"id":"R2","status":"pending","retried_at":1700000100}]`},
		{"no status key: Arr::set appends it", "completed", `[{"id":"R1","retried_at":1}]`, `[{"id":"R1","retried_at":1,"status":"completed"}]`},
		{"only an id", "completed", `[{"id":"R1"}]`, `[{"id":"R1","status":"completed"}]`},
		{"escaped id", "completed", `[{"id":"R\u0031","status":"pending","x":{"a":[1,"]}"]}}]`, `[{"id":"R\u0031","status":"completed","x":{"a":[1,"]}"]}}]`},
		{"not this job", "completed", `[{"id":"R9","status":"pending","retried_at":1}]`, `[{"id":"R9","status":"pending","retried_at":1}]`},
		{"integer id is not the string", "completed", `[{"id":1,"status":"pending"}]`, `[{"id":1,"status":"pending"}]`},
		{"empty list", "completed", `[]`, `[]`},
		{"falsy 0 is left", "completed", `0`, `0`},
		{"invalid JSON becomes []", "completed", `[{"id":`, `[]`},
		{"other shape is left", "completed", `{"a":{"id":"R1"}}`, `{"a":{"id":"R1"}}`},
		{"whitespace", "completed", "[ {\"id\" : \"R1\" , \"status\" : \"pending\" } ]", "[ {\"id\" : \"R1\" , \"status\" : \"completed\" } ]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newHzEnv(t, HorizonTrim{})
			e.seed(t, hstate{"P1": hhash(e.in(10080), "id", "P1", "status", "failed", "retried_by", tc.before)})
			e.pipe(t, func(p redis.Pipeliner) error {
				j := HorizonJob{ID: "R1", RetryOf: "P1"}
				e.h.retryStatus(ctx, p, &j, tc.status)
				return nil
			})
			assertHState(t, tc.name, e.dump(t), hstate{"P1": hhash(e.in(10080), "id", "P1", "status", "failed", "retried_by", tc.after)})
		})
	}
	t.Run("no parent hash", func(t *testing.T) {
		e := newHzEnv(t, HorizonTrim{})
		e.pipe(t, func(p redis.Pipeliner) error {
			j := HorizonJob{ID: "R1", RetryOf: "P1"}
			e.h.retryStatus(ctx, p, &j, "completed")
			return nil
		})
		assertHState(t, "no parent", e.dump(t), hstate{})
	})
}

func TestHorizonFailed(t *testing.T) {
	ctx := context.Background()
	t0 := float64(time.Now().Unix()-10) + 0.25
	for _, tc := range []struct {
		name     string
		trim     HorizonTrim
		silenced bool
		tagTTL   int64
	}{
		{"stock trim", HorizonTrim{Failed: 10080}, false, 10080 * 60},
		// Without trim.failed, StoreTagsForFailedJob falls back to 2880 minutes while the
		// repository keeps the hash 10080.
		{"trim.failed unset", HorizonTrim{}, false, 2880 * 60},
		{"silenced", HorizonTrim{Failed: 20}, true, 20 * 60},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newHzEnv(t, tc.trim)
			e.seed(t, with(reservedState(e, t0), hstate{
				"P1": hhash(0, "id", "P1", "retried_by", `[{"id":"J1","status":"pending","retried_at":1}]`),
			}))
			j := hzJob(hzReservedPayload, `App\Models\User:1`, "urgent")
			j.Silenced = tc.silenced
			j.RetryOf = "P1"
			e.pipe(t, func(p redis.Pipeliner) error {
				return e.h.Failed(ctx, p, j, Failure{Exception: "RuntimeException: boom in /app/Job.php:12\nStack trace:\n#0 {main}"})
			})
			failedTTL := 10080
			if tc.trim.Failed != 0 {
				failedTTL = tc.trim.Failed
			}
			want := reservedState(e, t0)
			delete(want, "pending_jobs")
			for k, v := range map[string]string{"status": "failed", "completed_at": e.T, "failed_at": e.T,
				"exception": "RuntimeException: boom in /app/Job.php:12\nStack trace:\n#0 {main}", "context": ""} {
				want["J1"].Hash[k] = v
			}
			want["J1"] = hhash(e.in(failedTTL), flat(want["J1"].Hash)...)
			want["failed_jobs"] = hzset(0, "J1", e.nt())
			want["recent_failed_jobs"] = hzset(0, "J1", e.nt())
			want[`failed:App\Models\User:1`] = hzset(e.unix+tc.tagTTL, "J1", e.t())
			want["failed:urgent"] = hzset(e.unix+tc.tagTTL, "J1", e.t())
			want["P1"] = hhash(0, "id", "P1", "retried_by", `[{"id":"J1","status":"failed","retried_at":1}]`)
			// EXPIRE is relative to the server's own clock, not the injected one.
			got := e.dump(t)
			relativeExpiry(t, got, e.unix+tc.tagTTL, `failed:App\Models\User:1`, "failed:urgent")
			assertHState(t, tc.name, got, want)
		})
	}
	t.Run("context", func(t *testing.T) {
		e := newHzEnv(t, HorizonTrim{})
		e.pipe(t, func(p redis.Pipeliner) error {
			return e.h.Failed(ctx, p, hzJob(hzReservedPayload), Failure{Exception: "E", Context: []byte(`{"order":5}`)})
		})
		got := e.dump(t)["J1"].Hash
		if got["context"] != `{"order":5}` || got["id"] != "J1" || got["created_at"] != e.T {
			t.Errorf("hash %v", got)
		}
	})
}

func TestHorizonMetrics(t *testing.T) {
	ctx := context.Background()
	e := newHzEnv(t, HorizonTrim{})
	// Redis writes a Lua number with %.17g (7.0) or its shortest form (7.2+): compare the
	// runtimes as numbers.
	runtimes := func(s hstate) hstate {
		for _, k := range []string{"queue:default", `job:App\Jobs\Send`} {
			if f, err := strconv.ParseFloat(s[k].Hash["runtime"], 64); err == nil {
				s[k].Hash["runtime"] = strconv.FormatFloat(f, 'g', -1, 64)
			}
		}
		return s
	}
	reservedAt := e.at.Add(-1234567 * time.Microsecond) // 1234.567 ms, rounded to 1234.57
	e.pipe(t, func(p redis.Pipeliner) error { e.h.Metrics(ctx, p, "default", `App\Jobs\Send`, reservedAt); return nil })
	want := hstate{
		"measured_queues":   hset(e.prefix + "queue:default"),
		"measured_jobs":     hset(e.prefix + `job:App\Jobs\Send`),
		"queue:default":     hhash(0, "throughput", "1", "runtime", "1234.57"),
		`job:App\Jobs\Send`: hhash(0, "throughput", "1", "runtime", "1234.57"),
	}
	assertHState(t, "first", runtimes(e.dump(t)), want)
	// An untimed job counts with runtime 0: the mean becomes (1 × 1234.57 + 0) / 2.
	e.pipe(t, func(p redis.Pipeliner) error {
		e.h.Metrics(ctx, p, "default", `App\Jobs\Send`, time.Time{})
		return nil
	})
	mean := strconv.FormatFloat((1*1234.57+0)/2, 'g', -1, 64)
	want["queue:default"] = hhash(0, "throughput", "2", "runtime", mean)
	want[`job:App\Jobs\Send`] = hhash(0, "throughput", "2", "runtime", mean)
	assertHState(t, "second", runtimes(e.dump(t)), want)
}

// relativeExpiry checks that keys given a relative EXPIRE expire within two seconds of
// want (the server's clock runs on while the injected one stands still) and sets their
// expiry to want for the exact comparison that follows.
func relativeExpiry(t *testing.T, s hstate, want int64, keys ...string) {
	t.Helper()
	for _, k := range keys {
		v, ok := s[k]
		if !ok {
			continue
		}
		if d := v.ExpireAt - want; d < -2 || d > 2 {
			t.Errorf("%s expires at %d, want %d ±2", k, v.ExpireAt, want)
		}
		v.ExpireAt = want
		s[k] = v
	}
}
