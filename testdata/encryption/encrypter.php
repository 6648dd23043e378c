<?php
// The oracle of the encryption package's tests: Laravel's own Encrypter, Queue payload
// builder and CallQueuedHandler, driven by JSON requests, one per line on stdin, each
// answered by one JSON line on stdout. Binary strings travel base64-encoded.
//
// Laravel release: Debian's php-illuminate-* 8.83 by default; with LARAQ_HARNESS set to
// the peers' harness/autoload.php, the tree LARAQ_PEERS_DIR/laravel-<LARAQ_PEER_MAJOR>
// (or LARAQ_PEER_TREE) instead.
//
// Requests ({"op": ..., "key": b64, "cipher": ..., "previous": [b64, ...]} plus):
//   encrypt     value (b64), serialize (bool)      -> {payload}
//   decrypt     payload, unserialize (bool)         -> {ok, value (b64) | class, message}
//   command     secret (b64), n (int)               -> {payload (the queue JSON), serialized (b64)}
//               Queue::createPayload() of a ShouldBeEncrypted job, as dispatch() builds it
//   getCommand  command                             -> {ok, decrypted (bool), class, props | class, message}
//               CallQueuedHandler::getCommand(['command' => ...]) as a worker runs it
//   retry       command                             -> {ok, decrypted (bool), retryUntil | class, message}
//               queue:retry's refreshRetryUntil() of a failed payload with that data.command
//   appears     value                               -> {ok, appears (bool)} (12.x+)
//   base64      value (b64 of the input), strict    -> {ok, value (b64)}: base64_decode()
//   json        value (b64 of the input)            -> {ok, isArray, fields}: json_decode($v, true)
//               and, for iv/value/mac/tag, what isset/is_string/empty see
//   version                                         -> {version, php}
error_reporting(E_ALL & ~E_DEPRECATED);

if (($harness = getenv('LARAQ_HARNESS')) !== false && $harness !== '') {
    require_once $harness;
} else {
    foreach (['Container', 'Support', 'Encryption', 'Queue', 'Bus', 'Redis', 'Console'] as $component) {
        require_once "Illuminate/$component/autoload.php";
    }
}

use Illuminate\Bus\Dispatcher as BusDispatcher;
use Illuminate\Bus\Queueable;
use Illuminate\Container\Container;
use Illuminate\Contracts\Encryption\DecryptException;
use Illuminate\Contracts\Encryption\Encrypter as EncrypterContract;
use Illuminate\Contracts\Queue\ShouldBeEncrypted;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Contracts\Redis\Factory as RedisFactory;
use Illuminate\Encryption\Encrypter;
use Illuminate\Queue\CallQueuedHandler;
use Illuminate\Queue\Console\RetryCommand;
use Illuminate\Queue\RedisQueue;

/** A queued job as `php artisan make:job` writes it, marked ShouldBeEncrypted. */
class LaraqEncryptedJob implements ShouldQueue, ShouldBeEncrypted
{
    use Queueable;

    public $secret;
    protected $n;

    public function __construct($secret, $n)
    {
        $this->secret = $secret;
        $this->n = $n;
    }

    public function handle()
    {
    }

    /** queue:retry recomputes it, which shows that it read the job. */
    public function retryUntil()
    {
        return 1700000000 + $this->n;
    }

    public function props(): array
    {
        return ['secret' => base64_encode((string) $this->secret), 'n' => $this->n];
    }
}

/** Laravel's Encrypter, counting decrypt() calls so getCommand's choice shows. */
class LaraqSpyEncrypter extends Encrypter
{
    public static $decrypts = 0;

    public function decrypt($payload, $unserialize = true)
    {
        self::$decrypts++;

        return parent::decrypt($payload, $unserialize);
    }
}

function laraq_encrypter(array $req): Encrypter
{
    $enc = new LaraqSpyEncrypter(base64_decode($req['key']), $req['cipher']);
    if (! empty($req['previous'])) {
        $enc->previousKeys(array_map('base64_decode', $req['previous']));
    }

    return $enc;
}

function laraq_container(Encrypter $enc): Container
{
    $app = new Container();
    Container::setInstance($app);
    $app->instance(EncrypterContract::class, $enc);

    return $app;
}

function laraq_handle(array $req): array
{
    switch ($req['op']) {
        case 'version':
            return ['version' => defined('LARAQ_PEER_TAG') ? LARAQ_PEER_TAG : 'debian-8.83', 'php' => PHP_VERSION];
        case 'base64':
            $out = base64_decode(base64_decode($req['value']), (bool) $req['strict']);

            return ['ok' => $out !== false, 'value' => $out === false ? '' : base64_encode($out)];
        case 'json':
            $doc = json_decode(base64_decode($req['value']), true);
            $out = ['ok' => json_last_error() === JSON_ERROR_NONE, 'isArray' => is_array($doc), 'fields' => []];
            foreach (['iv', 'value', 'mac', 'tag'] as $name) {
                $v = is_array($doc) ? ($doc[$name] ?? null) : null;
                $out['fields'][$name] = ['set' => isset($v), 'string' => is_string($v), 'empty' => empty($v),
                    'value' => is_string($v) ? base64_encode($v) : ''];
            }

            return $out;
        case 'encrypt':
            $value = base64_decode($req['value']);

            return ['payload' => laraq_encrypter($req)->encrypt($value, (bool) $req['serialize'])];
        case 'decrypt':
            $value = laraq_encrypter($req)->decrypt($req['payload'], (bool) $req['unserialize']);
            if (! is_string($value)) {
                return ['ok' => false, 'class' => 'type', 'message' => 'decrypted to ' . gettype($value)];
            }

            return ['ok' => true, 'value' => base64_encode($value)];
        case 'command':
            $app = laraq_container(laraq_encrypter($req));
            $redis = new class implements RedisFactory {
                public function connection($name = null)
                {
                    throw new RuntimeException('no Redis in this test');
                }
            };
            $queue = new RedisQueue($redis, 'default');
            $queue->setContainer($app);
            $job = new LaraqEncryptedJob(base64_decode($req['secret']), $req['n']);
            $payload = (fn ($job) => $this->createPayload($job, 'default'))->call($queue, $job);

            return ['payload' => $payload, 'serialized' => base64_encode(serialize(clone $job))];
        case 'getCommand':
            $app = laraq_container(laraq_encrypter($req));
            $handler = new CallQueuedHandler(new BusDispatcher($app), $app);
            LaraqSpyEncrypter::$decrypts = 0;
            try {
                $command = (fn ($data) => $this->getCommand($data))->call($handler, ['command' => $req['command']]);
            } finally {
                $decrypted = LaraqSpyEncrypter::$decrypts > 0;
            }
            $out = ['ok' => true, 'decrypted' => $decrypted, 'class' => is_object($command) ? get_class($command) : gettype($command)];
            if ($command instanceof LaraqEncryptedJob) {
                $out['props'] = $command->props();
            }

            return $out;
        case 'retry':
            $app = laraq_container(laraq_encrypter($req));
            $retry = new RetryCommand();
            $retry->setLaravel($app);
            LaraqSpyEncrypter::$decrypts = 0;
            $json = json_encode(['data' => ['command' => $req['command']], 'retryUntil' => null]);
            $out = json_decode((fn ($p) => $this->refreshRetryUntil($p))->call($retry, $json), true);

            return ['ok' => true, 'decrypted' => LaraqSpyEncrypter::$decrypts > 0, 'retryUntil' => $out['retryUntil']];
        case 'appears':
            return ['ok' => true, 'appears' => Encrypter::appearsEncrypted($req['value'])];
    }
    throw new InvalidArgumentException('unknown op ' . $req['op']);
}

// What a Laravel app's HandleExceptions does: warnings and notices become exceptions
// (deprecations are only logged), so a job whose decryption warns fails.
set_error_handler(function ($level, $message, $file = '', $line = 0) {
    if (error_reporting() & $level) {
        throw new ErrorException($message, 0, $level, $file, $line);
    }

    return true;
});

while (($line = fgets(STDIN)) !== false) {
    $req = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
    try {
        $res = laraq_handle($req);
    } catch (Throwable $e) {
        $res = ['ok' => false, 'class' => get_class($e), 'message' => $e->getMessage(),
            'decryptException' => $e instanceof DecryptException];
        if ($req['op'] === 'getCommand' || $req['op'] === 'retry') {
            $res['decrypted'] = LaraqSpyEncrypter::$decrypts > 0;
        }
    }
    echo json_encode($res, JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR), "\n";
}
