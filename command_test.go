package laraq_test

import (
	"context"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// The Dispatcher writes the trait properties of the connection's release, in its order,
// and leaves defaults out from 9.4 on for a class using SerializesModels; a value for a
// property the release lacks is refused rather than lost.
func TestCommandFollowsTheRelease(t *testing.T) {
	const head = `O:27:"App\Jobs\Matrix\DefaultsJob":`
	for _, tc := range []struct {
		release string
		job     any
		want    string
	}{
		{"8.83", testkit.MxDefaults{Changed: "x"}, head + `16:{s:5:"tries";i:3;s:5:"label";s:7:"default";s:5:"count";i:0;s:7:"changed";s:1:"x";` +
			`s:9:"\0*\0secret";s:4:"keep";s:35:"\0App\Jobs\Matrix\DefaultsJob\0hidden";a:1:{i:0;i:1;}` +
			`s:3:"job";N;s:10:"connection";N;s:5:"queue";N;s:15:"chainConnection";N;s:10:"chainQueue";N;s:19:"chainCatchCallbacks";N;` +
			`s:5:"delay";N;s:11:"afterCommit";N;s:10:"middleware";a:0:{}s:7:"chained";a:0:{}}`},
		{"9.3", testkit.MxDefaults{Changed: "x"}, head + `16:{s:5:"tries";i:3;`},
		{"9.4", testkit.MxDefaults{Changed: "x"}, head + `1:{s:7:"changed";s:1:"x";}`},
		{"13.26", testkit.MxDefaults{Changed: "x", Tries: 3, Label: "default"}, head + `1:{s:7:"changed";s:1:"x";}`},
		{"13.26", testkit.MxDefaults{Changed: "x", Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{DebounceOwner: "o", Queue: testkit.Str("q")}}},
			head + `3:{s:7:"changed";s:1:"x";s:5:"queue";s:1:"q";s:13:"debounceOwner";s:1:"o";}`},
		// Not using SerializesModels: every property, 11.2's order, 13.24's additions.
		{"11.1", testkit.MxChainStep{Step: int64(1)}, `O:18:"App\Jobs\ChainStep":11:{s:4:"step";i:1;s:3:"job";N;s:10:"connection";N;s:5:"queue";N;s:15:"chainConnection";N;`},
		{"11.2", testkit.MxChainStep{Step: int64(1)}, `O:18:"App\Jobs\ChainStep":11:{s:4:"step";i:1;s:3:"job";N;s:10:"connection";N;s:5:"queue";N;s:5:"delay";N;`},
		{"12.27", testkit.MxChainStep{Step: int64(1)}, `O:18:"App\Jobs\ChainStep":12:{s:4:"step";i:1;s:3:"job";N;s:10:"connection";N;s:5:"queue";N;s:5:"group";N;s:5:"delay";N;`},
		{"13.24", testkit.MxChainStep{Step: int64(1)}, `s:12:"deduplicator";N;s:13:"debounceOwner";s:0:"";s:15:"uniqueLockOwner";s:0:"";s:5:"delay";N;`},
		// ModelIdentifier: collectionClass from 9.26.
		{"9.25", testkit.MxModel{User: testkit.ModelID(int64(3))}, `O:45:"Illuminate\Contracts\Database\ModelIdentifier":4:{`},
		{"9.26", testkit.MxModel{User: testkit.ModelID(int64(3))}, `s:10:"connection";s:12:"laraq_models";s:15:"collectionClass";N;}`},
	} {
		p, _ := newTestProducer(t, testkit.DispatchSetup{Release: testkit.MustRelease(t, tc.release)})
		m, err := p.Prepare(tc.job)
		if err != nil {
			t.Fatalf("%s %T: %v", tc.release, tc.job, err)
		}
		if got := commandOf(t, m); !strings.Contains(got, tc.want) {
			t.Errorf("%s %T:\n got %q\nwant %q in it", tc.release, tc.job, got, tc.want)
		}
	}

	// The same values for a property 12.x does not have are refused.
	p, _ := newTestProducer(t, testkit.DispatchSetup{Release: testkit.MustRelease(t, "12.67")})
	job := testkit.MxDefaults{Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{UniqueLockOwner: "o"}}}
	if _, err := p.Prepare(job); err == nil || !strings.Contains(err.Error(), "uniqueLockOwner") {
		t.Errorf("uniqueLockOwner on 12.x: %v", err)
	}
	// 12.27 called messageGroup group.
	p, _ = newTestProducer(t, testkit.DispatchSetup{Release: testkit.MustRelease(t, "12.27")})
	m, err := p.Prepare(testkit.MxDefaults{Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{MessageGroup: testkit.Str("g")}}})
	if err != nil || !strings.Contains(commandOf(t, m), `s:5:"group";s:1:"g";`) {
		t.Errorf("messageGroup on 12.27: %v", err)
	}
}

// Options on a 9.4+ SerializesModels job whose trait properties were all left out put
// them back where the release declares them.
func TestOptionsOnAnOmittedTrait(t *testing.T) {
	p, _ := newTestProducer(t, testkit.DispatchSetup{Release: testkit.MustRelease(t, "11.56")})
	m, err := p.Prepare(testkit.MxDefaults{Changed: "x"}, laraq.OnQueue("q"), laraq.OnConnection(""), laraq.Chain(testkit.MxChainStep{Step: int64(2)}))
	if err != nil {
		t.Fatal(err)
	}
	got := commandOf(t, m)
	if !strings.HasPrefix(got, `O:27:"App\Jobs\Matrix\DefaultsJob":4:{s:7:"changed";s:1:"x";s:10:"connection";s:0:"";s:5:"queue";s:1:"q";s:7:"chained";a:1:{`) {
		t.Errorf("%q", got)
	}
}

// JobInfo.Unserialized fills in the class defaults of the declared Go type, in PHP's
// order, and is Value without one.
func TestUnserialized(t *testing.T) {
	rel := testkit.MustRelease(t, "11.56")
	p, _ := newTestProducer(t, testkit.DispatchSetup{Release: rel})
	m, err := p.Prepare(testkit.MxDefaults{Changed: "x", Count: 2})
	if err != nil {
		t.Fatal(err)
	}
	env, err := payload.Parse(m.Payload)
	if err != nil {
		t.Fatal(err)
	}
	keys := func(v *phpser.Value) string {
		var ks []string
		for _, e := range v.Entries() {
			n, _, _ := e.Key.Name()
			ks = append(ks, n)
		}
		return strings.Join(ks, ",")
	}
	for _, declare := range []bool{false, true} {
		jobs := laraq.NewJobs()
		var got *phpser.Value
		jobs.HandleFunc(`App\Jobs\Matrix\DefaultsJob`, func(ctx context.Context, j *laraq.JobInfo) error {
			var err error
			got, err = j.Unserialized()
			return err
		})
		if declare {
			laraq.Declare[testkit.MxDefaults](jobs)
		}
		if _, err := jobs.Run(context.Background(), &laraq.JobInfo{Class: env.CommandName, Payload: env}); err != nil {
			t.Fatal(err)
		}
		want := "count,changed"
		if declare {
			want = "tries,label,count,changed,secret,hidden,job,connection,queue,messageGroup,deduplicator,debounceOwner,uniqueLockOwner," +
				"delay,afterCommit,middleware,chained,chainConnection,chainQueue,chainCatchCallbacks"
		}
		if keys(got) != want {
			t.Errorf("declared %v: %s\nwant %s", declare, keys(got), want)
		}
	}

	defer func() {
		if recover() == nil {
			t.Error("declaring a class twice with different types did not panic")
		}
	}()
	jobs := laraq.NewJobs()
	laraq.Declare[testkit.MxDefaults](jobs)
	laraq.Declare[otherDefaults](jobs)
}

// otherDefaults is a second Go type for DefaultsJob.
type otherDefaults struct {
	X int `php:"x"`
}

func (otherDefaults) PHPClass() string { return `App\Jobs\Matrix\DefaultsJob` }

// BenchmarkPrepare is one Go-dispatched job on 8.x (every property written) and on 13.x
// (the object completed for the metadata, then serialized without its defaults).
func BenchmarkPrepare(b *testing.B) {
	for _, rel := range []string{"8.83", "13.26"} {
		b.Run(rel, func(b *testing.B) {
			r, _ := laraq.ParseRelease(rel)
			p, _ := newTestProducer(b, testkit.DispatchSetup{Release: r})
			job := testkit.MxDefaults{Changed: "x", Queueable: laraq.Queueable{BusQueueable: laraq.BusQueueable{Queue: testkit.Str("q")}}}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := p.Prepare(job); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzUnserialized gives JobInfo.Unserialized arbitrary commands of a declared class:
// it must never panic, and what it returns must serialize and decode back to an object.
func FuzzUnserialized(f *testing.F) {
	for _, s := range []string{
		`O:27:"App\Jobs\Matrix\DefaultsJob":1:{s:7:"changed";s:1:"x";}`,
		`O:27:"App\Jobs\Matrix\DefaultsJob":2:{s:5:"queue";s:1:"q";s:5:"tries";a:0:{}}`,
		`O:27:"App\Jobs\Matrix\DefaultsJob":2:{i:0;i:1;s:1:"x";r:1;}`,
		`a:1:{i:0;i:1;}`, `N;`, `garbage`,
	} {
		f.Add(s)
	}
	jobs := laraq.NewJobs()
	laraq.Declare[testkit.MxDefaults](jobs)
	var got *phpser.Value
	var gotErr error
	jobs.Fallback(func(ctx context.Context, j *laraq.JobInfo) error {
		got, gotErr = j.Unserialized()
		return nil
	})
	f.Fuzz(func(t *testing.T, command string) {
		if command == "" {
			return
		}
		raw, err := payload.BuildObject(payload.ObjectJob{CommandName: `App\Jobs\Matrix\DefaultsJob`, Command: command}, payload.Shape{})
		if err != nil {
			return
		}
		env, err := payload.Parse(raw)
		if err != nil {
			return
		}
		got, gotErr = nil, nil
		if _, err := jobs.Run(context.Background(), &laraq.JobInfo{Class: env.CommandName, Payload: env}); err != nil {
			t.Fatal(err)
		}
		if gotErr != nil {
			return
		}
		b, err := phpser.Encode(got)
		if err != nil {
			t.Fatalf("%q: Unserialized gave a value that does not serialize: %v", command, err)
		}
		if _, err := phpser.Decode(b); err != nil {
			t.Fatalf("%q: Unserialized wrote %q: %v", command, b, err)
		}
	})
}
