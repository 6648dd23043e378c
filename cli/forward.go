package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/encryption"
	"github.com/laraq/laraq/internal/secret"
	laraqotel "github.com/laraq/laraq/otel"
	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpclass"
)

// forwarder sends jobs to an HTTP service.
type forwarder struct {
	url     string
	display string   // url with its secrets masked: the only form printed or stored
	secrets []string // the URL's secrets, scrubbed from what the service answers
	client  *http.Client
	// plainOffHost: the URL is http:// to a host that is not loopback, where a decrypted
	// ShouldBeEncrypted command would cross the network in clear text.
	plainOffHost bool
	insecure     bool               // --forward-insecure: send such jobs all the same
	classes      *phpclass.Manifest // --classes (forward_classes.go)
}

func newForwarder(raw string, concurrency int, insecure bool) (*forwarder, error) {
	display := secret.URL(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %s", display, secret.ParseError(raw, err))
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%s: want an http:// or https:// URL", display)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%s: no host", display)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = concurrency
	return &forwarder{url: raw, display: display, secrets: secret.Values(raw), client: &http.Client{Transport: tr},
		plainOffHost: u.Scheme == "http" && !isLoopback(u.Hostname()), insecure: insecure}, nil
}

// isLoopback reports whether host is this machine by its name or address. Names other
// than localhost are not resolved: what a name resolves to can change under the worker.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// errEncryptedOverPlainHTTP explains why an encrypted job is not forwarded.
func (f *forwarder) errEncryptedOverPlainHTTP(class string) error {
	return laraq.Fail(fmt.Errorf("forward to %s: refusing to send the ShouldBeEncrypted job %s: its command would travel decrypted over plain http:// to a host that is not loopback; "+
		"forward to an https:// URL or a loopback service, or pass --forward-insecure to send it anyway (the job is kept in the failed jobs for queue:retry)", f.display, class))
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
		if f.plainOffHost && !f.insecure && job.Payload != nil && encryption.IsEncryptedCommand(job.Payload.Command) {
			return f.errEncryptedOverPlainHTTP(job.Name)
		}
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
		return fmt.Errorf("forward to %s: %s", f.display, secret.Error(err, f.url))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Laraq-Job-Id", job.ID)
	req.Header.Set("X-Laraq-Job-Uuid", job.UUID)
	req.Header.Set("X-Laraq-Attempt", strconv.Itoa(job.Attempt))
	req.Header.Set("X-Laraq-Queue", job.Queue)
	req.Header.Set("X-Laraq-Connection", job.Connection)
	// The job's trace goes on to the service (W3C traceparent/tracestate): the attempt's
	// span under --otel, else the context PHP's instrumentation put in the payload.
	laraqotel.Headers(ctx, job.Raw, req.Header)
	resp, err := f.client.Do(req)
	if err != nil {
		// net/http's *url.Error quotes the URL with its query (tokens and all): name the
		// masked URL instead, and keep the cause (context.DeadlineExceeded: a timeout).
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return fmt.Errorf("forward to %s: %w", f.display, err)
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
	// The first line of the answer becomes the failed job's exception: a service that
	// echoes its request would otherwise write the URL's token there.
	return fmt.Errorf("forward to %s: %s: %s", f.display, resp.Status, secret.Scrub(strings.TrimSpace(line), f.secrets))
}
