<?php
// Job classes for the interop tests, loadable on every release bootstrap.php boots (8.83,
// 10-13): real Illuminate\Bus\Queueable,
// Illuminate\Queue\InteractsWithQueue and Illuminate\Queue\SerializesModels, an Eloquent
// model, PHP 8.1 enums. dispatch.php and work.php require this file and then every
// testdata/php/jobs_*.php, so more classes can live in files of their own.
//
// What a job reports (one JSON line appended to LARAQ_RECORD through laraq_record()):
//   {"kind":"object", "event":"handle", "class":FQCN, "id":getJobId(), "uuid":uuid(),
//    "attempts":attempts(), "queue":getQueue(), "connection":getConnectionName(),
//    "name":resolveName(), "raw":getRawBody(), "at":microtime(true),
//    "props":[{"k":"<mangled property name>","v":<canon>}...]}
//   props lists every property of the unserialized command in PHP's order, by its
//   mangled name ("\u0000*\u0000x" protected, "\u0000Class\u0000x" private), except the
//   runtime `job` property; values are canon() (testdata/phpser/fixtures/canon.php):
//   lossless ints as decimal strings, floats as IEEE-754 bit hex, strings as base64.
//   Eloquent models are reported as {"t":"model","class":..,"key":canon,"attributes":canon},
//   Eloquent collections as {"t":"models","class":..,"items":[{"k":canon,"v":model}...]}.
//
// Classes (namespace App\Jobs unless said; all implement ShouldQueue):
//   PlainJob          public name, count, ratio, flag, nothing, tags, meta.
//                     use InteractsWithQueue, Queueable.
//   VisibilityJob     public pub, protected prot, private priv. + SerializesModels.
//   NestedJob         public list, map, object (App\Support\Address), deep, text.
//   NumbersJob        public negZero, big, tenth, maxInt, minInt, floats.
//   ModelJob          public user (App\Models\User -> ModelIdentifier), note. + SerializesModels.
//   CarbonJob         public when (Illuminate\Support\Carbon), date (DateTimeImmutable).
//   EnumJob           public status (App\Enums\Status, backed), suit (App\Enums\Suit, pure),
//                     public ?Status typed = null.
//   ChainStep         public step. For chains.
//   ReverseTraitsJob  public userId; use Queueable, InteractsWithQueue (job comes last).
//   MetaJob           public tries, maxExceptions, backoff, timeout, failOnTimeout,
//                     retryUntil (all null by default), label: the envelope's metadata.
//   NamedJob          public name; displayName() returns "Named: <name>".
//   Scripted          behaviour driven by its properties (see the class).
//   LegacyScripted    Scripted plus 5.8-7.x's retryAfter and timeoutAt properties.
//   StringJobs        handler of string jobs "App\Jobs\StringJobs@method" (see the class).
// App\Models\User: Eloquent model on connection "laraq_models", table users, an SQLite
// :memory: database each process seeds with ids 1..5 (name "user<id>", email
// "user<id>@example.com") by laraq_models_boot().
// App\Support\Address: public street, protected zip, private geo.

namespace {
    require_once __DIR__ . '/../phpser/fixtures/canon.php';

    use Illuminate\Container\Container;
    use Illuminate\Database\Capsule\Manager as Capsule;

    /**
     * Registers a callback laraq_jobs_boot() runs with the container: jobs_*.php files use it
     * to bind what their classes need (event listeners, a mail factory).
     */
    function laraq_on_jobs_boot(callable $fn): void
    {
        $GLOBALS['laraq_jobs_boot_hooks'][] = $fn;
    }

    /** Sets up the models' database and runs the jobs files' hooks; call after laraq_boot(). */
    function laraq_jobs_boot(): void
    {
        static $done = false;
        if ($done) {
            return;
        }
        $done = true;
        laraq_models_boot();
        foreach ($GLOBALS['laraq_jobs_boot_hooks'] ?? [] as $fn) {
            $fn(laraq_boot());
        }
    }

    /**
     * Sets up the SQLite database App\Models\User reads; call after laraq_boot(). The shared
     * peers' harness (every major but 8) seeds the same table on the same connection name.
     */
    function laraq_models_boot(): void
    {
        static $done = false;
        if ($done || LARAQ_PEER_MAJOR !== 8) {
            return;
        }
        $done = true;
        $capsule = new Capsule(new Container());
        $capsule->addConnection(['driver' => 'sqlite', 'database' => ':memory:', 'prefix' => ''], 'laraq_models');
        $capsule->bootEloquent();
        $db = $capsule->getConnection('laraq_models');
        $db->statement('create table users (id integer primary key, name text not null, email text not null)');
        for ($i = 1; $i <= 5; $i++) {
            $db->insert('insert into users (id, name, email) values (?, ?, ?)', [$i, "user$i", "user$i@example.com"]);
        }
    }

    /** canon() of a property value, with Eloquent models shortened to class, key and attributes. */
    function laraq_canon_value($v)
    {
        if ($v instanceof \Illuminate\Database\Eloquent\Model) {
            return ['t' => 'model', 'class' => get_class($v), 'key' => canon($v->getKey()), 'attributes' => canon($v->getAttributes())];
        }
        if ($v instanceof \Illuminate\Database\Eloquent\Collection) {
            $items = [];
            foreach ($v->all() as $k => $m) {
                $items[] = ['k' => canon($k), 'v' => laraq_canon_value($m)];
            }
            return ['t' => 'models', 'class' => get_class($v), 'items' => $items];
        }
        return canon($v);
    }

    /** Every property of a command in PHP's order, mangled names, except the runtime job. */
    function laraq_props(object $cmd): array
    {
        $out = [];
        foreach ((array) $cmd as $k => $v) {
            if ($k === 'job' || $k === "\0*\0job") { // public from 7.7, protected before
                continue;
            }
            $out[] = ['k' => (string) $k, 'v' => laraq_canon_value($v)];
        }
        return $out;
    }

    /** The record a job appends when it runs. */
    /** What OpenTelemetry's worker hook extracts: the trace keys of $job->payload(), when there. */
    function laraq_trace_context($job): array
    {
        $payload = $job ? $job->payload() : [];
        return array_filter([
            'traceparent' => $payload['traceparent'] ?? null,
            'tracestate' => $payload['tracestate'] ?? null,
        ], fn ($v) => $v !== null);
    }

    function laraq_job_record(object $cmd, array $extra = []): array
    {
        // InteractsWithQueue's job is protected before 7.7: read it from inside.
        $job = (fn () => $this->job ?? null)->call($cmd);
        return array_merge([
            'kind' => 'object',
            'event' => 'handle',
            'class' => get_class($cmd),
            'id' => $job ? $job->getJobId() : null,
            'uuid' => $job && method_exists($job, 'uuid') ? $job->uuid() : null, // 7.x+
            'attempts' => $job ? $job->attempts() : null,
            'queue' => $job ? $job->getQueue() : null,
            'connection' => $job ? $job->getConnectionName() : null,
            'name' => $job ? $job->resolveName() : null,
            'raw' => $job ? $job->getRawBody() : null,
            'at' => microtime(true),
            'props' => laraq_props($cmd),
        ], laraq_trace_context($job), $extra);
    }
}

namespace App\Enums {
    enum Status: string
    {
        case Active = 'active';
        case Suspended = 'suspended';
    }

    enum Suit
    {
        case Hearts;
        case Spades;
    }
}

namespace App\Models {
    use Illuminate\Database\Eloquent\Model;

    class User extends Model
    {
        protected $connection = 'laraq_models';
        protected $table = 'users';
        protected $guarded = [];
        public $timestamps = false;
    }
}

namespace App\Support {
    class Address
    {
        public $street;
        protected $zip;
        private $geo;
    }
}

namespace App\Jobs {
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;
    use Illuminate\Queue\SerializesModels;

    /** handle() records what the job received. */
    trait RecordsWhatItGot
    {
        public function handle()
        {
            laraq_record(laraq_job_record($this));
        }
    }

    class PlainJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $name;
        public $count;
        public $ratio;
        public $flag;
        public $nothing;
        public $tags;
        public $meta;
    }

    class VisibilityJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

        public $pub;
        protected $prot;
        private $priv;
    }

    class NestedJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $list;
        public $map;
        public $object;
        public $deep;
        public $text;
    }

    class NumbersJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $negZero;
        public $big;
        public $tenth;
        public $maxInt;
        public $minInt;
        public $floats;
    }

    class ModelJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

        public $user;
        public $note;
    }

    class CarbonJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $when;
        public $date;
    }

    class EnumJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $status;
        public $suit;
        public ?\App\Enums\Status $typed = null;
    }

    class ChainStep implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $step;
    }

    class ReverseTraitsJob implements ShouldQueue
    {
        use Queueable, InteractsWithQueue, RecordsWhatItGot;

        public $userId;
    }

    class MetaJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $tries;
        public $maxExceptions;
        public $backoff;
        public $timeout;
        public $failOnTimeout;
        public $retryUntil;
        public $label;
    }

    class NamedJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $name;

        public function displayName()
        {
            return 'Named: ' . $this->name;
        }
    }

    /**
     * A job whose behaviour is scripted by its properties, for failure scenarios.
     *
     * actions: list of steps, one per attempt (attempt N runs actions[N-1]; the last one
     * repeats). A step is a string:
     *   "ok"           return normally (CallQueuedHandler deletes the job)
     *   "throw[:msg]"  throw RuntimeException(msg)
     *   "release[:n]"  $this->release(n) (default 0)
     *   "fail[:msg]"   $this->fail(new RuntimeException(msg))
     *   "delete"       $this->delete()
     *   "sleep:s"      sleep s seconds (may be fractional), then return normally
     *   "exit[:code]"  end the worker process at once (a crash mid-job)
     * Each run appends the usual record plus "action"; failed() appends
     * {"kind":"object","event":"failed","class":...,"tag":...,"exception":FQCN,"message":...}.
     * tries/maxExceptions/backoff/timeout/failOnTimeout/retryUntil are ordinary public
     * properties and so feed the envelope's metadata (null: absent).
     */
    class Scripted implements ShouldQueue
    {
        use InteractsWithQueue, Queueable;

        public $actions = ['ok'];
        public $tag;
        public $tries;
        public $maxExceptions;
        public $backoff;
        public $timeout;
        public $failOnTimeout;
        public $retryUntil;

        public function handle()
        {
            $actions = array_values((array) $this->actions) ?: ['ok'];
            $n = max(1, $this->attempts());
            $action = (string) $actions[min($n, count($actions)) - 1];
            [$verb, $arg] = array_pad(explode(':', $action, 2), 2, null);
            laraq_record(laraq_job_record($this, ['action' => $action]));
            switch ($verb) {
                case 'ok':
                    return;
                case 'throw':
                    throw new \RuntimeException($arg ?? "scripted failure on attempt $n");
                case 'release':
                    $this->release((int) ($arg ?? 0));
                    return;
                case 'fail':
                    $this->fail(new \RuntimeException($arg ?? "scripted fail on attempt $n"));
                    return;
                case 'delete':
                    $this->delete();
                    return;
                case 'sleep':
                    usleep((int) round(((float) $arg) * 1e6));
                    return;
                case 'exit':
                    exit((int) ($arg ?? 1));
                default:
                    throw new \InvalidArgumentException("unknown scripted action $action");
            }
        }

        public function failed($e)
        {
            laraq_record([
                'kind' => 'object', 'event' => 'failed', 'class' => static::class, 'tag' => $this->tag,
                'exception' => $e ? get_class($e) : null, 'message' => $e ? $e->getMessage() : null,
            ]);
        }
    }

    /**
     * Scripted with 5.8-7.x's names for the retry delay and the expiry as public
     * properties, retryAfter and timeoutAt (null: absent): those releases write them as the
     * payload's delay and timeoutAt; 8.0+ reads neither.
     */
    class LegacyScripted extends Scripted
    {
        public $retryAfter;
        public $timeoutAt;
    }

    /**
     * Handler of string jobs (Queue::push('App\Jobs\StringJobs@method', $data)). The PHP
     * worker calls method($job, $data) and, unlike object jobs, never deletes the job by
     * itself. Methods:
     *   deletes (and fire, the default method)  record, then $job->delete()
     *   keeps                                   record only: the job stays reserved
     *   releases                                record, then $job->release(data.delay ?? 0)
     *   throws                                  record, then throw RuntimeException
     * Record: {"kind":"string","event":"handle","method":..,"id","uuid","attempts","queue",
     * "connection","name","raw","at","data":canon(data)}; failed($data, $e, $uuid) appends
     * {"kind":"string","event":"failed","uuid":..,"exception":..,"message":..,"data":canon}.
     */
    class StringJobs
    {
        private function record($job, $data, string $method): void
        {
            laraq_record([
                'kind' => 'string', 'event' => 'handle', 'class' => static::class, 'method' => $method,
                'id' => $job->getJobId(), 'uuid' => method_exists($job, 'uuid') ? $job->uuid() : null, 'attempts' => $job->attempts(),
                'queue' => $job->getQueue(), 'connection' => $job->getConnectionName(),
                'name' => $job->resolveName(), 'raw' => $job->getRawBody(), 'at' => microtime(true),
                'data' => canon($data),
            ]);
        }

        public function fire($job, $data)
        {
            $this->record($job, $data, 'fire');
            $job->delete();
        }

        public function deletes($job, $data)
        {
            $this->record($job, $data, 'deletes');
            $job->delete();
        }

        public function keeps($job, $data)
        {
            $this->record($job, $data, 'keeps');
        }

        public function releases($job, $data)
        {
            $this->record($job, $data, 'releases');
            $job->release((int) (is_array($data) ? ($data['delay'] ?? 0) : 0));
        }

        public function throws($job, $data)
        {
            $this->record($job, $data, 'throws');
            throw new \RuntimeException('string job failure');
        }

        public function failed($data, $e, $uuid)
        {
            laraq_record([
                'kind' => 'string', 'event' => 'failed', 'class' => static::class, 'uuid' => $uuid,
                'exception' => $e ? get_class($e) : null, 'message' => $e ? $e->getMessage() : null,
                'data' => canon($data),
            ]);
        }
    }
}
