<?php
// Runs the real Illuminate\Queue\Worker of the release bootstrap.php boots (8.83, or
// 5.8-13 with LARAQ_PEER_MAJOR) the way `php artisan queue:work` does, against the Redis and
// cache of bootstrap.php (LARAQ_* environment variables). The Worker's constructor is the
// same on 6.x through 13.x (5.8 takes no maintenance callback: its QueueManager asks the
// application, which here answers "not down", as an Application without a down file
// does); WorkerOptions' first eleven arguments are the same on 8.x through 13.x, and
// 5.8-7.x take (delay, memory, timeout, sleep, maxTries, force, stopWhenEmpty). WorkCommand's
// wiring (events, failed-job logging, setCache) is the same on every release.
//
// usage: php work.php [CONNECTION] [--queue=a,b] [--once] [--stop-when-empty]
//          [--tries=1] [--backoff=0] [--timeout=60] [--sleep=3] [--rest=0]
//          [--max-jobs=0] [--max-time=0] [--memory=128] [--name=default] [--force]
//          [--now=UNIX]
// Defaults are queue:work's (--tries=0 on 5.8). CONNECTION defaults to "redis" (the only
// one configured), --queue to the connection's queue ("default"). --sleep and --rest may be
// fractional (0.1) to keep tests quick. --now freezes Carbon's clock (Carbon::setTestNow).
// 5.8-7.x name --backoff --delay (both are accepted, the larger wins as on 8+) and have no
// --rest, --max-time or --name: giving one of them there is an error. Their --max-jobs is
// played by the harness: after the Nth JobProcessing it sets the Worker's public
// shouldQuit, which the daemon checks after each job (stopIfNecessary), where 8.x counts
// --max-jobs.
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

// 5.8-7.x: WorkerOptions without a name, backoff is "delay", and no rest/max-jobs/max-time.
$legacy = ! method_exists(Worker::class, 'setName');
$opts = [
    'queue' => null, 'once' => false, 'stop-when-empty' => false, 'tries' => LARAQ_PEER_MAJOR === 5 ? '0' : '1',
    'backoff' => '0', 'delay' => '0', 'timeout' => '60', 'sleep' => '3', 'rest' => '0', 'max-jobs' => '0',
    'max-time' => '0', 'memory' => '128', 'name' => 'default', 'force' => false, 'now' => null,
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

foreach (['rest' => '0', 'max-time' => '0', 'name' => 'default'] as $name => $default) {
    if ($legacy && (string) $opts[$name] !== $default) {
        fwrite(STDERR, "work.php: queue:work of " . LARAQ_PEER_TAG . " has no --$name\n");
        exit(2);
    }
}

$manager = $app['queue'];
if (LARAQ_PEER_MAJOR === 5) {
    // 5.8's Worker asks QueueManager::isDownForMaintenance(), which asks the application;
    // the harness' container is no Application, so the manager answers for it.
    $manager = new class($app) extends \Illuminate\Queue\QueueManager {
        public function isDownForMaintenance()
        {
            return false;
        }
    };
    foreach (['connectors', 'connections'] as $prop) {
        $p = new ReflectionProperty(\Illuminate\Queue\QueueManager::class, $prop);
        $p->setAccessible(true);
        $p->setValue($manager, $p->getValue($app['queue']));
    }
}
$worker = new Worker(
    $manager,
    $events,
    $app[ExceptionHandler::class],
    fn () => false,
    function () use ($app) {
        method_exists($app, 'forgetScopedInstances') && $app->forgetScopedInstances();
        return Facade::clearResolvedInstances();
    }
);
$app->instance('queue.worker', $worker);

$backoff = max($num($opts['backoff']), $num($opts['delay']));
$options = $legacy
    ? new WorkerOptions($backoff, $num($opts['memory']), $num($opts['timeout']), $num($opts['sleep']),
        $num($opts['tries']), $opts['force'], $opts['stop-when-empty'])
    : new WorkerOptions(
        $opts['name'],
        $backoff,
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

if ($legacy && $num($opts['max-jobs']) > 0) {
    $maxJobs = $num($opts['max-jobs']);
    $events->listen(JobProcessing::class, function () use ($worker, $maxJobs) {
        static $n = 0;
        if (++$n >= $maxJobs) {
            $worker->shouldQuit = true;
        }
    });
}
$legacy || $worker->setName($opts['name']);
$worker->setCache($app['cache.store']);
$rc = $opts['once']
    ? $worker->runNextJob($connection, $queue, $options)
    : $worker->daemon($connection, $queue, $options);
exit(is_int($rc) ? $rc : 0);
