// Package producer dispatches jobs from Go onto a Laravel Redis queue, writing what
// Laravel's own dispatch($job) writes for the same object, so that PHP workers
// (`php artisan queue:work`, Horizon) and laraq workers run them alike.
//
// A job is a Go struct standing for the PHP class: its PHPClass method names the class
// and php tags name its properties and their visibility (see phpser.Marshal). Embed
// Queueable last to get the properties `use InteractsWithQueue, Queueable;` adds:
//
//	type SendWelcome struct {
//		UserID int64  `php:"userId"`
//		Locale string `php:"locale,protected"`
//		producer.Queueable
//	}
//
//	func (SendWelcome) PHPClass() string { return `App\Jobs\SendWelcome` }
//
//	p, err := producer.New(rdb, producer.Config{Prefix: "laravel_database_"})
//	id, err := p.Dispatch(ctx, SendWelcome{UserID: 42}, producer.Queue("emails"), producer.Delay(time.Minute))
//
// The payload is byte for byte the one Laravel 8.83's Bus dispatcher and RedisQueue
// write for the same object (uuid and id aside): the serialized command, the envelope's
// key order and JSON escaping, and the metadata Queue::createObjectPayload derives from
// the command's public properties: tries → maxTries, maxExceptions, failOnTimeout,
// backoff (comma-joined, dates as seconds from now), timeout, retryUntil (a date as its
// Unix time). Only public properties count, as in PHP, where Laravel reads them from
// outside the class. Config.Version writes the envelope of later releases (12.11's
// createdAt and delay, 12.51's data.batchId, 13.x's deleteWhenMissingModels);
// Laravel.QueueableProps lists the trait properties of each release.
//
// # Where a job goes
//
// Like Bus\Dispatcher: the queue property names the queue (Config.DefaultQueue when
// null or empty), and a delay property that is set sends the job to queues:NAME:delayed
// with score now + delay (a date: its timestamp), otherwise it is pushed onto
// queues:NAME with one notify token. Queue, Delay, At and Connection set those
// properties as onQueue(), delay() and onConnection() do; PushOn and Later choose the
// destination without touching the command, as Queue::pushOn and Queue::later do.
// Chain fills the chained property the way ->chain() does; the worker that runs the job
// dispatches the next one.
//
// DispatchString queues a "Class@method" string job (a PHP worker calls
// Class::method($job, $data) and deletes it only if the handler does), PushRaw a
// payload written elsewhere after checking that a worker can reserve it, and
// DispatchBulk many jobs with few round trips.
//
// Prepare builds the message without pushing it; Config.NewID, NewUUID and Now make
// ids and times predictable in tests.
package producer
