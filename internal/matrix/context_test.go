package matrix

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// ctxStep is App\Jobs\ChainStep of testdata/php/jobs.php.
type ctxStep struct {
	Step int64 `php:"step"`
	laraq.Queueable
}

func (ctxStep) PHPClass() string { return `App\Jobs\ChainStep` }

// PHPSerializesModels: the PHP class does not use SerializesModels, so every property is
// serialized, defaults included.
func (ctxStep) PHPSerializesModels() bool { return false }

// TestChainCarriesLaravelContext: on 11, 12 and 13, a chain dispatched with Laravel
// Context (data and hidden) is continued once by that release's Worker and once by a
// laraq worker from the same bytes; the next job is the same byte for byte (uuid and id
// aside), context included, and the Go handler reads the context with JobInfo.Context.
func TestChainCarriesLaravelContext(t *testing.T) {
	srv := testenv.RedisServer(t)
	for _, major := range []int{11, 12, 13} {
		t.Run(testenv.MajorName(major), func(t *testing.T) {
			t.Parallel()
			testenv.NeedPeer(t, major)
			ctx := context.Background()
			peer := testenv.Peer(t, major)
			t0 := int64(testkit.ParityT0)
			phpPrefix, goPrefix := testenv.Prefix(t), testenv.Prefix(t)
			penv := testenv.PHPEnv{Major: major, Redis: srv, Prefix: phpPrefix, Record: testkit.RecordFile(t)}
			d := penv.Dispatch(t, []string{fmt.Sprint("--now=", t0)},
				`{"class":"App\\Jobs\\ChainStep","props":{"step":1},"chain":[{"class":"App\\Jobs\\ChainStep","props":{"step":2}}],`+
					`"context":{"tenant":"acme","user_id":7,"path":"a/b é"},"hidden_context":{"secret":"s3"}}`)[0]
			if !strings.Contains(d.Payload, `"illuminate:log:context":{"data":{"tenant":"s:4:\"acme\";"`) {
				t.Fatalf("Laravel %s dispatched no context: %s", peer.Tag, d.Payload)
			}
			client := srv.Client(t, 0)
			copyKeys(t, ctx, client, phpPrefix, client, goPrefix)

			testkit.RunWorker(t, penv, time.Minute, "--max-jobs=1", "--stop-when-empty", "--sleep=0", fmt.Sprint("--now=", t0+10))
			var seen laraq.LogContext
			jobs := laraq.NewJobs()
			laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[ctxStep]) error {
				var err error
				seen, err = j.Context()
				return err
			})
			w, err := testkit.NewWorker(client, testkit.Setup{Prefix: goPrefix, Registry: jobs, Failed: &testkit.MemStore{}, Release: testkit.PeerInfoRelease(t, peer),
				Now: func() time.Time { return time.Unix(t0+10, 0) }, MaxJobs: 1, StopWhenEmpty: true, Sleep: -1,
				MigrateInterval: -1, Cache: laraq.CacheStore{Disabled: true}, Logger: testkit.QuietLogger(t)})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Run(ctx); !errors.Is(err, laraq.ErrMaxJobs) {
				t.Fatal(err)
			}

			php, gos := testkit.Queued(t, ctx, srv, phpPrefix, t0+10), testkit.Queued(t, ctx, srv, goPrefix, t0+10)
			if testkit.Describe(php) != testkit.Describe(gos) {
				var where strings.Builder
				for k, a := range php {
					if b, ok := gos[k]; ok && a != b {
						fmt.Fprintf(&where, "  %s: %s\n", k, testkit.FirstDifference(a, b))
					}
				}
				t.Fatalf("Laravel %s and laraq continue the chain differently:\nPHP left\n%sGo left\n%s%s", peer.Tag, testkit.Describe(php), testkit.Describe(gos), where.String())
			}
			next := php["queues:default[0]"]
			if !strings.Contains(next, `"illuminate:log:context":{"data":{"tenant":"s:4:\"acme\";","user_id":"i:7;","path":"s:6:\"a\/b é\";"},"hidden":{"secret":"s:2:\"s3\";"}}`) {
				t.Fatalf("the next job carries no context:\n%s", testkit.Describe(php))
			}
			tenant, user, secret := seen.Data["tenant"], seen.Data["user_id"], seen.Hidden["secret"]
			if tenant == nil || tenant.Str() != "acme" || user == nil || user.Int() != 7 || secret == nil || secret.Str() != "s3" {
				t.Fatalf("the handler read the context %+v", seen)
			}
		})
	}
}

// Before 11.0 no worker carries a context: a payload that has one (pushed by an 11+ app
// sharing the queue) continues its chain without it on 10, as Laravel 10's worker does.
func TestChainDropsContextBefore11(t *testing.T) {
	const major = 10
	testenv.NeedPeer(t, major)
	srv := testenv.RedisServer(t)
	ctx := context.Background()
	peer := testenv.Peer(t, major)
	t0 := int64(testkit.ParityT0)
	phpPrefix, goPrefix := testenv.Prefix(t), testenv.Prefix(t)
	penv := testenv.PHPEnv{Major: major, Redis: srv, Prefix: phpPrefix, Record: testkit.RecordFile(t)}
	d := penv.Dispatch(t, []string{fmt.Sprint("--now=", t0)},
		`{"class":"App\\Jobs\\ChainStep","props":{"step":1},"chain":[{"class":"App\\Jobs\\ChainStep","props":{"step":2}}]}`)[0]
	withContext := strings.Replace(d.Payload, `,"id":"`, `,"illuminate:log:context":{"data":{"a":"i:1;"},"hidden":[]},"id":"`, 1)
	client := srv.Client(t, 0)
	for _, prefix := range []string{phpPrefix, goPrefix} {
		client.Del(ctx, prefix+"queues:default", prefix+"queues:default:notify")
		client.RPush(ctx, prefix+"queues:default", withContext)
	}
	testkit.RunWorker(t, penv, time.Minute, "--max-jobs=1", "--stop-when-empty", "--sleep=0", fmt.Sprint("--now=", t0+10))
	jobs := laraq.NewJobs()
	laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[ctxStep]) error { return nil })
	w, err := testkit.NewWorker(client, testkit.Setup{Prefix: goPrefix, Registry: jobs, Failed: &testkit.MemStore{}, Release: testkit.PeerInfoRelease(t, peer),
		Now: func() time.Time { return time.Unix(t0+10, 0) }, MaxJobs: 1, StopWhenEmpty: true, Sleep: -1,
		MigrateInterval: -1, Cache: laraq.CacheStore{Disabled: true}, Logger: testkit.QuietLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Run(ctx); !errors.Is(err, laraq.ErrMaxJobs) {
		t.Fatal(err)
	}
	php, gos := testkit.Queued(t, ctx, srv, phpPrefix, t0+10), testkit.Queued(t, ctx, srv, goPrefix, t0+10)
	if testkit.Describe(php) != testkit.Describe(gos) || strings.Contains(testkit.Describe(php), "illuminate:log:context") || len(php) == 0 {
		t.Fatalf("Laravel %s left\n%slaraq left\n%s", peer.Tag, testkit.Describe(php), testkit.Describe(gos))
	}
}
