package laravel

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// clusterJob is App\Jobs\Scripted of testdata/php/jobs.php.
type clusterJob struct {
	Actions []string `php:"actions"`
	Tag     string   `php:"tag"`
	laraq.Queueable
}

func (clusterJob) PHPClass() string { return `App\Jobs\Scripted` }

// TestClusterHashTagsFrom13_5: on a real three-master Redis Cluster, Laravel 13.4.0 keeps
// queue keys as named (queue "default" cannot even be pushed: its keys span slots, so
// cluster applications name it "{default}") while 13.26.1 wraps the name,
// queues:{default}. Connect sets HashTags from 13.5 on a cluster, so laraq's worker and
// dispatcher reach the keys each release uses, in both directions.
func TestClusterHashTagsFrom13_5(t *testing.T) {
	addrs := testenv.RedisCluster(t)
	for _, tree := range []struct {
		name, tree string
		release    laraq.Release
		wraps      bool
	}{
		{"13.4.0", "13.4", laraq.Release{Major: 13, Minor: 4}, false},
		{"13.26.1", "", laraq.Release{Major: 13, Minor: 26, Patch: 1}, true},
	} {
		t.Run(tree.name, func(t *testing.T) {
			if tree.tree != "" {
				testenv.NeedPeerTree(t, 13, tree.tree)
			} else {
				testenv.NeedPeer(t, 13)
			}
			ctx := context.Background()
			prefix := testenv.Prefix(t)
			record := t.TempDir() + "/record.jsonl"
			nodes := strings.Join(addrs, ",")
			penv := testenv.PHPEnv{Major: 13, Tree: tree.tree, Prefix: prefix, Record: record,
				Extra: map[string]string{"LARAQ_REDIS_CLUSTER": nodes}}
			conn, err := Connect(ctx, App{LookupEnv: env("LARAQ_REDIS_CLUSTER", nodes, "REDIS_PREFIX", prefix,
				"QUEUE_FAILED_DRIVER", "null"), Release: tree.release})
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			if conn.HashTags != tree.wraps {
				t.Fatalf("Laravel %s on a cluster: HashTags = %v, want %v", tree.name, conn.HashTags, tree.wraps)
			}
			client := conn.Client.(*redis.ClusterClient)

			// The name the application gives the queue: ≤13.4 apps must tag it themselves.
			queue := "default"
			if !tree.wraps {
				queue = "{default}"
				// Laravel 13.4's push script for queue "default" names keys in different
				// slots: phpredis refuses it (a warning; the job is not queued).
				out := dispatchRaw(t, penv, `{"class":"App\\Jobs\\Scripted","props":{"actions":["ok"],"tag":"untagged"},"queue":"default"}`)
				if !strings.Contains(out, "All keys do not map to the same slot") {
					t.Fatalf("Laravel %s pushed queue default on a cluster: %s", tree.name, out)
				}
				d, err := laraq.NewDispatcher(conn)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := d.Dispatch(ctx, clusterJob{Actions: []string{"ok"}}, laraq.OnQueue("default")); err == nil ||
					!strings.Contains(err.Error(), "CROSSSLOT") {
					t.Fatalf("laraq as %s pushed queue default on a cluster: %v", tree.name, err)
				}
			}

			// PHP dispatches; the job is at queues:{default}; laraq's worker runs it.
			penv.Dispatch(t, nil, `{"class":"App\\Jobs\\Scripted","props":{"actions":["ok"],"tag":"from PHP"},"queue":"`+queue+`"}`)
			if n := client.LLen(ctx, prefix+"queues:{default}").Val(); n != 1 {
				t.Fatalf("Laravel %s: queues:{default} holds %d jobs, want 1", tree.name, n)
			}
			var ran []string
			jobs := laraq.NewJobs()
			laraq.Handle(jobs, func(ctx context.Context, j *laraq.Job[clusterJob]) error {
				ran = append(ran, j.Command.Tag)
				return nil
			})
			w, err := laraq.NewWorker(conn, jobs, laraq.WorkerConfig{Queues: []string{queue}, StopWhenEmpty: true, Sleep: 10 * time.Millisecond,
				Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			if err := w.Run(ctx); !errors.Is(err, laraq.ErrQueueEmpty) {
				t.Fatal(err)
			}
			if len(ran) != 1 || ran[0] != "from PHP" {
				t.Fatalf("laraq as %s ran %q", tree.name, ran)
			}

			// laraq dispatches; PHP's worker of that release runs it.
			d, err := laraq.NewDispatcher(conn)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Dispatch(ctx, clusterJob{Actions: []string{"ok"}, Tag: "from Go"}, laraq.OnQueue(queue)); err != nil {
				t.Fatal(err)
			}
			penv.Run(t, nil, "work.php", "--stop-when-empty", "--sleep=0", "--queue="+queue)
			recs := testenv.ReadRecords(t, record)
			if len(recs) != 1 || recs[0].Queue != queue || !strings.Contains(recs[0].Raw, "from Go") {
				t.Fatalf("Laravel %s's worker ran %+v", tree.name, recs)
			}
			for _, k := range []string{"queues:{default}", "queues:{default}:reserved", "queues:{default}:delayed"} {
				if n := client.Exists(ctx, prefix+k).Val(); n != 0 {
					t.Errorf("%s left behind", k)
				}
			}
		})
	}
}

// dispatchRaw runs dispatch.php with one request and returns whatever it printed, error
// lines included.
func dispatchRaw(t *testing.T, penv testenv.PHPEnv, request string) string {
	t.Helper()
	cmd := penv.Command("dispatch.php")
	cmd.Stdin = strings.NewReader(request + "\n")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	return out.String()
}
