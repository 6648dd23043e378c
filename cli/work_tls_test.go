package cli

import (
	"bytes"
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/internal/testenv"
)

// TestWorkOverTLS: Laravel dispatches on a redis-server's plain port and `laraq work
// --redis rediss://…` runs the job through the same server's TLS port, trusting the CA
// the test made (LARAQ_REDIS_TLS_CA); with a CA that did not sign the certificate the
// worker exits at once with one line saying so.
func TestWorkOverTLS(t *testing.T) {
	testenv.NeedPHP(t)
	files := testenv.NewTLSFiles(t)
	r := testenv.PrivateTLSRedis(t, files)
	prefix, queue := testenv.Prefix(t), "tls"+testenv.RandomName(3)
	phpDispatchLines(t, testenv.PHPEnv{Redis: r, Prefix: prefix},
		[]any{map[string]any{"class": `App\Jobs\PlainJob`, "queue": queue, "props": map[string]any{"name": "over tls", "count": 1}}})

	reg := laraq.NewJobs()
	var got string
	handle(reg, `App\Jobs\PlainJob`, func(ctx context.Context, cmd *struct {
		Name string `php:"name"`
	}, job *laraq.JobInfo) error {
		got = cmd.Name
		return nil
	})
	url := "rediss://127.0.0.1:" + strconv.Itoa(r.TLSPort) + "/0"
	work := func(ca string) (string, string, int) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		var out, errOut bytes.Buffer
		env := map[string]string{"LARAQ_REDIS_TLS_CA": ca}
		rc := Main(ctx, []string{"work", "--redis", url, "--prefix", prefix, "--queue", queue, "--stop-when-empty", "--no-cache",
			"--sleep", "0", "--database", "null"}, WithIO(strings.NewReader(""), &out, &errOut), WithJobs(reg),
			WithGetenv(func(k string) string { return env[k] }))
		return out.String(), errOut.String(), rc
	}
	out, errOut, rc := work(files.CAFile)
	if rc != 0 || got != "over tls" || !strings.Contains(out, "DONE") {
		t.Fatalf("rc %d, handler got %q\n%s\n%s", rc, got, out, errOut)
	}
	out, errOut, rc = work(files.OtherCAFile)
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	if last := lines[len(lines)-1]; rc != 1 || strings.Contains(errOut, "worker started") ||
		!strings.HasPrefix(last, "laraq: redis TLS handshake failed: redis at "+url) || !strings.Contains(last, "signed by an authority this machine does not trust") {
		t.Errorf("untrusted certificate: rc %d, want 1 and the reason last:\n%s\n%s", rc, out, errOut)
	}
}
