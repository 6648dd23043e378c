<?php
// Performs ONE operation with the real Illuminate\Queue\RedisQueue of the release
// bootstrap.php boots (LARAQ_PEER_MAJOR: 8.83 or 5.8-13; queue connection "redis") or its
// cache store, so tests can compare the Redis state PHP
// leaves with the state laraq leaves. Connection settings come from bootstrap.php's
// environment variables (LARAQ_REDIS_PREFIX, LARAQ_REDIS_CLIENT, …).
//
// usage: php queue_op.php [--queue=NAME] [--now=UNIX] OP [ARGS...]
//   --queue  bare queue name (default "default")
//   --now    freezes the clock (Carbon::setTestNow), so scores computed from "now"
//            (reservation expiry, migration cut-off, restart time) are exact
// OP:
//   push                  stdin: payload. pushRaw.
//   bulk                  stdin: JSON array of base64 payloads. pushRaw of each inside
//                         pipeline(transaction(…)), the structure of RedisQueue::bulk.
//   later AT              stdin: payload. laterRaw with available-at AT (Unix seconds).
//   pop                   RedisQueue::pop: migrate delayed, migrate reserved, pop script
//                         (and BLPOP when LARAQ_BLOCK_FOR is set). Prints
//                         {"job": base64|null, "reserved": base64|null}.
//   pop-script            the pop script alone (retrieveNextJob, never blocking); prints
//                         the same JSON.
//   release AT            stdin: reserved payload. deleteAndRelease with available-at AT.
//   delete                stdin: reserved payload. deleteReserved.
//   migrate delayed|reserved   migrateExpiredJobs(queues:NAME:<zset>, queues:NAME);
//                         prints the number of payloads it returned.
//   size | clear          prints the integer.
//   restart               cache: what queue:restart does, forever(restart key, now).
//   pause CONN | resume CONN   cache: forever(paused key, true) / forget(paused key), the
//                         12.40+ queue:pause / queue:resume, for queue --queue on CONN.
//   pause-all | resume-all   cache: QueueManager::pauseAll / resumeAll (13.25+; the same
//                         key through the store on older releases).
//   exception UUID MAX    Worker::markJobAsFailedIfWillExceedMaxExceptions for a job with
//                         this uuid and maxExceptions; prints "failed" or "counted".
require __DIR__ . '/bootstrap.php';
laraq_boot();

use Illuminate\Queue\Jobs\RedisJob;
use Illuminate\Queue\RedisQueue;
use Illuminate\Queue\Worker;
use Illuminate\Support\Carbon;

function queue_op_fail(string $msg): void
{
    fwrite(STDERR, "queue_op: $msg\n");
    exit(2);
}

function queue_op_call(object $obj, string $method, ...$args)
{
    $m = new ReflectionMethod($obj, $method);
    $m->setAccessible(true);
    return $m->invoke($obj, ...$args);
}

function queue_op_popped($job, $reserved): string
{
    return json_encode([
        'job' => $job === null || $job === false ? null : base64_encode($job),
        'reserved' => $reserved === null || $reserved === false ? null : base64_encode($reserved),
    ]) . "\n";
}

$args = array_slice($argv, 1);
$queueName = 'default';
while ($args && strncmp($args[0], '--', 2) === 0) {
    $opt = array_shift($args);
    if (strncmp($opt, '--queue=', 8) === 0) {
        $queueName = substr($opt, 8);
    } elseif (strncmp($opt, '--now=', 6) === 0) {
        Carbon::setTestNow(Carbon::createFromTimestamp((int) substr($opt, 6)));
    } else {
        queue_op_fail("unknown option $opt");
    }
}
$op = array_shift($args) ?? queue_op_fail('missing operation');

/** @var RedisQueue $queue */
$queue = app('queue')->connection('redis');
$stdin = fn () => stream_get_contents(STDIN);
$prefixed = $queue->getQueue($queueName);
$reservedJob = fn (string $reserved) => new RedisJob(app(), $queue, $reserved, $reserved, 'redis', $queueName);
$at = fn (int $i) => Carbon::createFromTimestamp((int) ($args[$i] ?? queue_op_fail("$op needs a Unix time")));

switch ($op) {
    case 'push':
        $queue->pushRaw($stdin(), $queueName);
        break;
    case 'bulk':
        $payloads = array_map('base64_decode', json_decode($stdin(), true, 512, JSON_THROW_ON_ERROR));
        laraq_queue_redis($queue)->pipeline(function () use ($queue, $payloads, $queueName) {
            laraq_queue_redis($queue)->transaction(function () use ($queue, $payloads, $queueName) {
                foreach ($payloads as $p) {
                    $queue->pushRaw($p, $queueName);
                }
            });
        });
        break;
    case 'later':
        queue_op_call($queue, 'laterRaw', $at(0), $stdin(), $queueName);
        break;
    case 'pop':
        $job = $queue->pop($queueName);
        echo $job === null ? queue_op_popped(null, null) : queue_op_popped($job->getRawBody(), $job->getReservedJob());
        break;
    case 'pop-script':
        [$job, $reserved] = queue_op_call($queue, 'retrieveNextJob', $prefixed, false);
        echo queue_op_popped($job, $reserved);
        break;
    case 'release':
        $queue->deleteAndRelease($queueName, $reservedJob($stdin()), $at(0));
        break;
    case 'delete':
        $queue->deleteReserved($queueName, $reservedJob($stdin()));
        break;
    case 'migrate':
        $from = $args[0] ?? '';
        if ($from !== 'delayed' && $from !== 'reserved') {
            queue_op_fail('migrate needs delayed or reserved');
        }
        echo count($queue->migrateExpiredJobs("$prefixed:$from", $prefixed)), "\n";
        break;
    case 'size':
        echo $queue->size($queueName), "\n";
        break;
    case 'clear':
        echo $queue->clear($queueName), "\n";
        break;
    case 'restart':
        app('cache')->store()->forever('illuminate:queue:restart', Carbon::now()->getTimestamp());
        break;
    case 'pause':
    case 'resume':
        $conn = $args[0] ?? queue_op_fail("$op needs a connection name");
        if (method_exists(app('queue'), $op)) {
            app('queue')->$op($conn, $queueName); // 12.40+: QueueManager::pause / resume
            break;
        }
        // Before 12.40 no release writes it; the key 12.40+ uses, through the same store.
        $key = 'illuminate:queue:paused:' . $conn . ':' . $queueName;
        $op === 'pause' ? app('cache')->store()->forever($key, true) : app('cache')->store()->forget($key);
        break;
    case 'pause-all':
    case 'resume-all':
        $m = $op === 'pause-all' ? 'pauseAll' : 'resumeAll';
        if (method_exists(app('queue'), $m)) {
            app('queue')->$m(); // 13.25+: QueueManager::pauseAll / resumeAll
            break;
        }
        // Before 13.25 no release writes it; the key 13.25+ uses, through the same store.
        $m === 'pauseAll' ? app('cache')->store()->forever('illuminate:queues:paused', true)
            : app('cache')->store()->forget('illuminate:queues:paused');
        break;
    case 'exception':
        $job = new class($args[0] ?? '', (int) ($args[1] ?? 0)) {
            public bool $failed = false;
            public function __construct(private string $uuid, private int $max) {}
            public function uuid() { return $this->uuid; }
            public function maxExceptions() { return $this->max; }
            public function fail($e = null) { $this->failed = true; }
        };
        $worker = new Worker(app('queue'), app('events'), app(\Illuminate\Contracts\Debug\ExceptionHandler::class), fn () => false);
        $worker->setCache(app('cache')->store());
        queue_op_call($worker, 'markJobAsFailedIfWillExceedMaxExceptions', 'redis', $job, new RuntimeException('boom'));
        echo $job->failed ? "failed\n" : "counted\n";
        break;
    default:
        queue_op_fail("unknown operation $op");
}
