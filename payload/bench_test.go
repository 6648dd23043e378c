package payload

import (
	"encoding/json"
	"strings"
	"testing"
)

// benchJob is a realistic ~2 KB object job: a job with a model identifier, a few
// scalar properties and the Queueable trait's properties, protected names included.
func benchJob() ObjectJob {
	var cmd strings.Builder
	cmd.WriteString(`O:28:"App\Jobs\GenerateMonthlyReport":14:{`)
	cmd.WriteString("s:7:\"\x00*\x00user\";O:45:\"Illuminate\\Contracts\\Database\\ModelIdentifier\":5:{s:5:\"class\";s:15:\"App\\Models\\User\";s:2:\"id\";i:4711;s:9:\"relations\";a:0:{}s:10:\"connection\";s:5:\"mysql\";s:15:\"collectionClass\";N;}")
	cmd.WriteString(`s:6:"period";s:7:"2024-10";s:6:"format";s:3:"pdf";s:9:"recipient";s:23:"finance/reports@acme.io";`)
	cmd.WriteString(`s:5:"title";s:31:"Rapport mensuel — Société Générale";s:7:"options";a:3:{s:6:"locale";s:5:"fr_FR";s:8:"currency";s:3:"EUR";s:6:"charts";b:1;}`)
	cmd.WriteString(`s:5:"tries";i:5;s:7:"backoff";a:3:{i:0;i:10;i:1;i:60;i:2;i:300;}s:7:"timeout";i:120;`)
	cmd.WriteString(`s:10:"connection";s:5:"redis";s:5:"queue";s:7:"reports";s:15:"chainConnection";N;s:10:"chainQueue";N;s:19:"chainCatchCallbacks";N;`)
	cmd.WriteString(`s:5:"delay";N;s:11:"afterCommit";N;s:10:"middleware";a:0:{}s:7:"chained";a:0:{}`)
	for cmd.Len() < 1700 {
		cmd.WriteString(`s:4:"note";s:40:"lorem ipsum dolor sit amet / consectetur";`)
	}
	cmd.WriteString("}")
	return ObjectJob{
		UUID: "3d41ed5e-349a-4515-96ce-414d2f07c140", ID: "SNjXfGlL1QdB3G3CyCnfXI3pHjC2kNK8",
		CommandName: `App\Jobs\GenerateMonthlyReport`, Command: cmd.String(),
		MaxTries: i64(5), Timeout: i64(120), Backoff: str("10,60,300"), RetryUntil: i64(1764164918),
	}
}

func benchPayload(b *testing.B) []byte {
	raw, err := BuildObject(benchJob(), Shape{})
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

func BenchmarkParse(b *testing.B) {
	raw := benchPayload(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseHorizonSample(b *testing.B) {
	raw := sample(b, "S7")
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// The encoding/json baselines show what the hand-written scanner saves.
func BenchmarkParseBaselineEncodingJSONMap(b *testing.B) {
	raw := benchPayload(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkParseBaselineEncodingJSONStruct(b *testing.B) {
	raw := benchPayload(b)
	type env struct {
		UUID, DisplayName, Job, ID string
		MaxTries, MaxExceptions    *int64
		Timeout, RetryUntil        *int64
		FailOnTimeout              bool
		Backoff                    *string
		Attempts                   int64
		Data                       struct{ CommandName, Command string }
	}
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		var e env
		if err := json.Unmarshal(raw, &e); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuildObject(b *testing.B) {
	j := benchJob()
	raw := benchPayload(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildObject(j, Shape{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkBuildObjectNewIDs(b *testing.B) {
	j := benchJob()
	j.UUID, j.ID = "", ""
	b.ReportAllocs()
	for b.Loop() {
		if _, err := BuildObject(j, Shape{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResetForRetry(b *testing.B) {
	raw := benchPayload(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ResetForRetry(raw); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckPushRaw(b *testing.B) {
	raw := benchPayload(b)
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if err := CheckPushRaw(raw); err != nil {
			b.Fatal(err)
		}
	}
}
