package payload_test

import (
	"encoding/json"
	"fmt"

	"github.com/laraq/laraq/payload"
)

// A reserved copy as Laravel's pop script leaves it in :reserved: keys scrambled by
// cjson, Horizon's empty tags list turned into {}, a 15-digit retryUntil in exponent
// form, attempts already incremented.
func ExampleParse() {
	reserved := []byte(`{"pushedAt":"1729411372.3932","tags":{},"retryUntil":1.7294113723e+14,"backoff":"1,5,10",` +
		`"data":{"command":"O:16:\"App\\Jobs\\TestJob\":1:{s:5:\"queue\";s:7:\"default\";}","commandName":"App\\Jobs\\TestJob"},` +
		`"displayName":"App\\Jobs\\TestJob","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":3,` +
		`"uuid":"12e2071b-a412-410a-8d8a-68721001ce01","id":"12e2071b-a412-410a-8d8a-68721001ce01","attempts":2}`)

	e, err := payload.Parse(reserved)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("name:", e.Name())
	fmt.Println("class:", e.CommandName, "object job:", e.IsObjectJob())
	fmt.Println("command:", e.Command)
	fmt.Println("maxTries:", *e.MaxTries, "attempts:", e.Attempts, "retryUntil:", *e.RetryUntil)
	fmt.Println("backoff:", e.BackoffSpec(), "tags:", len(e.Tags), "pushedAt:", e.PushedAt)
	fmt.Println("raw kept:", len(e.Raw) == len(reserved))
	// Output:
	// name: App\Jobs\TestJob
	// class: App\Jobs\TestJob object job: true
	// command: O:16:"App\Jobs\TestJob":1:{s:5:"queue";s:7:"default";}
	// maxTries: 3 attempts: 2 retryUntil: 172941137230000
	// backoff: 1,5,10 tags: 0 pushedAt: 1729411372.3932
	// raw kept: true
}

// Errors name the field and the byte offset.
func ExampleParse_error() {
	_, err := payload.Parse([]byte(`{"job":"App\\Jobs\\X@handle","maxTries":2.5,"attempts":0}`))
	fmt.Println(err)
	// Output:
	// payload: maxTries (byte 40): 2.5 is not an integer
}

func ExampleBuildObject() {
	tries, timeout := int64(3), int64(120)
	backoff := payload.JoinBackoff([]int64{10, 60})
	raw, err := payload.BuildObject(payload.ObjectJob{
		UUID:        "3d41ed5e-349a-4515-96ce-414d2f07c140", // normally left empty: a new v4 uuid
		ID:          "SNjXfGlL1QdB3G3CyCnfXI3pHjC2kNK8",     // normally left empty: Str::random(32)
		CommandName: `App\Jobs\SendInvoice`,
		Command:     "O:20:\"App\\Jobs\\SendInvoice\":1:{s:9:\"\x00*\x00number\";s:9:\"2024/0042\";}",
		MaxTries:    &tries,
		Timeout:     &timeout,
		Backoff:     &backoff,
	}, payload.Shape{})
	fmt.Println(string(raw), err)
	// Output:
	// {"uuid":"3d41ed5e-349a-4515-96ce-414d2f07c140","displayName":"App\\Jobs\\SendInvoice","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":3,"maxExceptions":null,"failOnTimeout":false,"backoff":"10,60","timeout":120,"retryUntil":null,"data":{"commandName":"App\\Jobs\\SendInvoice","command":"O:20:\"App\\Jobs\\SendInvoice\":1:{s:9:\"\u0000*\u0000number\";s:9:\"2024\/0042\";}"},"id":"SNjXfGlL1QdB3G3CyCnfXI3pHjC2kNK8","attempts":0} <nil>
}

func ExampleBuildString() {
	raw, err := payload.BuildString(`App\Handlers\Mailer@send`, json.RawMessage(`{"to":"zoë@example.com","cc":{}}`),
		payload.WithUUID("06dbc8de-e0af-42a1-9537-73279ddcdc09"), payload.WithID("hFmUXZFAJASlyBMVAytWZ3mQVQdr9Nf2"))
	fmt.Println(string(raw), err)
	// Output:
	// {"uuid":"06dbc8de-e0af-42a1-9537-73279ddcdc09","displayName":"App\\Handlers\\Mailer","job":"App\\Handlers\\Mailer@send","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"data":{"to":"zoë@example.com","cc":[]},"id":"hFmUXZFAJASlyBMVAytWZ3mQVQdr9Nf2","attempts":0} <nil>
}

// queue:retry re-pushes the stored payload with attempts reset, re-encoded by plain
// json_encode: the reserved copy's {} become [], non-ASCII is \u-escaped.
func ExampleResetForRetry() {
	stored := []byte(`{"big":1.2345678901234e+14,"id":"r1","attempts":3,"data":{},"job":"Mailer@send","note":"café"}`)
	out, err := payload.ResetForRetry(stored)
	fmt.Println(string(out), err)
	// Output:
	// {"big":123456789012340,"id":"r1","attempts":0,"data":[],"job":"Mailer@send","note":"caf\u00e9"} <nil>
}

func ExampleCheckPushRaw() {
	fmt.Println(payload.CheckPushRaw([]byte(`{"job":"Mailer@send","data":[],"attempts":0}`)))
	fmt.Println(payload.CheckPushRaw([]byte(`{"job":"Mailer@send","data":[]}`)))
	// Output:
	// <nil>
	// payload: attempts: missing: the pop script does arithmetic on attempts, fails after its LPOP and the job would be lost; push "attempts":0
}

// The worker's backoff: payload backoff, else the payload's delay (5.8–7.x retry delay,
// 12.11+ dispatch delay), else the worker's --backoff ("" here).
func ExampleEnvelope_BackoffSpec() {
	for _, raw := range []string{
		`{"backoff":"1,5,10","delay":30}`,
		`{"backoff":null,"delay":30}`,
		`{"backoff":null,"delay":null}`,
	} {
		e, _ := payload.Parse([]byte(raw))
		fmt.Printf("%q\n", e.BackoffSpec())
	}
	// Output:
	// "1,5,10"
	// "30"
	// ""
}
