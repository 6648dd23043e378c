package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// body is a --forward body of a ChaosJob as `laraq work` sends it.
func body(key string, attempt int, actions ...string) []byte {
	acts, _ := json.Marshal(actions)
	return []byte(`{"id":"id-` + key + `","uuid":"u-` + key + `","attempt":` + string(rune('0'+attempt)) +
		`,"queue":"chaos","connection":"redis","name":"App\\Jobs\\ChaosJob","class":"App\\Jobs\\ChaosJob",` +
		`"payload":{"uuid":"u-` + key + `","data":{"commandName":"App\\Jobs\\ChaosJob","command":{"@class":"App\\Jobs\\ChaosJob","key":"` + key + `","actions":` + string(acts) + `}},"attempts":` + string(rune('0'+attempt-1)) + `}}`)
}

func TestRecorder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "journal")
	rec, err := NewRecorder(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	k := Keys("abcdef", "job", 6)
	post := func(ctx context.Context, b []byte) (*http.Response, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, rec.URL("go.1"), bytes.NewReader(b))
		req.Header.Set("Content-Type", "application/json")
		return http.DefaultClient.Do(req)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		body   []byte
		status int
		retry  string
	}{
		{body(k[0], 1, ActOK), http.StatusNoContent, ""},
		{body(k[1], 1, ActFail, ActOK), http.StatusInternalServerError, ""},
		{body(k[1], 2, ActFail, ActOK), http.StatusNoContent, ""},
		{body(k[2], 1, Release(7)), http.StatusServiceUnavailable, "7"},
		{body(k[3], 1, Sleep(30*time.Millisecond)), http.StatusNoContent, ""},
		// A hostile payload still forwarded: its key is found in the bytes.
		{[]byte(`{"id":"x","uuid":"","attempt":1,"payload":{"data":{"command":"O:3:\"Foo\":1:{s:1:\"k\";s:16:\"` + k[5] + `\";}"}}}`), http.StatusNoContent, ""},
	} {
		resp, err := post(ctx, tc.body)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("Retry-After") != tc.retry {
			t.Errorf("%s: %d Retry-After %q, want %d %q", tc.body[:40], resp.StatusCode, resp.Header.Get("Retry-After"), tc.status, tc.retry)
		}
	}
	// A hanging job ends when the worker gives up on it (its timeout).
	hctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = post(hctx, body(k[4], 1, ActHang))
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("hang: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for rec.Active() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	// Not a job at all: refused and reported.
	resp, err := post(ctx, []byte(`{"nothing": true}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || len(rec.Errors()) != 1 {
		t.Errorf("a body without key: %d, errors %v", resp.StatusCode, rec.Errors())
	}

	recs, _, err := ReadJournalFile(path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := Runs(recs)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, strings.TrimPrefix(r.Key, "cxabcdef-")+" a"+string(rune('0'+r.Attempt))+" "+r.Outcome)
		if r.Worker != "go.1" || !r.Ended() || r.End.Before(r.Start) {
			t.Errorf("run %+v", r)
		}
	}
	want := "job-0 a1 ok, job-1 a1 fail, job-1 a2 ok, job-2 a1 release, job-3 a1 ok, job-5 a1 ok, job-4 a1 cancelled"
	if strings.Join(got, ", ") != want {
		t.Errorf("runs\n got %s\nwant %s", strings.Join(got, ", "), want)
	}
}

// FuzzParseForwarded: the recorder reads whatever a worker forwards, hostile payloads
// included; it must give a key or an error, never panic.
func FuzzParseForwarded(f *testing.F) {
	f.Add(body("cxabcdef-job-1", 1, ActOK))
	f.Add([]byte(`{"payload":{"data":{"command":"not an object cxabcdef-x-2"}}}`))
	f.Add([]byte(`{"payload":{"data":{"command":{"key":7,"actions":"x"}}}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, cmd, err := parseForwarded(b)
		if err == nil && cmd.Key == "" {
			t.Fatal("no error and no key")
		}
		_ = actionFor(cmd.Actions, 1)
	})
}
