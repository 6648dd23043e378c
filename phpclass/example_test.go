package phpclass_test

import (
	"fmt"
	"reflect"

	"github.com/laraq/laraq"
	"github.com/laraq/laraq/phpclass"
)

// SendReceipt is written by hand for App\Jobs\Classes\UniquePropJob (public $uniqueId;
// public $uniqueFor = 30; public $orderId; ShouldBeUnique), with two mistakes: a case
// typo and a forgotten default.
type SendReceipt struct {
	UniqueIDProp  any `php:"uniqueId,default=null"`
	UniqueForProp int `php:"uniqueFor"`
	OrderID       any `php:"orderID,default=null"`
	laraq.Queueable
}

func (SendReceipt) PHPClass() string { return `App\Jobs\Classes\UniquePropJob` }

// Check names each mistake with its fix; CheckTypes makes it an error, as a worker's
// start-up check does.
func ExampleCheck() {
	m, err := phpclass.Load("../testdata/phpclass/manifest-L13.json")
	if err != nil {
		panic(err)
	}
	for _, p := range phpclass.Check(m.Class(`App\Jobs\Classes\UniquePropJob`), reflect.TypeFor[SendReceipt]()) {
		where := p.Class
		if p.Property != "" {
			where = "$" + p.Property
		}
		fmt.Printf("%s (%s): %s\n", where, p.Kind, p.Fix)
	}
	// Output:
	// $uniqueFor (default): add default=30 to the tag
	// $orderId (case): tag it `php:"orderId"`
	// App\Jobs\Classes\UniquePropJob (unique): add the methods UniqueID() string and UniqueFor() time.Duration (laraq.UniqueJob)
}
