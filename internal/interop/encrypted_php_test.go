package interop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/laraq/laraq/internal/testkit"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/encryption"
	"github.com/laraq/laraq/internal/testenv"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// TestEncryptedJobsAgainstPHP: on every release, PHP dispatches a ShouldBeEncrypted job
// and a Go worker with the application's key runs it, typed and untyped; with a wrong
// key or none the job fails as a PHP worker fails it (DecryptException "The MAC is
// invalid.", RuntimeException "Unable to extract job payload.") and the failed row
// keeps the payload as stored. A Go dispatch of a type that says ShouldBeEncrypted
// writes the same encrypted command PHP writes, and PHP's worker decrypts and runs it.
func TestEncryptedJobsAgainstPHP(t *testing.T) {
	t.Parallel()
	srv := testenv.RedisServer(t)
	testenv.ForEachMajor(t, func(t *testing.T, major int) {
		testenv.Since(t, major, testenv.Encrypted)
		ctx := context.Background()
		client := srv.Client(t, 0)
		prefix := testenv.Prefix(t)
		record := testkit.RecordFile(t)
		php := testenv.PHPEnv{Major: major, Redis: srv, Prefix: prefix, Record: record}
		rel := testkit.PeerRelease(t, major)
		q := "sec" + testenv.RandomName(4)
		secret := "s3cr3t ü \" ;}"
		props := `{"secret":` + testkit.JSONString(secret) + `}`
		sent := php.Dispatch(t, []string{"--now=" + itoa(testenv.CaptureNow)},
			`{"class":"App\\Jobs\\Matrix\\SecretJob","props":`+props+`,"queue":"`+q+`-ok"}`,
			`{"class":"App\\Jobs\\Matrix\\SecretJob","props":`+props+`,"queue":"`+q+`-raw"}`,
			`{"class":"App\\Jobs\\Matrix\\SecretJob","props":`+props+`,"queue":"`+q+`-wrong"}`,
			`{"class":"App\\Jobs\\Matrix\\SecretJob","props":`+props+`,"queue":"`+q+`-nokey"}`,
		)
		env, err := payload.Parse([]byte(sent[0].Payload))
		if err != nil || !encryption.IsEncryptedCommand(env.Command) {
			t.Fatalf("PHP's SecretJob payload is not encrypted: %.200s (%v)", sent[0].Payload, err)
		}

		// The right key: typed and untyped handlers get the command.
		var mu sync.Mutex
		got := map[string]string{}
		jobs := laraq.NewJobs()
		laraq.Handle(jobs, func(ctx context.Context, job *laraq.Job[testkit.SecretJob]) error {
			mu.Lock()
			defer mu.Unlock()
			got["typed"] = job.Command.Secret
			return nil
		})
		ok := &laraq.Connection{Client: client, Prefix: prefix, Release: rel, Encrypter: testkit.CaptureEncrypter(t)}
		g := testkit.StartGoWorker(t, ok, jobs, laraq.WorkerConfig{Queues: []string{q + "-ok"}})
		untyped := laraq.NewJobs()
		untyped.HandleFunc(`App\Jobs\Matrix\SecretJob`, func(ctx context.Context, job *laraq.JobInfo) error {
			v, err := job.Value()
			if err != nil {
				return err
			}
			s, _ := v.Prop("secret")
			mu.Lock()
			defer mu.Unlock()
			got["untyped"] = s.Str()
			return nil
		})
		gu := testkit.StartGoWorker(t, ok, untyped, laraq.WorkerConfig{Queues: []string{q + "-raw"}})
		testkit.WaitFor(t, 10*time.Second, "both encrypted jobs to run", func() bool {
			return g.Count(laraq.EventProcessed) == 1 && gu.Count(laraq.EventProcessed) == 1
		})
		if got["typed"] != secret || got["untyped"] != secret {
			t.Errorf("handlers got %q, want %q twice", got, secret)
		}

		// A wrong key, and none: the job fails with PHP's exception, its payload kept.
		other, _ := encryption.New([]byte(strings.Repeat("w", 32)), encryption.DefaultCipher)
		for _, c := range []struct {
			queue, sent string
			enc         *encryption.Encrypter
			want        string
		}{
			{q + "-wrong", sent[2].Payload, other, `Illuminate\Contracts\Encryption\DecryptException: The MAC is invalid. in `},
			{q + "-nokey", sent[3].Payload, nil, `RuntimeException: Unable to extract job payload. in `},
		} {
			store := &testkit.MemStore{}
			conn := &laraq.Connection{Client: client, Prefix: prefix, Release: rel, Encrypter: c.enc, Failed: testkit.LogStore{FailedLogger: store}}
			gw := testkit.StartGoWorker(t, conn, jobs, laraq.WorkerConfig{Queues: []string{c.queue}})
			testkit.WaitFor(t, 10*time.Second, "the job to fail", func() bool { return gw.Count(laraq.EventFailed) == 1 })
			gw.Stop(t)
			recs := store.All()
			if len(recs) != 1 || string(recs[0].Payload) != c.sent || !strings.HasPrefix(recs[0].Exception, c.want) {
				t.Errorf("%s: failed rows %+v, want one with the payload as dispatched and %q", c.queue, recs, c.want)
			}
			if strings.Contains(recs[0].Exception, testenv.CaptureAppKey[7:]) {
				t.Errorf("the key is in the exception")
			}
		}

		// Go dispatches: PHP's own command, encrypted by Go, decrypts to the same bytes,
		// and the envelope is PHP's (id and uuid aside).
		plain, err := testkit.CaptureEncrypter(t).DecryptCommand(env.Command)
		if err != nil {
			t.Fatal(err)
		}
		cmd, err := phpser.DecodeString(plain)
		if err != nil {
			t.Fatal(err)
		}
		d, err := laraq.NewDispatcher(ok, laraq.WithClock(func() time.Time { return time.Unix(testenv.CaptureNow, 0) }))
		if err != nil {
			t.Fatal(err)
		}
		m, err := d.Prepare(cmd, laraq.Encrypted(), laraq.PushOn(q+"-ok"))
		if err != nil {
			t.Fatal(err)
		}
		genv, err := payload.Parse(m.Payload)
		if err != nil {
			t.Fatal(err)
		}
		if gplain, err := testkit.CaptureEncrypter(t).DecryptCommand(genv.Command); err != nil || gplain != plain {
			t.Errorf("Go's encrypted command decrypts to %q (%v), want PHP's %q", gplain, err, plain)
		}
		if a, b := withoutIDs(t, m.Payload), withoutIDs(t, []byte(sent[0].Payload)); a != b {
			t.Errorf("Go's envelope\n%s\nPHP's\n%s", a, b)
		}

		// A Go type that says ShouldBeEncrypted: PHP's worker runs it.
		d, err = laraq.NewDispatcher(ok)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := d.Dispatch(ctx, testkit.SecretJob{Secret: secret}, laraq.OnQueue(q+"-php")); err != nil {
			t.Fatal(err)
		}
		raw, err := client.LIndex(ctx, prefix+"queues:"+q+"-php", 0).Result()
		if err != nil || strings.Contains(raw, "s3cr3t") {
			t.Fatalf("Go's payload shows the secret or is missing: %.200s %v", raw, err)
		}
		php.Run(t, nil, "work.php", "--stop-when-empty", "--sleep=0", "--queue="+q+"-php")
		recs := testenv.ReadRecords(t, record)
		if len(recs) != 1 || recs[0].Class != `App\Jobs\Matrix\SecretJob` || !strings.Contains(recs[0].Raw, raw[:40]) ||
			!strings.Contains(jsonOf(t, recs[0].Fields["props"]), base64.StdEncoding.EncodeToString([]byte(secret))) {
			t.Errorf("PHP ran %+v, want the Go dispatch with secret %q", recs, secret)
		}

		// Without an Encrypter the dispatcher refuses to write the secret in the clear.
		bare := &laraq.Connection{Client: client, Prefix: prefix, Release: rel}
		d, _ = laraq.NewDispatcher(bare)
		if _, err := d.Dispatch(ctx, testkit.SecretJob{Secret: secret}); err == nil || !strings.Contains(err.Error(), "no Encrypter") {
			t.Errorf("dispatch without an Encrypter: %v", err)
		}
	})
}

func itoa(n int64) string { b, _ := json.Marshal(n); return string(b) }

func jsonOf(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// withoutIDs is a payload with id, uuid and data.command blanked, for comparing
// envelopes whose random parts differ.
func withoutIDs(t testing.TB, raw []byte) string {
	t.Helper()
	doc, err := payload.DecodeValue(raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"id", "uuid"} {
		if doc.Get(k) != nil {
			doc.Set(k, payload.Value{Kind: payload.KindString})
		}
	}
	if data := doc.Get("data"); data != nil {
		data.Set("command", payload.Value{Kind: payload.KindString})
	}
	out, err := doc.AppendJSON(nil, payload.JSONUnescapedUnicode)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
