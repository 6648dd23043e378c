package payload_test

import (
	"fmt"
	"strings"
	"time"

	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

type sendInvoice struct {
	Invoice phpser.ModelIdentifier `php:"invoice"`
	Note    string                 `php:"note"`
}

func (sendInvoice) PHPClass() string { return `App\Jobs\SendInvoice` }

// A job built in Go, prepared as Horizon's RedisQueue would push it: id = uuid, the
// type, the automatic tag of the Eloquent model it holds, silenced, pushedAt, and plain
// json_encode escaping (é becomes \u00e9).
func ExamplePrepareForHorizon() {
	command, _ := phpser.Marshal(sendInvoice{
		Invoice: phpser.ModelIdentifier{Class: `App\Models\Invoice`, ID: int64(1042), Relations: []string{}},
		Note:    "déjà",
	})
	raw, _ := payload.BuildObject(payload.ObjectJob{
		UUID:        "9a0c5d2e-1b7f-4c3a-8e6d-2f7a9b3c4d5e",
		ID:          "XrDPuYxPZ3hpgP5bK8vLm1JqW0aTn4Ez",
		CommandName: `App\Jobs\SendInvoice`,
		Command:     string(command),
	}, payload.Shape{})

	prepared, err := payload.PrepareForHorizon(raw, payload.HorizonPrepare{
		PushedAt:        time.Unix(1729411372, 393200000),
		SilencedClasses: []string{`App\Jobs\Ping`},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	out := string(prepared)
	fmt.Println(out[strings.Index(out, `d\u00e9j`):])
	// Output:
	// d\u00e9j\u00e0\";}"},"id":"9a0c5d2e-1b7f-4c3a-8e6d-2f7a9b3c4d5e","attempts":0,"type":"job","tags":["App\\Models\\Invoice:1042"],"silenced":false,"pushedAt":"1729411372.3932"}
}
