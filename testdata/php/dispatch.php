<?php
// Dispatches jobs through the real Bus dispatcher and RedisQueue of the release bootstrap.php
// boots (Debian's 8.83, or 5.8-13 with LARAQ_PEER_MAJOR; connection "redis", LARAQ_*
// environment variables) and prints what was queued.
//
// usage: php dispatch.php [--now=UNIX] [--seed=S] < requests.jsonl
//   --now  freezes Carbon's clock (Carbon::setTestNow), so the :delayed score, createdAt
//          (12.11+) and retryUntil() dates are exact.
//   --seed makes Str::uuid() (job uuids, batch ids, notification ids; 6.x+) and, on
//          10+, Str::random() (RedisQueue's job id) a fixed sequence derived from S, so
//          that a capture is byte-for-byte repeatable. Before 10 there is no random-string
//          hook (5.8 has no uuid hook either): those ids stay random.
//
// stdin: one JSON object per line, one of
//   object job:  {"class": FQCN, "props": {...}, "queue": ?, "delay": ?, "connection": ?,
//                 "chain": [{"class":..,"props":..,"queue"?,"delay"?,"connection"?}, ...]?,
//                 "chain_queue": ?, "chain_connection": ?, "via": ?}
//                A new instance of class is made without calling its constructor, then each
//                entry of props is set by reflection, whatever its visibility: the name may be
//                mangled ("\u0000*\u0000x" protected, "\u0000Class\u0000x" private) or plain (the
//                declared property of that name, else a dynamic public property). Values are
//                in the readable form of `laraq decode` / phpser.MarshalReadable: {"@class": C,
//                ...props} objects (built by unserialize(), so Carbon and DateTime work),
//                {"@enum": "C:Case"}, {"@class": C, "@serialized": data}, {"@binary": base64},
//                "@@key" for a key starting with "@"; JSON floats (1.0, -0.0, 1e100) stay floats.
//                A whole property value (or constructor argument) may also be
//                {"@model": C, "id": X} (C::find(X) from the models' database) or
//                {"@models": C, "ids": [...]} (an Eloquent collection, C::findMany).
//                With "args": [...] or {"name": ...} instead of props, the constructor is
//                called with them (same value forms), as `new Job(...)` in an app.
//                "through": a PHP expression giving job middleware (laraq_middleware_expr:
//                "[(new WithoutOverlapping('k'))->releaseAfter(7)]") → through().
//                Then queue → onQueue(), delay (seconds) → delay(), connection → onConnection(),
//                chain → chain() of the built jobs, chain_queue → allOnQueue(),
//                chain_connection → allOnConnection(), and Bus\Dispatcher::dispatchToQueue()
//                pushes it exactly as dispatch($job) would; "via": "dispatch" goes through
//                dispatch($job) instead (PendingDispatch: ShouldBeUnique's lock is taken,
//                and a duplicate is not queued: the line then says "dispatched": false).
//   string job:  {"string_job": "Class@method", "data": any, "queue": ?, "delay": ?}
//                Queue::push / Queue::later with that data.
//   raw:         {"raw": "payload string", "queue": ?, "delay": ?}   pushRaw / laterRaw.
//   chain:       {"bus_chain": [job, ...], "queue": ?, "connection": ?}
//                Bus::chain([...])->onQueue()->onConnection()->dispatch().
//   batch:       {"batch": [job, ...], "name": ?, "queue": ?, "allow_failures": bool?}
//                Bus::batch([...])->name()->onQueue()->allowFailures()->dispatch(); needs
//                LARAQ_FAILED_DB (job_batches is created there when missing).
//   event:       {"event": FQCN, "props"|"args": ...} event(new FQCN): queued listeners and
//                ShouldBroadcast events push their jobs.
//   notification: {"notify": FQCN, "props"|"args": ..., "notifiables": [value, ...]}
//                the notification channel manager's send(notifiables, notification).
//   mail:        {"mail": FQCN, "props"|"args": ..., "to": "address"}
//                (new FQCN)->to(address)->queue(the queue manager), as Mail::queue does.
//   Every request may carry "context": {...} and "hidden_context": {...} (11+): set through
//   Context::add / addHidden before dispatching, cleared after.
//   LARAQ_TRACEPARENT and LARAQ_TRACESTATE in the environment add those keys to every
//   payload as OpenTelemetry's instrumentation does (see below).
//   "watch": ["queue", ...] names further queues to look for what an event, notification
//   or mail pushed (default: "queue" and the connection's default queue).
//
// stdout: one JSON line per request, read back from Redis after the push:
//   {"id": <id Laravel returned>, "payload": "<the exact bytes queued>", "queue": "<name>",
//    "delayed": bool, "score": <:delayed score or null>}
// For chain, batch, event, notification and mail requests (whose API returns no job id)
// and "via": "dispatch", these describe the first payload that appeared, and "pushed"
// lists every one that appeared, in order ([{"payload","queue","delayed","score"}]).
// On an error {"error": "..."} (the run then exits 1 after the remaining lines).
//
// Job classes: jobs.php and every jobs_*.php next to this file.
require __DIR__ . '/bootstrap.php';
require_once __DIR__ . '/jobs.php';
foreach (glob(__DIR__ . '/jobs_*.php') ?: [] as $file) {
    require_once $file;
}

use Illuminate\Contracts\Bus\Dispatcher;
use Illuminate\Support\Carbon;
use Illuminate\Support\Str;

$app = laraq_boot();
laraq_jobs_boot();

// LARAQ_TRACEPARENT / LARAQ_TRACESTATE stand in for OpenTelemetry's Laravel
// instrumentation, whose extension the peers cannot load: its post-hook on
// Queue::createPayloadArray has TraceContextPropagator add "traceparent" (and a non-empty
// "tracestate") at the end of the array Queue builds, before RedisQueue adds "id" and
// "attempts" — where a createPayloadUsing callback's keys land too, after the framework's
// own callbacks (Context).
if (($traceparent = getenv('LARAQ_TRACEPARENT')) !== false && $traceparent !== '') {
    $tracestate = (string) getenv('LARAQ_TRACESTATE');
    \Illuminate\Queue\Queue::createPayloadUsing(fn () => array_filter(
        ['traceparent' => $traceparent, 'tracestate' => $tracestate],
        fn ($v) => $v !== '',
    ));
}

foreach (array_slice($argv, 1) as $arg) {
    if (strncmp($arg, '--now=', 6) === 0) {
        Carbon::setTestNow(Carbon::createFromTimestamp((int) substr($arg, 6)));
    } elseif (strncmp($arg, '--seed=', 7) === 0) {
        laraq_seed_randomness(substr($arg, 7));
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

/**
 * Fixed sequences for Str::uuid() (6.x+; 5.8 has no hook, and no uuid in its payloads)
 * and (10+) Str::random(), derived from the seed.
 */
function laraq_seed_randomness(string $seed): void
{
    $n = 0;
    method_exists(Str::class, 'createUuidsUsing') && Str::createUuidsUsing(function () use ($seed, &$n) {
        $h = md5("$seed:uuid:" . $n++);
        // A valid version-4 UUID, as Uuid::uuid4() would give.
        $h[12] = '4';
        $h[16] = dechex(8 | (hexdec($h[16]) & 3));
        return \Ramsey\Uuid\Uuid::fromString(substr($h, 0, 8) . '-' . substr($h, 8, 4) . '-' . substr($h, 12, 4) . '-' . substr($h, 16, 4) . '-' . substr($h, 20, 12));
    });
    if (method_exists(Str::class, 'createRandomStringsUsing')) {
        $r = 0;
        Str::createRandomStringsUsing(function ($length) use ($seed, &$r) {
            $alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
            $out = '';
            for ($i = 0; strlen($out) < $length; $i++) {
                foreach (str_split(md5("$seed:random:$r:$i", true)) as $byte) {
                    $out .= $alphabet[ord($byte) % 62];
                }
            }
            $r++;
            return substr($out, 0, $length);
        });
    }
}

/** A PHP value from a readable-form node. */
function laraq_from_readable($node, string $path)
{
    if (! is_array($node)) {
        return $node;
    }
    if (isset($node['@model']) && is_string($node['@model'])) {
        $model = $node['@model']::query()->find($node['id'] ?? null);
        if ($model === null) {
            throw new InvalidArgumentException("$path: no {$node['@model']} with id " . json_encode($node['id'] ?? null));
        }
        return $model;
    }
    if (isset($node['@models']) && is_string($node['@models'])) {
        return $node['@models']::query()->findMany((array) ($node['ids'] ?? []));
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
    if (array_key_exists('args', $spec)) {
        $args = [];
        foreach ((array) $spec['args'] as $k => $node) {
            $args[$k] = laraq_from_readable($node, "args.$k");
        }
        $job = $rc->newInstanceArgs($args);
    } else {
        $job = $rc->newInstanceWithoutConstructor();
    }
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
    if (isset($spec['through'])) {
        $job->through(laraq_middleware_expr($spec['through']));
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

/** A job of a chain or batch request: a job spec, with the class under "class". */
function laraq_make_jobs(array $specs): array
{
    return array_map('laraq_make_job', $specs);
}

/**
 * The Redis key of a queue as the release's RedisQueue names it: queues:NAME, or on a
 * cluster connection from 13.5 queues:{NAME} (getQueueRedisKey).
 */
function laraq_queue_key(string $queue): string
{
    $rq = app('queue')->connection('redis');
    if (method_exists($rq, 'getQueueRedisKey')) {
        $m = new ReflectionMethod($rq, 'getQueueRedisKey');
        $m->setAccessible(true);
        return $m->invoke($rq, $queue);
    }
    return 'queues:' . $queue;
}

/** The contents of queues:Q and queues:Q:delayed (with scores) of each queue. */
function laraq_snapshot(array $queues): array
{
    $conn = laraq_queue_redis(app('queue')->connection('redis'));
    $out = [];
    foreach (array_unique($queues) as $q) {
        $key = laraq_queue_key($q);
        foreach ($conn->lrange($key, 0, -1) ?: [] as $p) {
            $out[] = ['payload' => $p, 'queue' => $q, 'delayed' => false, 'score' => null];
        }
        foreach ($conn->zrange("$key:delayed", 0, -1) ?: [] as $p) {
            $out[] = ['payload' => $p, 'queue' => $q, 'delayed' => true, 'score' => (int) $conn->zscore("$key:delayed", $p)];
        }
    }
    return $out;
}

/** Runs $fn and returns what it pushed onto any of the queues, in push order. */
function laraq_pushed_by(array $queues, callable $fn): array
{
    $before = [];
    foreach (laraq_snapshot($queues) as $e) {
        $before[$e['queue'] . "\0" . $e['payload']] = ($before[$e['queue'] . "\0" . $e['payload']] ?? 0) + 1;
    }
    $fn();
    $new = [];
    foreach (laraq_snapshot($queues) as $e) {
        $k = $e['queue'] . "\0" . $e['payload'];
        if (($before[$k] ?? 0) > 0) {
            $before[$k]--;
            continue;
        }
        $d = json_decode($e['payload'], true);
        $e['id'] = is_array($d) ? ($d['id'] ?? null) : null;
        $new[] = $e;
    }
    return $new;
}

/** Sets (11+) Laravel Context for one request; returns whether anything was set. */
function laraq_set_context(array $spec): bool
{
    if (! isset($spec['context']) && ! isset($spec['hidden_context'])) {
        return false;
    }
    if (! class_exists(\Illuminate\Support\Facades\Context::class)) {
        throw new InvalidArgumentException('Laravel Context needs 11.x or later; this is ' . LARAQ_PEER_TAG);
    }
    foreach ($spec['context'] ?? [] as $k => $v) {
        \Illuminate\Support\Facades\Context::add($k, laraq_from_readable($v, "context.$k"));
    }
    foreach ($spec['hidden_context'] ?? [] as $k => $v) {
        \Illuminate\Support\Facades\Context::addHidden($k, laraq_from_readable($v, "hidden_context.$k"));
    }
    return true;
}

/** dispatch($job) as an app calls it: PendingDispatch, which takes ShouldBeUnique's lock. */
function laraq_pending_dispatch(object $job): void
{
    if (class_exists(\Illuminate\Foundation\Bus\PendingDispatch::class)) {
        // Destructed at the end of the statement: that is when it dispatches.
        new \Illuminate\Foundation\Bus\PendingDispatch($job);
        return;
    }
    // Debian packages no Foundation: PendingDispatch::shouldDispatch of 8.83, verbatim in effect.
    if ($job instanceof \Illuminate\Contracts\Queue\ShouldBeUnique
        && ! (new \Illuminate\Bus\UniqueLock(app(\Illuminate\Contracts\Cache\Repository::class)))->acquire($job)) {
        return;
    }
    app(Dispatcher::class)->dispatch($job);
}

/** Finds the payload with this id (or these exact bytes) in queues:NAME or its :delayed set. */
function laraq_read_back(string $queue, $id, ?string $raw): array
{
    $conn = laraq_queue_redis(app('queue')->connection('redis'));
    $key = laraq_queue_key($queue);
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
        $withContext = laraq_set_context($spec);
        $pushed = null;
        $watch = array_merge([$queue ?: $default, $default], (array) ($spec['watch'] ?? []));
        if (isset($spec['bus_chain'])) {
            $pushed = laraq_pushed_by($watch, function () use ($spec) {
                $chain = \Illuminate\Support\Facades\Bus::chain(laraq_make_jobs($spec['bus_chain']));
                isset($spec['connection']) && $chain->onConnection($spec['connection']);
                isset($spec['queue']) && $chain->onQueue($spec['queue']);
                $chain->dispatch();
            });
        } elseif (isset($spec['batch'])) {
            laraq_batches_migrate();
            $pushed = laraq_pushed_by($watch, function () use ($spec) {
                $batch = \Illuminate\Support\Facades\Bus::batch(laraq_make_jobs($spec['batch']));
                isset($spec['name']) && $batch->name($spec['name']);
                isset($spec['queue']) && $batch->onQueue($spec['queue']);
                ! empty($spec['allow_failures']) && $batch->allowFailures();
                $batch->dispatch();
            });
        } elseif (isset($spec['event'])) {
            $event = laraq_make_job(['class' => $spec['event']] + array_intersect_key($spec, ['props' => 1, 'args' => 1]));
            $pushed = laraq_pushed_by($watch, fn () => event($event));
        } elseif (isset($spec['notify'])) {
            $n = laraq_make_job(['class' => $spec['notify']] + array_intersect_key($spec, ['props' => 1, 'args' => 1]));
            $notifiables = [];
            foreach ((array) ($spec['notifiables'] ?? []) as $i => $node) {
                $notifiables[] = laraq_from_readable($node, "notifiables.$i");
            }
            $pushed = laraq_pushed_by($watch, fn () => app(\Illuminate\Notifications\ChannelManager::class)->send($notifiables, $n));
        } elseif (isset($spec['mail'])) {
            $m = laraq_make_job(['class' => $spec['mail']] + array_intersect_key($spec, ['props' => 1, 'args' => 1]));
            $pushed = laraq_pushed_by($watch, fn () => $m->to($spec['to'] ?? 'someone@example.com')->queue(app('queue')));
        } elseif (($spec['via'] ?? null) === 'dispatch') {
            $job = laraq_make_job($spec);
            $pushed = laraq_pushed_by(array_merge($watch, [$job->queue ?? $default]), fn () => laraq_pending_dispatch($job));
        }
        if ($pushed !== null) {
            $withContext && \Illuminate\Support\Facades\Context::flush();
            $out = ($pushed ? ['id' => $pushed[0]['id']] + $pushed[0] : ['id' => null, 'payload' => null])
                + ['dispatched' => $pushed !== [], 'pushed' => $pushed];
            echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
            continue;
        }
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
        $withContext && \Illuminate\Support\Facades\Context::flush();
        $out = ['id' => $id, 'queue' => $queue ?: $default] + laraq_read_back($queue ?: $default, $id, $raw);
        echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
    } catch (Throwable $e) {
        class_exists(\Illuminate\Support\Facades\Context::class) && \Illuminate\Support\Facades\Context::flush();
        echo json_encode(['error' => get_class($e) . ': ' . $e->getMessage()]), "\n";
        $rc = 1;
    }
}
exit($rc);
