package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpclass"
)

// forwarder sends jobs to an HTTP service.
type forwarder struct {
	url     string
	client  *http.Client
	classes *phpclass.Manifest // --classes (forward_classes.go)
}

func newForwarder(url string, concurrency int) (*forwarder, error) {
	req, err := http.NewRequest(http.MethodPost, url, nil)
	if err != nil {
		return nil, err
	}
	if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
		return nil, fmt.Errorf("%q: want an http:// or https:// URL", url)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = concurrency
	return &forwarder{url: url, client: &http.Client{Transport: tr}}, nil
}

// forwardRequest is the body --forward POSTs.
type forwardRequest struct {
	ID         string          `json:"id"`
	UUID       string          `json:"uuid"`
	Attempt    int             `json:"attempt"`
	Queue      string          `json:"queue"`
	Connection string          `json:"connection"`
	Name       string          `json:"name"`
	Class      string          `json:"class"`
	Payload    json.RawMessage `json:"payload"`
	ClassFacts *classFacts     `json:"class_facts,omitempty"`
}

// Handle posts the job and maps the answer to an outcome. The request ends with ctx,
// i.e. at the job's timeout.
func (f *forwarder) Handle(ctx context.Context, job *laraq.JobInfo) error {
	var opts []payload.ReadableOption
	if d := job.Decrypter(); d != nil {
		opts = append(opts, payload.WithDecrypter(d))
	}
	readable, _, err := payload.Readable(job.Raw, opts...)
	if err != nil {
		return &laraq.DecodeError{Class: job.Class, Path: "payload", Err: err}
	}
	body, err := json.Marshal(forwardRequest{
		ID: job.ID, UUID: job.UUID, Attempt: job.Attempt, Queue: job.Queue, Connection: job.Connection,
		Name: job.Name, Class: job.Class, Payload: readable, ClassFacts: f.factsOf(job),
	})
	if err != nil {
		return fmt.Errorf("forward: encoding the request: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, f.url, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("forward: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Laraq-Job-Id", job.ID)
	req.Header.Set("X-Laraq-Job-Uuid", job.UUID)
	req.Header.Set("X-Laraq-Attempt", strconv.Itoa(job.Attempt))
	req.Header.Set("X-Laraq-Queue", job.Queue)
	req.Header.Set("X-Laraq-Connection", job.Connection)
	resp, err := f.client.Do(req)
	if err != nil {
		return fmt.Errorf("forward to %s: %w", f.url, err)
	}
	defer resp.Body.Close()
	noteUniqueID(job, resp)
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
		return nil
	}
	if ra := resp.Header.Get("Retry-After"); ra != "" {
		if secs, err := strconv.Atoi(strings.TrimSpace(ra)); err == nil && secs >= 0 {
			return laraq.ReleaseAfter(time.Duration(secs) * time.Second)
		}
	}
	line, _ := bufio.NewReader(io.LimitReader(resp.Body, 4096)).ReadString('\n')
	return fmt.Errorf("forward to %s: %s: %s", f.url, resp.Status, strings.TrimSpace(line))
}
