<?php
// Builds the payloads of Laravel releases newer than the installed 8.83 peer from the
// wire spec: each command is a real PHP object serialized by PHP's own serialize(), with
// the property lists and order of that release's traits (Queueable 11.2 reordering,
// 12.32 messageGroup/deduplicator, Batchable's batchId), SerializesModels' 9.4+ habit of
// leaving out properties that still hold their default, and ModelIdentifier's 9.26
// collectionClass. The envelope keys follow that release's Queue::createPayloadArray
// order and JSON flags (JSON_UNESCAPED_UNICODE since 8.82). uuids, ids and times are
// fixed, so the output is the same on every run.
//
// usage: php build_newer.php OUTDIR
// Run by `go test -run TestCompatibility -capture` from the repository root.

namespace Illuminate\Contracts\Database {
    // 9.26+ shape; the 9.4–9.25 fixture unsets collectionClass to get the older four.
    class ModelIdentifier
    {
        public $class;
        public $id;
        public $relations;
        public $connection;
        public $collectionClass;

        public function __construct($class, $id, array $relations, $connection, $collectionClass = null)
        {
            [$this->class, $this->id, $this->relations, $this->connection, $this->collectionClass] =
                [$class, $id, $relations, $connection, $collectionClass];
        }
    }
}

namespace App\Jobs {
    /**
     * A job using SerializesModels on 9.4+: __serialize writes only the properties whose
     * value differs from the declared default, by mangled name, in declaration order.
     */
    abstract class SerializesNonDefaults
    {
        public function __serialize(): array
        {
            $out = [];
            $defaults = (new \ReflectionClass($this))->getDefaultProperties();
            foreach ((new \ReflectionClass($this))->getProperties() as $p) {
                if ($p->isStatic()) {
                    continue;
                }
                $p->setAccessible(true);
                $v = $p->getValue($this);
                if (array_key_exists($p->getName(), $defaults) && $defaults[$p->getName()] === $v) {
                    continue;
                }
                $name = $p->getName();
                if ($p->isProtected()) {
                    $name = "\0*\0" . $name;
                } elseif ($p->isPrivate()) {
                    $name = "\0" . get_class($this) . "\0" . $name;
                }
                $out[$name] = $v;
            }
            return $out;
        }
    }

    /** 9.4–11.1 traits: InteractsWithQueue's job, then Queueable in the 8.x order. */
    class ShipOrder extends SerializesNonDefaults
    {
        public $order;
        protected $carrier = 'ups';
        public $timeout = 120;
        public $job;
        public $connection;
        public $queue;
        public $chainConnection;
        public $chainQueue;
        public $chainCatchCallbacks;
        public $delay;
        public $afterCommit;
        public $middleware = [];
        public $chained = [];
    }

    class NotifyUsers extends SerializesNonDefaults
    {
        public $users;
        public $message;
        public $tries = 5;
        public $backoff = [10, 60];
        public $job;
        public $connection;
        public $queue;
        public $chainConnection;
        public $chainQueue;
        public $chainCatchCallbacks;
        public $delay;
        public $afterCommit;
        public $middleware = [];
        public $chained = [];
    }

    /** No SerializesModels: native serialization of every property, 11.2+ Queueable order. */
    class GenerateReport
    {
        public $reportId;
        public $format;
        public $job;
        public $connection;
        public $queue;
        public $delay;
        public $afterCommit;
        public $middleware = [];
        public $chained = [];
        public $chainConnection;
        public $chainQueue;
        public $chainCatchCallbacks;
    }

    /** 8.x–11.1 order without SerializesModels, for the Context hook fixture. */
    class RecordAudit
    {
        public $entry;
        public $job;
        public $connection;
        public $queue;
        public $chainConnection;
        public $chainQueue;
        public $chainCatchCallbacks;
        public $delay;
        public $afterCommit;
        public $middleware = [];
        public $chained = [];
    }

    /** 12.11–12.26 traits (11.2 order) with SerializesModels. */
    class SendReminder extends SerializesNonDefaults
    {
        public $userId;
        public $job;
        public $connection;
        public $queue;
        public $delay;
        public $afterCommit;
        public $middleware = [];
        public $chained = [];
        public $chainConnection;
        public $chainQueue;
        public $chainCatchCallbacks;
    }

    /** 12.51 traits: Batchable's batchId, Queueable with messageGroup and deduplicator. */
    class ImportRow extends SerializesNonDefaults
    {
        public $row;
        public $batchId;
        public $job;
        public $connection;
        public $queue;
        public $messageGroup;
        public $deduplicator;
        public $delay;
        public $afterCommit;
        public $middleware = [];
        public $chained = [];
        public $chainConnection;
        public $chainQueue;
        public $chainCatchCallbacks;
    }

    /** 13.24+ traits (debounceOwner, uniqueLockOwner) and deleteWhenMissingModels. */
    class PruneAvatar extends SerializesNonDefaults
    {
        public $deleteWhenMissingModels = true;
        public $user;
        public $job;
        public $connection;
        public $queue;
        public $messageGroup;
        public $deduplicator;
        public $debounceOwner = '';
        public $uniqueLockOwner = '';
        public $delay;
        public $afterCommit;
        public $middleware = [];
        public $chained = [];
        public $chainConnection;
        public $chainQueue;
        public $chainCatchCallbacks;
    }
}

namespace {
    use Illuminate\Contracts\Database\ModelIdentifier;

    if ($argc !== 2 || ! is_dir($argv[1])) {
        fwrite(STDERR, "usage: php build_newer.php OUTDIR\n");
        exit(2);
    }
    $out = rtrim($argv[1], '/');
    const CALL = 'Illuminate\Queue\CallQueuedHandler@call';
    const CREATED = 1767225600; // 2026-01-01 00:00:00 UTC

    /** The 8.43–12.10 object-job envelope (createPayloadArray + RedisQueue's id, attempts). */
    function envelope(string $uuid, string $id, object $cmd, array $meta, array $extra = []): array
    {
        $p = [
            'uuid' => $uuid, 'displayName' => get_class($cmd), 'job' => CALL,
            'maxTries' => $meta['maxTries'] ?? null, 'maxExceptions' => $meta['maxExceptions'] ?? null,
            'failOnTimeout' => $meta['failOnTimeout'] ?? false, 'backoff' => $meta['backoff'] ?? null,
            'timeout' => $meta['timeout'] ?? null, 'retryUntil' => $meta['retryUntil'] ?? null,
        ];
        if (array_key_exists('deleteWhenMissingModels', $meta)) {
            $p['deleteWhenMissingModels'] = $meta['deleteWhenMissingModels']; // 13.x
        }
        $p['data'] = ['commandName' => get_class($cmd), 'command' => serialize(clone $cmd)];
        if (array_key_exists('batchId', $meta)) {
            $p['data']['batchId'] = $meta['batchId']; // 12.51+
        }
        if (array_key_exists('createdAt', $meta)) {
            $p['createdAt'] = $meta['createdAt']; // 12.11+
        }
        $p = array_merge($p, $extra); // createPayloadUsing hooks
        $p['id'] = $id;
        $p['attempts'] = 0;
        if (array_key_exists('delay', $meta)) {
            $p['delay'] = $meta['delay']; // 12.11+, last
        }
        return $p;
    }

    function write(string $file, array $payload): void
    {
        global $out;
        file_put_contents("$out/$file", json_encode($payload, JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR));
    }

    // 9.4–9.25: SerializesModels leaves out defaults; ModelIdentifier has four properties.
    $j = new App\Jobs\ShipOrder();
    $j->order = new ModelIdentifier('App\Models\Order', 42, ['lines', 'customer'], 'mysql');
    unset($j->order->collectionClass);
    (fn () => $this->carrier = 'dhl')->call($j);
    $j->queue = 'shipping';
    write('L9.4-models.json', envelope('0e7c4d2a-5a39-4f7e-9d8e-1f2a3b4c5d6e', 'Qm3fV8sX2kLp9RtY4wZa7NcB1dEh6GjU', $j, ['timeout' => 120]));

    // 9.26+: a collection of models with a custom collection class.
    $j = new App\Jobs\NotifyUsers();
    $j->users = new ModelIdentifier('App\Models\User', [1, 2, 3], [], 'pgsql', 'App\Collections\UserCollection');
    $j->message = 'Wartung um 22:00 — bitte speichern';
    write('L9.26-collection.json', envelope('5b1d0e8f-3c2a-4b7d-8e9f-0a1b2c3d4e5f', 'Zp4Lk8Hs2Qw7Tn1Vb5Xc9Md3Rf6Gy0Ja', $j, ['maxTries' => 5, 'backoff' => '10,60']));

    // 11.x: the Context hook key (hidden context empty: an empty PHP array encodes as []).
    $j = new App\Jobs\RecordAudit();
    $j->entry = ['action' => 'login', 'ip' => '203.0.113.9'];
    write('L11-context.json', envelope('7c6b5a49-3827-4165-9e4f-2d3c4b5a6978', 'Aa1Bb2Cc3Dd4Ee5Ff6Gg7Hh8Ii9Jj0Kk', $j, [],
        ['illuminate:log:context' => ['data' => ['request_id' => serialize('c0ffee00-1111-4222-8333-444455556666')], 'hidden' => []]]));

    // 11.2+: Queueable's properties reordered (delay before chained; chain* last).
    $j = new App\Jobs\GenerateReport();
    $j->reportId = 7;
    $j->format = 'pdf';
    $j->queue = 'reports';
    write('L11.2-queueable.json', envelope('2f3e4d5c-6b7a-4980-a1b2-c3d4e5f60718', 'Rr5Tt6Yy7Uu8Ii9Oo0Pp1Aa2Ss3Dd4Ff', $j, []));

    // 12.11+: createdAt, and the dispatch delay as the last key (delay(30) → :delayed).
    $j = new App\Jobs\SendReminder();
    $j->userId = 99;
    $j->delay = 30;
    write('L12.11-delayed.json', envelope('9a8b7c6d-5e4f-4a3b-9c2d-1e0f9a8b7c6d', 'Gg1Hh2Jj3Kk4Ll5Zz6Xx7Cc8Vv9Bb0Nn', $j,
        ['createdAt' => CREATED, 'delay' => 30]));

    // 12.11+ string job: no retryUntil key, createdAt, delay null for push().
    write('L12.11-string.json', [
        'uuid' => '3e2d1c0b-9a8f-4e7d-8c6b-5a4f3e2d1c0b', 'displayName' => 'App\Handlers\Legacy', 'job' => 'App\Handlers\Legacy@run',
        'maxTries' => null, 'maxExceptions' => null, 'failOnTimeout' => false, 'backoff' => null, 'timeout' => null,
        'data' => ['invoice' => 'INV-2026-0001', 'lines' => [], 'total' => 129.5], 'createdAt' => CREATED,
        'id' => 'Mm1Nn2Bb3Vv4Cc5Xx6Zz7Ll8Kk9Jj0Hh', 'attempts' => 0, 'delay' => null,
    ]);

    // 12.51+: data.batchId next to the Batchable property; 12.32+ Queueable properties.
    $j = new App\Jobs\ImportRow();
    $j->row = ['sku' => 'A-100', 'qty' => 3];
    $j->batchId = '9f0a1b2c-3d4e-4f50-8a6b-7c8d9e0f1a2b';
    write('L12.51-batch.json', envelope('4d5e6f70-8192-4a3b-bc4d-5e6f708192a3', 'Ww1Ee2Rr3Tt4Yy5Uu6Ii7Oo8Pp9Qq0Aa', $j,
        ['batchId' => $j->batchId, 'createdAt' => CREATED, 'delay' => null]));

    // 13.x: deleteWhenMissingModels in the envelope; 13.24 trait defaults left out.
    $j = new App\Jobs\PruneAvatar();
    $j->user = new ModelIdentifier('App\Models\User', 404, [], 'sqlite');
    write('L13-missing-models.json', envelope('6e7f8091-a2b3-4c4d-9e5f-60718293a4b5', 'Ss1Dd2Ff3Gg4Hh5Jj6Kk7Ll8Zz9Xx0Cc', $j,
        ['deleteWhenMissingModels' => true, 'batchId' => null, 'createdAt' => CREATED, 'delay' => null]));
}
