package rdb

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
)

const (
	now   = int64(1700000000)
	until = now + 90
)

func payloads(n int, tmpl string) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf(tmpl, i)
	}
	return out
}

func toBytes(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

func mustNoErr(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestPush(t *testing.T) {
	p1 := `{"job":"A@b","data":{"x":"a/b"},"id":"1","attempts":0}`
	p0 := `{"job":"A@b","data":[],"id":"0","attempts":0}`
	bulk := payloads(250, `{"job":"A@b","data":%d,"id":"b","attempts":0}`)
	runCases(t, []opCase{{
		name: "onto empty queue",
		run: func(t *testing.T, ctx context.Context, e *env) {
			mustNoErr(t, e.r.Push(ctx, e.queue, []byte(p1)))
		},
		want: state{"queues:%Q": list(p1), "queues:%Q:notify": ones(1)},
	}, {
		name: "appends after existing jobs and tokens",
		seed: state{"queues:%Q": list(p0), "queues:%Q:notify": ones(1)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			mustNoErr(t, e.r.Push(ctx, e.queue, []byte(p1)))
		},
		want: state{"queues:%Q": list(p0, p1), "queues:%Q:notify": ones(2)},
	}, {
		name: "bulk keeps order with one token per job across chunks",
		seed: state{"queues:%Q": list(p0), "queues:%Q:notify": ones(1)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			mustNoErr(t, e.r.PushBulk(ctx, e.queue, toBytes(bulk)))
		},
		want: state{"queues:%Q": list(append([]string{p0}, bulk...)...), "queues:%Q:notify": ones(251)},
	}, {
		name: "bulk of nothing changes nothing",
		seed: state{"queues:%Q": list(p0)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			mustNoErr(t, e.r.PushBulk(ctx, e.queue, nil))
		},
		want: state{"queues:%Q": list(p0)},
	}, {
		name: "later adds to the delayed zset without a token",
		seed: state{"queues:%Q:delayed": zset(p0, now+5)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			mustNoErr(t, e.r.Later(ctx, e.queue, now+100, []byte(p1)))
		},
		want: state{"queues:%Q:delayed": zset(p0, now+5, p1, now+100)},
	}, {
		name: "later of an identical payload moves its score",
		seed: state{"queues:%Q:delayed": zset(p1, now+5)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			mustNoErr(t, e.r.Later(ctx, e.queue, now+100, []byte(p1)))
		},
		want: state{"queues:%Q:delayed": zset(p1, now+100)},
	}})
}

func TestPop(t *testing.T) {
	other := `{"job":"A@b","data":{},"id":"2","attempts":0}`
	noAttempts := `{"job":"X@y","data":{"a":1}}`
	expectPop := func(wantJob, wantReserved string) func(t *testing.T, ctx context.Context, e *env) {
		return func(t *testing.T, ctx context.Context, e *env) {
			job, reserved, err := e.r.Pop(ctx, e.queue, until)
			mustNoErr(t, err)
			if string(job) != wantJob {
				t.Errorf("job = %q, want %q", job, wantJob)
			}
			if string(reserved) != wantReserved {
				t.Errorf("reserved = %q, want %q", reserved, wantReserved)
			}
		}
	}
	expectInvalid := func(wantJob string) func(t *testing.T, ctx context.Context, e *env) {
		return func(t *testing.T, ctx context.Context, e *env) {
			job, reserved, err := e.r.Pop(ctx, e.queue, until)
			var ie *InvalidJobError
			if !errors.Is(err, ErrInvalidJob) || !errors.As(err, &ie) {
				t.Fatalf("err = %v, want an *InvalidJobError", err)
			}
			if string(job) != wantJob || reserved != nil || string(ie.Job) != wantJob || ie.Key != e.r.Keys(e.queue).Invalid || ie.Queue != e.queue {
				t.Errorf("job %q reserved %q err %+v", job, reserved, ie)
			}
		}
	}
	runCases(t, []opCase{{
		name: "S12 re-encoded by cjson exactly as Laravel's script does",
		seed: state{"queues:%Q": list(sampleS12, other), "queues:%Q:notify": ones(2)},
		run:  expectPop(sampleS12, sampleS12r),
		want: state{"queues:%Q": list(other), "queues:%Q:notify": ones(1), "queues:%Q:reserved": zset(sampleS12r, until)},
	}, {
		name: "S8 reserved copy equals S8r byte for byte",
		seed: state{"queues:%Q": list(sampleS8), "queues:%Q:notify": ones(1)},
		run:  expectPop(sampleS8, sampleS8r),
		want: state{"queues:%Q:reserved": zset(sampleS8r, until)},
	}, {
		name: "empty queue",
		seed: state{"queues:%Q:notify": ones(1), "queues:%Q:reserved": zset(sampleS12r, 5)},
		run:  expectPop("", ""),
		want: state{"queues:%Q:notify": ones(1), "queues:%Q:reserved": zset(sampleS12r, 5)},
	}, {
		name: "no notify token left",
		seed: state{"queues:%Q": list(sampleS12)},
		run:  expectPop(sampleS12, sampleS12r),
		want: state{"queues:%Q:reserved": zset(sampleS12r, until)},
	}, {
		name: "numeric-string attempts coerced to a number",
		seed: state{"queues:%Q": list(`{"attempts":"2"}`), "queues:%Q:notify": ones(1)},
		run:  expectPop(`{"attempts":"2"}`, `{"attempts":3}`),
		want: state{"queues:%Q:reserved": zset(`{"attempts":3}`, until)},
	}, {
		name: "missing attempts moved to the invalid list, not lost",
		seed: state{"queues:%Q": list(noAttempts, other), "queues:%Q:notify": ones(2)},
		run:  expectInvalid(noAttempts),
		want: state{"queues:%Q": list(other), "queues:%Q:notify": ones(1), "queues:%Q:invalid": list(noAttempts)},
	}, {
		name: "not JSON",
		seed: state{"queues:%Q": list("not json"), "queues:%Q:notify": ones(1)},
		run:  expectInvalid("not json"),
		want: state{"queues:%Q:invalid": list("not json")},
	}, {
		name: "JSON array",
		seed: state{"queues:%Q": list(`[1,2]`), "queues:%Q:invalid": list("older")},
		run:  expectInvalid(`[1,2]`),
		want: state{"queues:%Q:invalid": list("older", `[1,2]`)},
	}, {
		name: "non-numeric attempts",
		seed: state{"queues:%Q": list(`{"attempts":"x"}`, `{"attempts":true}`)},
		run:  expectInvalid(`{"attempts":"x"}`),
		want: state{"queues:%Q": list(`{"attempts":true}`), "queues:%Q:invalid": list(`{"attempts":"x"}`)},
	}, {
		name: "JSON string",
		seed: state{"queues:%Q": list(`"attempts"`)},
		run:  expectInvalid(`"attempts"`),
		want: state{"queues:%Q:invalid": list(`"attempts"`)},
	}})
}

func TestPopReEncoding(t *testing.T) {
	// The reserved copy is what Redis' cjson makes of the payload; a few effects the
	// consumer has to live with, checked on the real server.
	e := newEnv(t, variants()[0])
	ctx := context.Background()
	for _, tc := range []struct{ in, want string }{
		{`{"attempts":0,"a":"x/y"}`, `x\/y`},
		{`{"attempts":0,"a":"\u00e9"}`, "\u00e9"},
		{`{"attempts":0,"a":100000000000000}`, `1e+14`},
		{`{"attempts":0,"a":99999999999999}`, `99999999999999`},
		{`{"attempts":0,"a":[]}`, `"a":{}`},
		{`{"attempts":0,"a":[1,null,true]}`, `"a":[1,null,true]`},
		{`{"attempts":0.5}`, `"attempts":1.5`},
	} {
		mustNoErr(t, e.r.Push(ctx, e.queue, []byte(tc.in)))
		job, reserved, err := e.r.Pop(ctx, e.queue, until)
		mustNoErr(t, err)
		if string(job) != tc.in || !bytes.Contains(reserved, []byte(tc.want)) {
			t.Errorf("%s: job %s reserved %s, want it to contain %s", tc.in, job, reserved, tc.want)
		}
		var v map[string]any
		if err := json.Unmarshal(reserved, &v); err != nil {
			t.Errorf("%s: reserved copy is not JSON: %v", tc.in, err)
		}
	}
}

func TestPopMany(t *testing.T) {
	a := `{"id":"a","attempts":0}`
	b := `{"id":"b","attempts":4}`
	c := `{"id":"c","attempts":0}`
	bad := `{"id":"bad"}`
	runCases(t, []opCase{{
		name: "takes up to max in order, invalid ones moved aside",
		seed: state{"queues:%Q": list(a, bad, b, c), "queues:%Q:notify": ones(4)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			jobs, err := e.r.PopMany(ctx, e.queue, until, 3)
			mustNoErr(t, err)
			got := make([]string, len(jobs))
			for i, j := range jobs {
				got[i] = string(j.Job) + " => " + string(j.Reserved)
				if (j.Invalid != nil) != (j.Reserved == nil) {
					t.Errorf("job %d: Invalid %v with Reserved %q", i, j.Invalid, j.Reserved)
				}
			}
			want := []string{a + ` => {"id":"a","attempts":1}`, bad + " => ", b + ` => {"id":"b","attempts":5}`}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("popped\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		},
		want: state{
			"queues:%Q":          list(c),
			"queues:%Q:notify":   ones(1),
			"queues:%Q:invalid":  list(bad),
			"queues:%Q:reserved": zset(`{"id":"a","attempts":1}`, until, `{"id":"b","attempts":5}`, until),
		},
	}, {
		name: "fewer jobs than max",
		seed: state{"queues:%Q": list(a), "queues:%Q:notify": ones(3)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			jobs, err := e.r.PopMany(ctx, e.queue, until, 10)
			mustNoErr(t, err)
			if len(jobs) != 1 || string(jobs[0].Job) != a {
				t.Errorf("jobs = %+v", jobs)
			}
		},
		want: state{"queues:%Q:notify": ones(2), "queues:%Q:reserved": zset(`{"id":"a","attempts":1}`, until)},
	}, {
		name: "max below one is refused",
		seed: state{"queues:%Q": list(a)},
		run: func(t *testing.T, ctx context.Context, e *env) {
			if _, err := e.r.PopMany(ctx, e.queue, until, 0); err == nil {
				t.Error("no error for max 0")
			}
		},
		want: state{"queues:%Q": list(a)},
	}})
}

func TestPopManyEqualsRepeatedPop(t *testing.T) {
	ctx := context.Background()
	seed := state{"queues:%Q": list(sampleS8, sampleS12, `{"attempts":"7","x":[]}`, `nope`, `{"attempts":1}`), "queues:%Q:notify": ones(4)}
	one, many := newEnv(t, variants()[0]), newEnv(t, variants()[0])
	one.seed(t, seed)
	many.seed(t, seed)
	var fromPop, fromMany []string
	for i := 0; i < 4; i++ {
		job, reserved, err := one.r.Pop(ctx, one.queue, until)
		if err != nil && !errors.Is(err, ErrInvalidJob) {
			t.Fatal(err)
		}
		fromPop = append(fromPop, string(job)+"|"+string(reserved))
	}
	jobs, err := many.r.PopMany(ctx, many.queue, until, 4)
	mustNoErr(t, err)
	for _, j := range jobs {
		fromMany = append(fromMany, string(j.Job)+"|"+string(j.Reserved))
	}
	if strings.Join(fromPop, "\n") != strings.Join(fromMany, "\n") {
		t.Errorf("Pop×4:\n%s\nPopMany(4):\n%s", strings.Join(fromPop, "\n"), strings.Join(fromMany, "\n"))
	}
	assertState(t, "PopMany vs Pop", many.dump(t), one.dump(t))
}
