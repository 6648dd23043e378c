package laraq_test

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/laraq/laraq"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/laraq/laraq/payload"
	"github.com/laraq/laraq/phpser"
)

// SendWelcome stands for
//
//	namespace App\Jobs;
//	class SendWelcome implements ShouldQueue {
//	    use Dispatchable, InteractsWithQueue, Queueable, SerializesModels;
//	    public $userId;
//	    protected $locale;
//	    public $tries = 3;
//	}
type SendWelcome struct {
	UserID int64  `php:"userId"`
	Locale string `php:"locale,protected"`
	Tries  int64  `php:"tries"`
	laraq.Queueable
}

func (SendWelcome) PHPClass() string { return `App\Jobs\SendWelcome` }

// exampleDispatcher returns a dispatcher on an in-memory Redis with fixed ids and clock,
// writing what Laravel 8.83 writes.
func exampleDispatcher(prefix string) (*laraq.Dispatcher, *redis.Client, func()) {
	mr, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	client := redis.NewClient(&redis.Options{Addr: mr.Addr()})
	conn := &laraq.Connection{Client: client, Prefix: prefix, Release: laraq.Release{Major: 8, Minor: 83}}
	p, err := laraq.NewDispatcher(conn,
		laraq.WithClock(func() time.Time { return time.Unix(1700000000, 0) }),
		laraq.WithIDs(func() string { return "W3fT0kq2xYbZ9aLmN4pR7sUvC1dE5gHj" }, func() string { return "9a3c1f52-7d4e-4b8a-9c2d-0e6f1a2b3c4d" }))
	if err != nil {
		panic(err)
	}
	return p, client, func() { client.Close(); mr.Close() }
}

func ExampleDispatcher_Dispatch() {
	ctx := context.Background()
	p, client, done := exampleDispatcher("laravel_database_")
	defer done()

	id, err := p.Dispatch(ctx, SendWelcome{UserID: 42, Locale: "de", Tries: 3}, laraq.OnQueue("emails"))
	if err != nil {
		panic(err)
	}
	fmt.Println("id:", id)
	raw, _ := client.LIndex(ctx, "laravel_database_queues:emails", 0).Result()
	fmt.Println(strings.ReplaceAll(raw, `\u0000`, `\0`))
	// Output:
	// id: W3fT0kq2xYbZ9aLmN4pR7sUvC1dE5gHj
	// {"uuid":"9a3c1f52-7d4e-4b8a-9c2d-0e6f1a2b3c4d","displayName":"App\\Jobs\\SendWelcome","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":3,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":null,"data":{"commandName":"App\\Jobs\\SendWelcome","command":"O:20:\"App\\Jobs\\SendWelcome\":13:{s:6:\"userId\";i:42;s:9:\"\0*\0locale\";s:2:\"de\";s:5:\"tries\";i:3;s:3:\"job\";N;s:10:\"connection\";N;s:5:\"queue\";s:6:\"emails\";s:15:\"chainConnection\";N;s:10:\"chainQueue\";N;s:19:\"chainCatchCallbacks\";N;s:5:\"delay\";N;s:11:\"afterCommit\";N;s:10:\"middleware\";a:0:{}s:7:\"chained\";a:0:{}}"},"id":"W3fT0kq2xYbZ9aLmN4pR7sUvC1dE5gHj","attempts":0}
}

func ExampleDelay() {
	ctx := context.Background()
	p, client, done := exampleDispatcher("")
	defer done()

	// ->delay(90): the delay property is set and the job waits in :delayed until
	// now + 90 s, when a worker's pop moves it to the ready list.
	if _, err := p.Dispatch(ctx, SendWelcome{UserID: 7}, laraq.Delay(90*time.Second)); err != nil {
		panic(err)
	}
	z, _ := client.ZRangeWithScores(ctx, "queues:default:delayed", 0, -1).Result()
	env, _ := payload.Parse([]byte(z[0].Member.(string)))
	fmt.Println("score:", int64(z[0].Score))
	fmt.Println("delay property:", strings.Contains(env.Command, `s:5:"delay";i:90;`))
	// Output:
	// score: 1700000090
	// delay property: true
}

func ExampleDispatcher_DispatchString() {
	ctx := context.Background()
	p, client, done := exampleDispatcher("")
	defer done()

	// The PHP handler must call $job->delete() itself.
	if _, err := p.DispatchString(ctx, `App\Handlers\Ping@handle`, map[string]any{"host": "db1"}); err != nil {
		panic(err)
	}
	raw, _ := client.LIndex(ctx, "queues:default", 0).Result()
	fmt.Println(raw)
	// Output:
	// {"uuid":"9a3c1f52-7d4e-4b8a-9c2d-0e6f1a2b3c4d","displayName":"App\\Handlers\\Ping","job":"App\\Handlers\\Ping@handle","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"data":{"host":"db1"},"id":"W3fT0kq2xYbZ9aLmN4pR7sUvC1dE5gHj","attempts":0}
}

func ExampleChain() {
	p, _, done := exampleDispatcher("")
	defer done()

	// Bus::chain([new SendWelcome(1), new SendWelcome(2)]): the second job travels,
	// serialized, in the first one's chained property.
	m, err := p.Prepare(SendWelcome{UserID: 1}, laraq.Chain(SendWelcome{UserID: 2}))
	if err != nil {
		panic(err)
	}
	env, _ := payload.Parse(m.Payload)
	i := strings.Index(env.Command, `s:7:"chained"`)
	fmt.Println(strings.ReplaceAll(env.Command[i:i+60], "\x00", `\0`), "…")
	// Output:
	// s:7:"chained";a:1:{i:0;s:288:"O:20:"App\Jobs\SendWelcome":13 …
}

func ExampleRelease_QueueableProps() {
	for _, v := range []string{"5.8", "7.30", "8.83", "11.2", "12.51", "13.24"} {
		lv, _ := laraq.ParseRelease(v)
		var names []string
		for _, e := range lv.QueueableProps() {
			name, vis, _ := e.Key.Name()
			if vis == phpser.Protected {
				name = "*" + name // protected
			}
			names = append(names, name)
		}
		fmt.Printf("%-5s %s\n", v, strings.Join(names, " "))
		fmt.Printf("      %+v\n", lv.Shape())
	}
	// Output:
	// 5.8   *job connection queue chainConnection chainQueue delay chained
	//       {CreatedAt:false BatchID:false DeleteWhenMissingModels:false NoFailOnTimeout:true RetryDelay:true NoUUID:true EscapeUnicode:true}
	// 7.30  job connection queue chainConnection chainQueue delay middleware chained
	//       {CreatedAt:false BatchID:false DeleteWhenMissingModels:false NoFailOnTimeout:true RetryDelay:true NoUUID:false EscapeUnicode:true}
	// 8.83  job connection queue chainConnection chainQueue chainCatchCallbacks delay afterCommit middleware chained
	//       {CreatedAt:false BatchID:false DeleteWhenMissingModels:false NoFailOnTimeout:false RetryDelay:false NoUUID:false EscapeUnicode:false}
	// 11.2  job connection queue delay afterCommit middleware chained chainConnection chainQueue chainCatchCallbacks
	//       {CreatedAt:false BatchID:false DeleteWhenMissingModels:false NoFailOnTimeout:false RetryDelay:false NoUUID:false EscapeUnicode:false}
	// 12.51 job connection queue messageGroup deduplicator delay afterCommit middleware chained chainConnection chainQueue chainCatchCallbacks
	//       {CreatedAt:true BatchID:true DeleteWhenMissingModels:false NoFailOnTimeout:false RetryDelay:false NoUUID:false EscapeUnicode:false}
	// 13.24 job connection queue messageGroup deduplicator debounceOwner uniqueLockOwner delay afterCommit middleware chained chainConnection chainQueue chainCatchCallbacks
	//       {CreatedAt:true BatchID:true DeleteWhenMissingModels:true NoFailOnTimeout:false RetryDelay:false NoUUID:false EscapeUnicode:false}
}
