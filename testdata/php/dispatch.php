<?php
// Dispatches jobs through Laravel 8's own Bus dispatcher and RedisQueue (connection
// "redis" of bootstrap.php, LARAQ_* environment variables) and prints what was queued.
//
// usage: php dispatch.php [--now=UNIX] < requests.jsonl
//   --now freezes Carbon's clock (Carbon::setTestNow), so the :delayed score is exact.
//
// stdin: one JSON object per line, one of
//   object job:  {"class": FQCN, "props": {...}, "queue": ?, "delay": ?, "connection": ?,
//                 "chain": [{"class":..,"props":..,"queue"?,"delay"?,"connection"?}, ...]?,
//                 "chain_queue": ?, "chain_connection": ?}
//                A new instance of class is made without calling its constructor, then each
//                entry of props is set by reflection, whatever its visibility: the name may be
//                mangled ("\u0000*\u0000x" protected, "\u0000Class\u0000x" private) or plain (the
//                declared property of that name, else a dynamic public property). Values are
//                in the readable form of `laraq decode` / phpser.MarshalReadable: {"@class": C,
//                ...props} objects (built by unserialize(), so Carbon and DateTime work),
//                {"@enum": "C:Case"}, {"@class": C, "@serialized": data}, {"@binary": base64},
//                "@@key" for a key starting with "@"; JSON floats (1.0, -0.0, 1e100) stay floats.
//                Then queue → onQueue(), delay (seconds) → delay(), connection → onConnection(),
//                chain → chain() of the built jobs, chain_queue → allOnQueue(),
//                chain_connection → allOnConnection(), and Bus\Dispatcher::dispatchToQueue()
//                pushes it exactly as dispatch($job) would.
//   string job:  {"string_job": "Class@method", "data": any, "queue": ?, "delay": ?}
//                Queue::push / Queue::later with that data.
//   raw:         {"raw": "payload string", "queue": ?, "delay": ?}   pushRaw / laterRaw.
//
// stdout: one JSON line per request, read back from Redis after the push:
//   {"id": <id Laravel returned>, "payload": "<the exact bytes queued>", "queue": "<name>",
//    "delayed": bool, "score": <:delayed score or null>}
// or {"error": "..."} (the run then exits 1 after the remaining lines).
//
// Job classes: jobs.php and every jobs_*.php next to this file.
require __DIR__ . '/bootstrap.php';
require_once __DIR__ . '/jobs.php';
foreach (glob(__DIR__ . '/jobs_*.php') ?: [] as $file) {
    require_once $file;
}

use Illuminate\Contracts\Bus\Dispatcher;
use Illuminate\Support\Carbon;

$app = laraq_boot();
laraq_models_boot();

foreach (array_slice($argv, 1) as $arg) {
    if (strncmp($arg, '--now=', 6) === 0) {
        Carbon::setTestNow(Carbon::createFromTimestamp((int) substr($arg, 6)));
    } else {
        fwrite(STDERR, "dispatch.php: unknown argument $arg\n");
        exit(2);
    }
}

/** The serialize() text of a readable-form node (json_decode'd into arrays). */
function laraq_readable_ser($node, string $path): string
{
    if (! is_array($node)) {
        return serialize($node);
    }
    if (array_key_exists('@enum', $node)) {
        $e = (string) $node['@enum'];
        return 'E:' . strlen($e) . ':"' . $e . '";';
    }
    if (array_key_exists('@binary', $node)) {
        return serialize(base64_decode((string) $node['@binary'], true));
    }
    if (array_key_exists('@recursion', $node)) {
        throw new InvalidArgumentException("$path: a recursion marker cannot be rebuilt");
    }
    $class = null;
    if (array_key_exists('@class', $node)) {
        $class = (string) $node['@class'];
        unset($node['@class']);
        if (array_key_exists('@serialized', $node)) {
            $d = (string) $node['@serialized'];
            return 'C:' . strlen($class) . ':"' . $class . '":' . strlen($d) . ':{' . $d . '}';
        }
    }
    $body = '';
    foreach ($node as $k => $x) {
        if (is_string($k) && strncmp($k, '@@', 2) === 0) {
            $k = substr($k, 1);
        }
        // json_decode already made canonical decimal keys ints, as PHP arrays do; property
        // names are always strings.
        $body .= serialize($class === null ? $k : (string) $k) . laraq_readable_ser($x, "$path.$k");
    }
    if ($class === null) {
        return 'a:' . count($node) . ':{' . $body . '}';
    }
    return 'O:' . strlen($class) . ':"' . $class . '":' . count($node) . ':{' . $body . '}';
}

/** A PHP value from a readable-form node. */
function laraq_from_readable($node, string $path)
{
    if (! is_array($node)) {
        return $node;
    }
    $s = laraq_readable_ser($node, $path);
    $v = @unserialize($s);
    if ($v === false && $s !== 'b:0;') {
        throw new InvalidArgumentException("$path: PHP cannot unserialize " . json_encode($s));
    }
    return $v;
}

/** A new instance of the job with each given property set by reflection. */
function laraq_make_job(array $spec): object
{
    $class = $spec['class'] ?? null;
    if (! is_string($class) || ! class_exists($class)) {
        throw new InvalidArgumentException('unknown job class ' . json_encode($class));
    }
    $rc = new ReflectionClass($class);
    $job = $rc->newInstanceWithoutConstructor();
    foreach ($spec['props'] ?? [] as $key => $node) {
        $key = (string) $key;
        if (strncmp($key, '@@', 2) === 0) {
            $key = substr($key, 1);
        } elseif ($key === '@class') {
            continue;
        }
        $value = laraq_from_readable($node, $key);
        $owner = $rc;
        $name = $key;
        if ($key !== '' && $key[0] === "\0") {
            [, $scope, $name] = explode("\0", $key, 3);
            if ($scope !== '*') {
                $owner = new ReflectionClass($scope);
            }
        }
        $prop = null;
        for ($c = $owner; $c; $c = $c->getParentClass()) {
            if ($c->hasProperty($name)) {
                $prop = $c->getProperty($name);
                break;
            }
        }
        if ($prop === null) {
            $job->{$name} = $value;
            continue;
        }
        $prop->setAccessible(true);
        $prop->setValue($job, $value);
    }
    if (isset($spec['connection'])) {
        $job->onConnection($spec['connection']);
    }
    if (isset($spec['queue'])) {
        $job->onQueue($spec['queue']);
    }
    if (isset($spec['delay'])) {
        $job->delay($spec['delay']);
    }
    return $job;
}

/** Finds the payload with this id (or these exact bytes) in queues:NAME or its :delayed set. */
function laraq_read_back(string $queue, $id, ?string $raw): array
{
    $conn = app('queue')->connection('redis')->getConnection();
    $key = 'queues:' . $queue;
    $match = function ($p) use ($id, $raw) {
        if ($raw !== null) {
            return $p === $raw;
        }
        $d = json_decode($p, true);
        return is_array($d) && ($d['id'] ?? null) === $id;
    };
    foreach (array_reverse($conn->lrange($key, 0, -1) ?: []) as $p) {
        if ($match($p)) {
            return ['payload' => $p, 'delayed' => false, 'score' => null];
        }
    }
    foreach ($conn->zrange($key . ':delayed', 0, -1) ?: [] as $p) {
        if ($match($p)) {
            return ['payload' => $p, 'delayed' => true, 'score' => (int) $conn->zscore($key . ':delayed', $p)];
        }
    }
    throw new RuntimeException("queued payload not found in $key or $key:delayed");
}

$queueConn = app('queue')->connection('redis');
$default = app('config')->get('queue.connections.redis.queue', 'default');
$rc = 0;
while (($line = fgets(STDIN)) !== false) {
    if (trim($line) === '') {
        continue;
    }
    try {
        $spec = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
        $delay = $spec['delay'] ?? null;
        $queue = $spec['queue'] ?? null;
        $raw = null;
        if (isset($spec['raw'])) {
            $raw = (string) $spec['raw'];
            $id = $delay !== null
                ? (new ReflectionMethod($queueConn, 'laterRaw'))->invoke($queueConn, $delay, $raw, $queue)
                : $queueConn->pushRaw($raw, $queue);
        } elseif (isset($spec['string_job'])) {
            $data = array_key_exists('data', $spec) ? $spec['data'] : '';
            $id = $delay !== null
                ? $queueConn->later($delay, $spec['string_job'], $data, $queue)
                : $queueConn->push($spec['string_job'], $data, $queue);
        } else {
            $job = laraq_make_job($spec);
            if (! empty($spec['chain'])) {
                $job->chain(array_map('laraq_make_job', $spec['chain']));
            }
            if (isset($spec['chain_connection'])) {
                $job->allOnConnection($spec['chain_connection']);
            }
            if (isset($spec['chain_queue'])) {
                $job->allOnQueue($spec['chain_queue']);
            }
            $id = app(Dispatcher::class)->dispatchToQueue($job);
            $queue = $job->queue ?? null;
        }
        $out = ['id' => $id, 'queue' => $queue ?: $default] + laraq_read_back($queue ?: $default, $id, $raw);
        echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
    } catch (Throwable $e) {
        echo json_encode(['error' => get_class($e) . ': ' . $e->getMessage()]), "\n";
        $rc = 1;
    }
}
exit($rc);
