package payload

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/laraq/laraq/internal/testenv"
	laravelpayloads "github.com/laraq/laraq/testdata/laravel-payloads"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// sample returns the real payload with this id from the repository's testdata/laravel-payloads
// (its README says where each comes from).
func sample(t testing.TB, id string) []byte {
	t.Helper()
	b, err := laravelpayloads.Read(id)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// sampleIDs lists the complete (valid JSON) payloads: all but the cut-off S3-partial.
func sampleIDs(t testing.TB) []string {
	t.Helper()
	var ids []string
	for _, id := range laravelpayloads.IDs() {
		if id != "S3-partial" {
			ids = append(ids, id)
		}
	}
	if len(ids) < 14 {
		t.Fatalf("payloads missing: only %v", ids)
	}
	return ids
}

func i64(v int64) *int64   { return &v }
func str(s string) *string { return &s }

// typed is the part of an Envelope that must not depend on key order or on which copy
// (original or reserved) was read.
type typed struct {
	UUID, DisplayName, Job             string
	MaxTries, MaxExceptions, Timeout   *int64
	FailOnTimeout                      bool
	Backoff                            *string
	RetryUntil, Delay, CreatedAt       *int64
	CommandName, Command, ID, PushedAt string
	BatchID                            *string
	Tags                               []string
	Name, BackoffSpec                  string
	IsObjectJob                        bool
}

func typedOf(e *Envelope) typed {
	return typed{e.UUID, e.DisplayName, e.Job, e.MaxTries, e.MaxExceptions, e.Timeout, e.FailOnTimeout,
		e.Backoff, e.RetryUntil, e.Delay, e.CreatedAt, e.CommandName, e.Command, e.ID, e.PushedAt,
		e.BatchID, e.Tags, e.Name(), e.BackoffSpec(), e.IsObjectJob()}
}

func mustParse(t testing.TB, raw []byte) *Envelope {
	t.Helper()
	e, err := Parse(raw)
	if err != nil {
		t.Fatalf("Parse(%.120s): %v", raw, err)
	}
	return e
}

func keys(e *Envelope) string {
	var k []string
	for _, f := range e.Fields {
		k = append(k, f.Key)
	}
	return strings.Join(k, ",")
}

func TestParseSamples(t *testing.T) {
	type want struct {
		typed
		attempts int64
		keys     string
		data     string // prefix of Data
		runnable bool
	}
	s1cmd := "O:18:\"App\\Jobs\\TestQueue\":7:{s:6:\"\x00*\x00job\";N;s:10:\"connection\";N;s:5:\"queue\";N;s:15:\"chainConnection\";N;s:10:\"chainQueue\";N;s:5:\"delay\";N;s:7:\"chained\";a:0:{}}"
	s1 := typed{DisplayName: `App\Jobs\TestQueue`, Job: CallQueuedHandler, CommandName: `App\Jobs\TestQueue`,
		Command: s1cmd, ID: "SNjXfGlL1QdB3G3CyCnfXI3pHjC2kNK8", Name: `App\Jobs\TestQueue`, IsObjectJob: true}
	s8 := typed{UUID: "12e2071b-a412-410a-8d8a-68721001ce01", DisplayName: `App\Jobs\TestJob`, Job: CallQueuedHandler,
		CommandName: `App\Jobs\TestJob`, Command: "O:16:\"App\\Jobs\\TestJob\":1:{s:5:\"queue\";s:7:\"default\";}",
		ID: "12e2071b-a412-410a-8d8a-68721001ce01", PushedAt: "1729411372.3932", Tags: []string{},
		Name: `App\Jobs\TestJob`, IsObjectJob: true}
	cases := map[string]want{
		"S1": {typed: s1, keys: "displayName,job,maxTries,timeout,timeoutAt,data,id,attempts", data: `{"commandName"`, runnable: true},
		"S1r": {typed: s1, attempts: 1, keys: "maxTries,attempts,timeout,job,id,timeoutAt,data,displayName",
			data: `{"command"`, runnable: true},
		"S2": {typed: typed{ID: "2XB76hubeCDCRqP74lsB326oftfwMmsY"}, attempts: 81441, keys: "id,attempts"},
		"S4": {typed: typed{UUID: "506634c9-5b95-4d29-ae69-173947e3f921", DisplayName: `App\Events\EnvioPagamentoVendaOnline`,
			Job: CallQueuedHandler, CommandName: `Illuminate\Broadcasting\BroadcastEvent`, Name: `App\Events\EnvioPagamentoVendaOnline`,
			IsObjectJob: true}, keys: "uuid,displayName,job,maxTries,maxExceptions,delay,timeout,timeoutAt,data", runnable: true},
		"S5": {typed: typed{UUID: "49a1baff-0308-4dcf-8e0b-c353d4ecfeb3", DisplayName: `App\Events\EnvioPagamentoVendaOnline`,
			Job: CallQueuedHandler, CommandName: `Illuminate\Broadcasting\BroadcastEvent`, Name: `App\Events\EnvioPagamentoVendaOnline`,
			IsObjectJob: true}, keys: "uuid,displayName,job,maxTries,maxExceptions,failOnTimeout,backoff,timeout,retryUntil,data", runnable: true},
		"S8": {typed: s8, keys: "uuid,displayName,job,maxTries,maxExceptions,failOnTimeout,backoff,timeout,retryUntil,data,id,attempts,type,tags,silenced,pushedAt",
			data: `{"commandName"`, runnable: true},
		"S8r": {typed: s8, attempts: 1, keys: "pushedAt,uuid,timeout,tags,id,maxExceptions,backoff,displayName,maxTries,type,failOnTimeout,silenced,retryUntil,data,job,attempts",
			data: `{"command"`, runnable: true},
		"S9": {typed: typed{UUID: "3d41ed5e-349a-4515-96ce-414d2f07c140", DisplayName: `App\Jobs\ProcessOcr`, Job: CallQueuedHandler,
			MaxTries: i64(3), Timeout: i64(300), CreatedAt: i64(1764164918), CommandName: `App\Jobs\ProcessOcr`,
			Name: `App\Jobs\ProcessOcr`, IsObjectJob: true},
			keys: "uuid,displayName,job,maxTries,maxExceptions,failOnTimeout,backoff,timeout,retryUntil,data,createdAt,delay", runnable: true},
		"S10": {typed: typed{UUID: "c8b19465-024e-4954-9620-af69a1035577", DisplayName: `Filament\Notifications\DatabaseNotification`,
			Job: CallQueuedHandler, CreatedAt: i64(1764608669), CommandName: `Illuminate\Notifications\SendQueuedNotifications`,
			Name: `Filament\Notifications\DatabaseNotification`, IsObjectJob: true}, runnable: true},
		"S11": {typed: typed{UUID: "a2216fc0-f376-437c-bacc-b514310a3d20", DisplayName: `App\Jobs\API\ABCP\ArticlesTotalLoader`,
			Job: CallQueuedHandler, MaxTries: i64(1), RetryUntil: i64(1642836534), CommandName: `App\Jobs\API\ABCP\ArticlesTotalLoader`,
			ID: "a2216fc0-f376-437c-bacc-b514310a3d20", PushedAt: "1642836474.4657", Tags: []string{}, Name: `App\Jobs\API\ABCP\ArticlesTotalLoader`,
			IsObjectJob: true}, runnable: true},
		"S12":  {typed: typed{Job: "X@y", ID: "r1", Name: "X@y"}, keys: "job,data,id,attempts,big", data: "[]", runnable: true},
		"S12r": {typed: typed{Job: "X@y", ID: "r1", Name: "X@y"}, attempts: 1, keys: "big,id,attempts,data,job", data: "{}", runnable: true},
	}
	seen := 0
	for _, name := range sampleIDs(t) {
		raw := sample(t, name)
		e := mustParse(t, raw)
		if !bytes.Equal(e.Raw, raw) || &e.Raw[0] != &raw[0] {
			t.Errorf("%s: Raw is not the input slice", name)
		}
		// Every field value is the exact sub-slice of Raw and they appear in order.
		off := 0
		for _, f := range e.Fields {
			i := bytes.Index(raw[off:], f.Value)
			if i < 0 {
				t.Errorf("%s: field %s value not found in order", name, f.Key)
				break
			}
			off += i + len(f.Value)
		}
		if (e.Runnable() == nil) != (name != "S2") {
			t.Errorf("%s: Runnable() = %v", name, e.Runnable())
		}
		w, ok := cases[name]
		if !ok {
			continue
		}
		seen++
		got := typedOf(e)
		if w.Command == "" {
			got.Command = "" // long commands are checked through prefix below
		}
		if !reflect.DeepEqual(got, w.typed) {
			t.Errorf("%s:\n got %+v\nwant %+v", name, got, w.typed)
		}
		if e.Attempts != w.attempts {
			t.Errorf("%s: attempts %d, want %d", name, e.Attempts, w.attempts)
		}
		if w.keys != "" && keys(e) != w.keys {
			t.Errorf("%s: keys %s\nwant %s", name, keys(e), w.keys)
		}
		if !strings.HasPrefix(string(e.Data), w.data) {
			t.Errorf("%s: data %.40s", name, e.Data)
		}
		if w.runnable != (e.Runnable() == nil) {
			t.Errorf("%s: Runnable %v", name, e.Runnable())
		}
	}
	if seen != len(cases) {
		t.Fatalf("checked %d of %d samples", seen, len(cases))
	}
}

// The reserved copy made by the pop script must read exactly like the original apart
// from attempts, although keys are scrambled, [] became {} and numbers were reformatted.
func TestParseReservedCopyReadsLikeOriginal(t *testing.T) {
	for _, pair := range [][2]string{{"S1", "S1r"}, {"S8", "S8r"}, {"S12", "S12r"}} {
		a, b := mustParse(t, sample(t, pair[0])), mustParse(t, sample(t, pair[1]))
		if !reflect.DeepEqual(typedOf(a), typedOf(b)) {
			t.Errorf("%s vs %s:\n%+v\n%+v", pair[0], pair[1], typedOf(a), typedOf(b))
		}
		if b.Attempts != a.Attempts+1 {
			t.Errorf("%s attempts %d → %d", pair[0], a.Attempts, b.Attempts)
		}
	}
	big, _ := mustParse(t, sample(t, "S12r")).Get("big")
	if string(big) != "1.2345678901234e+14" {
		t.Errorf("big = %s", big)
	}
}

func TestParseS7HorizonTelescope(t *testing.T) {
	e := mustParse(t, sample(t, "S7"))
	if e.ID != e.UUID || e.PushedAt != "1692298484.927" || e.Tags == nil || len(e.Tags) != 0 {
		t.Errorf("horizon fields: id %q uuid %q pushedAt %q tags %#v", e.ID, e.UUID, e.PushedAt, e.Tags)
	}
	if v, ok := e.Get("telescope_uuid"); !ok || string(v) != `"99e9e501-39b0-4883-ab08-83cbe5b54d47"` {
		t.Errorf("telescope_uuid %s %v", v, ok)
	}
	if v, ok := e.Get("silenced"); !ok || string(v) != "false" {
		t.Errorf("silenced %s", v)
	}
	if !strings.Contains(e.Command, `E:24:"App\Enums\Platform:Vimeo";`) || !strings.HasSuffix(e.Command, `s:7:"batchId";s:36:"99e9e501-2e63-4bac-92e8-e3130bf2e016";}`) {
		t.Errorf("command not decoded: %.80s…", e.Command)
	}
	if e.BatchID != nil {
		t.Errorf("data.batchId is a 12.51 key, got %q", *e.BatchID)
	}
}

// S3 is cut off mid-string: the error must say where.
func TestParsePartialSampleS3(t *testing.T) {
	raw := sample(t, "S3-partial")
	_, err := Parse(raw)
	var pe *Error
	if !errors.As(err, &pe) {
		t.Fatalf("want *Error, got %v", err)
	}
	if pe.Path != "data.command" || !strings.Contains(pe.Msg, "unterminated string") {
		t.Errorf("error %v", err)
	}
	if pe.Offset != bytes.Index(raw, []byte(`"O:59:`)) {
		t.Errorf("offset %d, string starts at %d", pe.Offset, bytes.Index(raw, []byte(`"O:59:`)))
	}
}
