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
