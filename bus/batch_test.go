package bus

import (
	"context"
	"slices"
	"testing"
	"time"
)

func TestParseOptions(t *testing.T) {
	closure := `O:47:"Laravel\SerializableClosure\SerializableClosure":1:{s:12:"serializable";O:46:"Laravel\SerializableClosure\Serializers\Signed":2:{s:12:"serializable";s:3:"x;y";s:4:"hash";s:3:"abc";}}`
	for _, tc := range []struct {
		in   string
		want Options
		err  bool
	}{
		{``, Options{}, false},
		{`a:0:{}`, Options{}, false},
		{`a:2:{s:13:"allowFailures";b:1;s:5:"queue";s:1:"q";}`, Options{AllowFailures: true}, false},
		// Arr::get(...) === true: a truthy non-bool does not allow failures.
		{`a:1:{s:13:"allowFailures";i:1;}`, Options{}, false},
		{`a:3:{s:4:"then";a:1:{i:0;` + closure + `}s:7:"finally";a:1:{i:0;` + closure + `}s:5:"catch";a:0:{}}`, Options{Callbacks: []string{"finally", "then"}}, false},
		{`s:3:"abc";`, Options{}, true},
		{`a:1:{`, Options{}, true},
	} {
		got, err := ParseOptions(tc.in)
		if (err != nil) != tc.err || got.AllowFailures != tc.want.AllowFailures || !slices.Equal(got.Callbacks, tc.want.Callbacks) {
			t.Errorf("ParseOptions(%q) = %+v, %v; want %+v (error %v)", tc.in, got, err, tc.want, tc.err)
		}
	}
}

// memRepo is a Repository in memory, as DatabaseBatchRepository would update the row.
type memRepo struct {
	b Batch
}

func (m *memRepo) Find(context.Context, string) (*Batch, error) { b := m.b; return &b, nil }
func (m *memRepo) DecrementPendingJobs(_ context.Context, _, _ string) (Counts, error) {
	m.b.PendingJobs--
	return Counts{m.b.PendingJobs, m.b.FailedJobs}, nil
}
func (m *memRepo) IncrementFailedJobs(_ context.Context, _, _ string) (Counts, error) {
	m.b.FailedJobs++
	return Counts{m.b.PendingJobs, m.b.FailedJobs}, nil
}
func (m *memRepo) MarkAsFinished(_ context.Context, _ string, now time.Time) error {
	m.b.FinishedAt = &now
	return nil
}
func (m *memRepo) Cancel(_ context.Context, _ string, now time.Time) error {
	m.b.CancelledAt, m.b.FinishedAt = &now, &now
	return nil
}
func (m *memRepo) Close() error { return nil }

// TestRecordJobs: Batch::recordSuccessfulJob / recordFailedJob, and the callbacks PHP
// would have run at each step.
func TestRecordJobs(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(1767225600, 0)
	cb := Options{Callbacks: []string{"catch", "finally", "progress", "then"}}
	repo := &memRepo{b: Batch{ID: "b", TotalJobs: 2, PendingJobs: 2, Options: cb}}
	out, err := RecordSuccessfulJob(ctx, repo, &repo.b, "u1", now)
	if err != nil || out.Finished || !slices.Equal(out.Callbacks, []string{"progress"}) {
		t.Fatalf("first success: %+v %v", out, err)
	}
	out, _ = RecordFailedJob(ctx, repo, &repo.b, "u2", now)
	if !out.Cancelled || repo.b.CancelledAt == nil || !slices.Equal(out.Callbacks, []string{"catch", "finally"}) {
		t.Fatalf("first failure of a strict batch: %+v", out)
	}

	allow := Options{AllowFailures: true, Callbacks: []string{"failure", "finally", "then"}}
	repo = &memRepo{b: Batch{ID: "b", TotalJobs: 2, PendingJobs: 2, Options: allow}}
	out, _ = RecordFailedJob(ctx, repo, &repo.b, "u1", now)
	if out.Cancelled || !slices.Equal(out.Callbacks, []string{"failure"}) {
		t.Fatalf("failure of a batch allowing failures: %+v", out)
	}
	out, _ = RecordSuccessfulJob(ctx, repo, &repo.b, "u2", now)
	if out.Finished || repo.b.FinishedAt != nil || !slices.Equal(out.Callbacks, []string{"finally"}) {
		t.Fatalf("last job of a batch with a failure: %+v (pending %d)", out, repo.b.PendingJobs)
	}

	repo = &memRepo{b: Batch{ID: "b", TotalJobs: 1, PendingJobs: 1, Options: allow}}
	out, _ = RecordSuccessfulJob(ctx, repo, &repo.b, "u1", now)
	if !out.Finished || repo.b.FinishedAt == nil || !repo.b.FinishedAt.Equal(now) || !slices.Equal(out.Callbacks, []string{"then", "finally"}) {
		t.Fatalf("last success: %+v", out)
	}
}

func FuzzParseOptions(f *testing.F) {
	f.Add(`a:2:{s:13:"allowFailures";b:1;s:4:"then";a:1:{i:0;O:1:"C":0:{}}}`)
	f.Add(`a:0:{}`)
	f.Fuzz(func(t *testing.T, s string) {
		o, err := ParseOptions(s)
		if err != nil && (o.AllowFailures || len(o.Callbacks) > 0) {
			t.Fatalf("an error with options %+v", o)
		}
	})
}
