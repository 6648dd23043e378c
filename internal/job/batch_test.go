package job

import (
	"encoding/json"
	"testing"

	"github.com/laraq/laraq/payload"
)

// TestBatchIDWithoutDecoding: a command that cannot hold the Batchable trait's batchId
// is not decoded to look for one; a command that holds it, public or among other
// properties, gives its id, as does data.batchId.
func TestBatchIDWithoutDecoding(t *testing.T) {
	for _, c := range []struct {
		name, command, dataBatchID, want string
		decoded                          bool
	}{
		{name: "no batch", command: `O:8:"App\Jobs":1:{s:1:"n";i:1;}`, decoded: false},
		{name: "batchId property", command: `O:8:"App\Jobs":2:{s:1:"n";i:1;s:7:"batchId";s:3:"b-1";}`, want: "b-1", decoded: true},
		{name: "batchId null", command: `O:8:"App\Jobs":1:{s:7:"batchId";N;}`, decoded: true},
		{name: "a value that names it", command: `O:8:"App\Jobs":1:{s:1:"s";s:7:"batchId";}`, decoded: true},
		{name: "data.batchId", command: `O:8:"App\Jobs":1:{s:1:"n";i:1;}`, dataBatchID: "b-2", want: "b-2"},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := map[string]any{"commandName": `App\Jobs`, "command": c.command}
			if c.dataBatchID != "" {
				data["batchId"] = c.dataBatchID
			}
			raw, err := json.Marshal(map[string]any{"uuid": "u", "job": "Illuminate\\Queue\\CallQueuedHandler@call", "data": data, "attempts": 0})
			if err != nil {
				t.Fatal(err)
			}
			env, err := payload.Parse(raw)
			if err != nil {
				t.Fatal(err)
			}
			j := &JobInfo{Payload: env}
			if env.BatchID != nil {
				j.BatchID = *env.BatchID
			}
			if got := BatchIDOf(j); got != c.want {
				t.Errorf("batchID %q, want %q", got, c.want)
			}
			if j.cmdSet != c.decoded {
				t.Errorf("decoded %v, want %v", j.cmdSet, c.decoded)
			}
		})
	}
}
