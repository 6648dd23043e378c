package phpser_test

import (
	"fmt"
	"time"

	"github.com/laraq/laraq/phpser"
)

func ExampleDecode() {
	v, err := phpser.Decode([]byte("O:15:\"App\\Jobs\\Resize\":2:{s:4:\"path\";s:9:\"a/b.png\";s:8:\"\x00*\x00width\";i:640;}"))
	fmt.Println(v, err)
	v, err = phpser.Decode([]byte(`O:15:"App\Jobs\Resize":2:{s:4:"path";s:7:"a/b.png";s:8:"` + "\x00*\x00" + `width";i:640;}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(v.Class())
	for _, e := range v.Entries() {
		name, vis, _ := e.Key.Name()
		fmt.Println(vis, name, e.Value.String())
	}
	// Output:
	// <nil> phpser: expected '"' after 9 bytes, found 's' at offset 51
	// App\Jobs\Resize
	// public path a/b.png
	// protected width int(640)
}

// SendInvoice is the Go side of a Laravel job class.
type SendInvoice struct {
	Invoice phpser.ModelIdentifier `php:"invoice,protected"` // SerializesModels' stand-in for the model
	Copies  int                    `php:"copies"`
	Due     time.Time              `php:"due"`
}

func (SendInvoice) PHPClass() string { return `App\Jobs\SendInvoice` }

func ExampleUnmarshal() {
	// data.command of a job dispatched as new SendInvoice($invoice, 2, now()).
	command := "O:20:\"App\\Jobs\\SendInvoice\":3:{" +
		"s:10:\"\x00*\x00invoice\";O:45:\"Illuminate\\Contracts\\Database\\ModelIdentifier\":5:{" +
		"s:5:\"class\";s:18:\"App\\Models\\Invoice\";s:2:\"id\";i:1042;s:9:\"relations\";a:1:{i:0;s:5:\"lines\";}" +
		"s:10:\"connection\";s:5:\"mysql\";s:15:\"collectionClass\";N;}" +
		"s:6:\"copies\";i:2;" +
		"s:3:\"due\";O:25:\"Illuminate\\Support\\Carbon\":3:{s:4:\"date\";s:26:\"2024-03-05 06:07:08.000000\";" +
		"s:13:\"timezone_type\";i:3;s:8:\"timezone\";s:3:\"UTC\";}}"
	var job SendInvoice
	if err := phpser.Unmarshal([]byte(command), &job); err != nil {
		panic(err)
	}
	fmt.Println(job.Invoice.Class, job.Invoice.ID, job.Invoice.Relations, *job.Invoice.Connection)
	fmt.Println(job.Copies, job.Due)

	var wrong struct {
		Copies string `php:"copies"`
	}
	fmt.Println(phpser.Unmarshal([]byte(command), &wrong))
	// Output:
	// App\Models\Invoice 1042 [lines] mysql
	// 2 2024-03-05 06:07:08 +0000 UTC
	// phpser: cannot unmarshal PHP int into Go string at App\Jobs\SendInvoice.copies (offset 266)
}

func ExampleMarshal() {
	conn := "mysql"
	job := SendInvoice{
		Invoice: phpser.ModelIdentifier{Class: `App\Models\Invoice`, ID: 1042, Relations: []string{}, Connection: &conn},
		Copies:  1,
		Due:     time.Date(2024, 3, 5, 6, 7, 8, 0, time.UTC),
	}
	b, err := phpser.Marshal(job)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%q\n", b)
	// Output:
	// "O:20:\"App\\Jobs\\SendInvoice\":3:{s:10:\"\x00*\x00invoice\";O:45:\"Illuminate\\Contracts\\Database\\ModelIdentifier\":4:{s:5:\"class\";s:18:\"App\\Models\\Invoice\";s:2:\"id\";i:1042;s:9:\"relations\";a:0:{}s:10:\"connection\";s:5:\"mysql\";}s:6:\"copies\";i:1;s:3:\"due\";O:25:\"Illuminate\\Support\\Carbon\":3:{s:4:\"date\";s:26:\"2024-03-05 06:07:08.000000\";s:13:\"timezone_type\";i:3;s:8:\"timezone\";s:3:\"UTC\";}}"
}

func ExampleMarshalReadable() {
	v, err := phpser.Decode([]byte("a:4:{s:3:\"job\";O:13:\"App\\Jobs\\Ping\":2:{s:7:\"\x00*\x00host\";s:9:\"localhost\";s:5:\"ratio\";d:1;}" +
		"s:4:\"tags\";a:2:{i:0;s:1:\"a\";i:1;s:1:\"b\";}s:4:\"mode\";E:14:\"App\\Mode:Quick\";s:3:\"bin\";s:2:\"\xff\x00\";}"))
	if err != nil {
		panic(err)
	}
	out, err := phpser.MarshalReadableIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	fmt.Println(string(out))
	back, _ := phpser.UnmarshalReadable(out)
	b, _ := phpser.Encode(back)
	fmt.Printf("%q\n", b)
	// Output:
	// {
	//   "job": {
	//     "@class": "App\\Jobs\\Ping",
	//     "host": "localhost",
	//     "ratio": 1.0
	//   },
	//   "tags": [
	//     "a",
	//     "b"
	//   ],
	//   "mode": {
	//     "@enum": "App\\Mode:Quick"
	//   },
	//   "bin": {
	//     "@binary": "/wA="
	//   }
	// }
	// "a:4:{s:3:\"job\";O:13:\"App\\Jobs\\Ping\":2:{s:4:\"host\";s:9:\"localhost\";s:5:\"ratio\";d:1;}s:4:\"tags\";a:2:{i:0;s:1:\"a\";i:1;s:1:\"b\";}s:4:\"mode\";E:14:\"App\\Mode:Quick\";s:3:\"bin\";s:2:\"\xff\x00\";}"
}

// ShipOrder declares the defaults of its PHP class:
//
//	class ShipOrder implements ShouldQueue {
//	    use Queueable;                      // Illuminate\Foundation\Queue\Queueable (11.15+)
//	    public $tries = 3;
//	    public $backoff = [10, 60];
//	    protected $carrier = 'dhl';
//	    public function __construct(public int $orderId, public $note = null) {}
//	}
type ShipOrder struct {
	Tries   int     `php:"tries,default=3"`
	Backoff []int   `php:"backoff,default=[10,60]"`
	Carrier string  `php:"carrier,protected,default=\"dhl\""`
	OrderID int     `php:"orderId"`            // a typed promoted property has no default
	Note    *string `php:"note,default=null"`  // an untyped one defaults to null
	Queue   *string `php:"queue,default=null"` // one of Queueable's properties
	Chained []any   `php:"chained,default=[]"` // another
}

func (ShipOrder) PHPClass() string { return `App\Jobs\ShipOrder` }

func ExampleEncoder() {
	// new ShipOrder(7) as Laravel 9.4+ serializes it: SerializesModels leaves out every
	// property still at its declared default.
	laravel94 := phpser.Encoder{OmitDefaults: true, ZeroMeansDefault: true}
	b, _ := laravel94.Marshal(ShipOrder{OrderID: 7})
	fmt.Printf("%q\n", b)

	queue := "shipping"
	b, _ = laravel94.Marshal(ShipOrder{OrderID: 7, Tries: 5, Queue: &queue})
	fmt.Printf("%q\n", b)

	// Laravel 8 writes every property; zero values still stand for the defaults.
	b, _ = phpser.Encoder{ZeroMeansDefault: true}.Marshal(ShipOrder{OrderID: 7})
	fmt.Printf("%q\n", b)
	// Output:
	// "O:18:\"App\\Jobs\\ShipOrder\":1:{s:7:\"orderId\";i:7;}"
	// "O:18:\"App\\Jobs\\ShipOrder\":3:{s:5:\"tries\";i:5;s:7:\"orderId\";i:7;s:5:\"queue\";s:8:\"shipping\";}"
	// "O:18:\"App\\Jobs\\ShipOrder\":7:{s:5:\"tries\";i:3;s:7:\"backoff\";a:2:{i:0;i:10;i:1;i:60;}s:10:\"\x00*\x00carrier\";s:3:\"dhl\";s:7:\"orderId\";i:7;s:4:\"note\";N;s:5:\"queue\";N;s:7:\"chained\";a:0:{}}"
}

func ExampleUnmarshal_classDefaults() {
	// What Laravel 11 queues for new ShipOrder(7): only the property that has no default.
	var job ShipOrder
	if err := phpser.Unmarshal([]byte(`O:18:"App\Jobs\ShipOrder":1:{s:7:"orderId";i:7;}`), &job); err != nil {
		panic(err)
	}
	// The rest is what PHP's unserialize() gives them: the class defaults.
	fmt.Println(job.OrderID, job.Tries, job.Backoff, job.Carrier, job.Note, job.Chained)
	// Output:
	// 7 3 [10 60] dhl <nil> []
}

func ExampleDefaults() {
	// The payload's maxTries comes from the job's $tries, even when SerializesModels
	// left it out of the command.
	d, err := phpser.Defaults(ShipOrder{})
	if err != nil {
		panic(err)
	}
	tries, _ := d.Prop("tries")
	carrier, _ := d.Prop("carrier")
	fmt.Println(d.Class(), d.Len(), tries.Int(), carrier.Str())
	// Output:
	// App\Jobs\ShipOrder 6 3 dhl
}
