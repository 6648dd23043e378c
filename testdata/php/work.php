<?php
// Runs the real Illuminate\Queue\Worker of the release bootstrap.php boots (8.83, or
// 10-13 with LARAQ_PEER_MAJOR) the way `php artisan queue:work` does, against the Redis and
// cache of bootstrap.php (LARAQ_* environment variables). The Worker's constructor and
// WorkerOptions' first eleven arguments are the same on 8.83 through 13.x, and so is
// WorkCommand's wiring reproduced here (events, failed-job logging, setCache).
//
// usage: php work.php [CONNECTION] [--queue=a,b] [--once] [--stop-when-empty]
//          [--tries=1] [--backoff=0] [--timeout=60] [--sleep=3] [--rest=0]
//          [--max-jobs=0] [--max-time=0] [--memory=128] [--name=default] [--force]
//          [--now=UNIX]
// Defaults are queue:work's. CONNECTION defaults to "redis" (the only one configured),
// --queue to the connection's queue ("default"). --sleep and --rest may be fractional
// (0.1) to keep tests quick. --now freezes Carbon's clock (Carbon::setTestNow).
//
// Like WorkCommand it listens to JobProcessing / JobProcessed / JobFailed and prints
//   [Y-m-d H:i:s][<job id>] Processing: <name>
//   [Y-m-d H:i:s][<job id>] Processed:  <name>
//   [Y-m-d H:i:s][<job id>] Failed:     <name>
// to stdout (no colours), logs failed jobs through queue.failer (the database provider
// when LARAQ_FAILED_DB is set), and gives the worker the cache store (queue:restart
// signal, maxExceptions counters). pcntl is loaded, so --timeout kills a stuck job and
// SIGTERM stops the daemon after the current job. The exit status is the daemon's
// (0 stop, 12 memory limit; a timeout kills the process with SIGKILL); --once exits 0.
//
// Job classes: jobs.php and every jobs_*.php next to this file.
require __DIR__ . '/bootstrap.php';
require_once __DIR__ . '/jobs.php';
foreach (glob(__DIR__ . '/jobs_*.php') ?: [] as $file) {
    require_once $file;
}

use Illuminate\Contracts\Debug\ExceptionHandler;
use Illuminate\Queue\Events\JobFailed;
use Illuminate\Queue\Events\JobProcessed;
use Illuminate\Queue\Events\JobProcessing;
use Illuminate\Queue\Worker;
use Illuminate\Queue\WorkerOptions;
use Illuminate\Support\Carbon;
use Illuminate\Support\Facades\Facade;

$app = laraq_boot();
laraq_jobs_boot();

$opts = [
    'queue' => null, 'once' => false, 'stop-when-empty' => false, 'tries' => '1', 'backoff' => '0',
    'delay' => '0', 'timeout' => '60', 'sleep' => '3', 'rest' => '0', 'max-jobs' => '0', 'max-time' => '0',
    'memory' => '128', 'name' => 'default', 'force' => false, 'now' => null,
];
$connection = null;
foreach (array_slice($argv, 1) as $arg) {
    if (strncmp($arg, '--', 2) !== 0) {
        if ($connection !== null) {
            fwrite(STDERR, "work.php: unexpected argument $arg\n");
            exit(2);
        }
        $connection = $arg;
        continue;
    }
    [$name, $value] = array_pad(explode('=', substr($arg, 2), 2), 2, null);
    if (! array_key_exists($name, $opts)) {
        fwrite(STDERR, "work.php: unknown option --$name\n");
        exit(2);
    }
    $opts[$name] = is_bool($opts[$name]) ? true : $value;
}
if ($opts['now'] !== null) {
    Carbon::setTestNow(Carbon::createFromTimestamp((int) $opts['now']));
}
$connection = $connection ?: $app['config']['queue.default'];
$queue = $opts['queue'] ?: $app['config']->get("queue.connections.$connection.queue", 'default');
$num = fn ($v) => is_numeric($v) ? $v + 0 : 0;

$status = function ($job, string $status) {
    echo sprintf('[%s][%s] %s %s', Carbon::now()->format('Y-m-d H:i:s'), $job->getJobId(),
        str_pad("$status:", 11), $job->resolveName()), "\n";
};
$events = $app['events'];
$events->listen(JobProcessing::class, fn ($e) => $status($e->job, 'Processing'));
$events->listen(JobProcessed::class, fn ($e) => $status($e->job, 'Processed'));
$events->listen(JobFailed::class, function ($e) use ($status, $app) {
    $status($e->job, 'Failed');
    $app['queue.failer']->log($e->connectionName, $e->job->getQueue(), $e->job->getRawBody(), $e->exception);
});

$worker = new Worker(
    $app['queue'],
    $events,
    $app[ExceptionHandler::class],
    fn () => false,
    function () use ($app) {
        $app->forgetScopedInstances();
        return Facade::clearResolvedInstances();
    }
);
$app->instance('queue.worker', $worker);

$options = new WorkerOptions(
    $opts['name'],
    max($num($opts['backoff']), $num($opts['delay'])),
    $num($opts['memory']),
    $num($opts['timeout']),
    $num($opts['sleep']),
    $num($opts['tries']),
    $opts['force'],
    $opts['stop-when-empty'],
    $num($opts['max-jobs']),
    $num($opts['max-time']),
    $num($opts['rest'])
);

$worker->setName($opts['name'])->setCache($app['cache.store']);
$rc = $opts['once']
    ? $worker->runNextJob($connection, $queue, $options)
    : $worker->daemon($connection, $queue, $options);
exit(is_int($rc) ? $rc : 0);
