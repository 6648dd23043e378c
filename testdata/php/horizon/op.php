<?php
// Drives laravel/horizon's real PHP code on a Laravel 10.x/11.x peer (see bootstrap.php)
// for the Horizon interop tests: one operation per run, JSON in on stdin, JSON out.
//
// usage: php op.php OP
//   dispatch   {"jobs": [{"kind": "step|quiet|marked|tagged", "plan": [...], "tries": 3,
//               "user": 1|null, "users": [1,2]|null, "note": "...", "vanilla": false}, ...],
//               "queue": "default"}
//              pushes each Step job (jobs.php) through Horizon's RedisQueue (JobPushed:
//              StoreJob, StoreMonitoredTags), or through the framework's own RedisQueue
//              when vanilla (Horizon sees nothing). Prints [{"id": the payload's uuid,
//              "payload": the bytes pushed}, ...].
//   work       {"queue": "default", "max": 50}: Worker::runNextJob until the queue (ready,
//              delayed and reserved) is empty, at most max times, as queue:work with
//              Horizon's connector and listeners (JobReserved, JobReleased, JobDeleted,
//              JobsMigrated, JobFailed). Prints {"runs": N}.
//   pop        {"queue": "default"}: Horizon's RedisQueue::pop alone (migrations with
//              JobsMigrated, the pop script, JobReserved): a worker that took a job and
//              died. Prints {"id": the job's uuid or null}.
//   retry      {"id": failed job id}: Horizon's RetryFailedJob (the dashboard's retry
//              button). Prints {"id": the new job id}.
//   monitor    {"tags": [...]}: TagRepository::monitor, the dashboard's "monitor tag".
//   read       {"ids": [...], "tags": [...], "snapshot": false}: everything the dashboard
//              shows, read through Horizon's repositories and controllers (see laraq_read).
//   prepare    {"cases": [{"uuid": "...", "kind": "step|quiet|marked|tagged|listener|
//               broadcast|mail|notification|string", "user": 1, "users": [...], "note": "...",
//               "data": the data of a string job}]}:
//              for each case, with Str::uuid() fixed to the case's uuid, the payload the
//              framework's RedisQueue::createPayload writes ("plain", what a Go dispatch
//              builds) and the bytes Horizon's RedisQueue::push stores ("horizon":
//              id = uuid, JobPayload::prepare; not pushed, null, with "push": false).
//              Prints [{"plain": ..., "horizon": ...}]. With "mode": "later" the job goes
//              through Horizon's later() (delay "delay" seconds, default 5; "plain" is the
//              framework's later() payload, "horizon" the :delayed member); with "mode":
//              "raw" "plain" goes through Horizon's pushRaw() with no job object.
//   present    {"environment": "...", "basename": "...", "paused": false, "options": {...}}:
//              a master supervisor (MasterSupervisor named basename-XXXX) with one
//              supervisor (Supervisor with SupervisorOptions::fromArray(options)) written
//              by RedisMasterSupervisorRepository::update and RedisSupervisorRepository::update,
//              as a running `php artisan horizon` does every second. Prints {"master":
//              name, "pid": getmypid()}.
//   command    {"queue": "master:NAME" or a supervisor name, "command": class, "options": {}}:
//              RedisHorizonCommandQueue::push, as ProvisioningPlan and SupervisorProcess do.
//   pending    {"queue": ...}: RedisHorizonCommandQueue::pending. Prints the commands.
//   signal     {"command": "terminate|pause|continue"}: the pid selection of
//              horizon:terminate / horizon:pause / horizon:continue (masters whose name
//              starts with MasterSupervisor::basename()) and posix_kill with their signal.
//              Prints {"basename": ..., "signalled": [pids]}.
require __DIR__ . '/bootstrap.php';
require_once __DIR__ . '/jobs.php';

use Illuminate\Contracts\Debug\ExceptionHandler;
use Illuminate\Contracts\Events\Dispatcher;
use Illuminate\Queue\Worker;
use Illuminate\Queue\WorkerOptions;
use Illuminate\Support\Str;
use Laravel\Horizon\Contracts\JobRepository;
use Laravel\Horizon\Contracts\MasterSupervisorRepository;
use Laravel\Horizon\Contracts\MetricsRepository;
use Laravel\Horizon\Contracts\SupervisorRepository;
use Laravel\Horizon\Contracts\TagRepository;
use Laravel\Horizon\Contracts\WorkloadRepository;
use Laraq\HorizonTest;

$app = laraq_horizon_boot();
$op = $argv[1] ?? '';
$in = json_decode((string) stream_get_contents(STDIN) ?: '{}', true, 512, JSON_THROW_ON_ERROR);

function laraq_out($v): void
{
    echo json_encode($v, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR), "\n";
}

function laraq_step(array $in): HorizonTest\Step
{
    $class = [
        'step' => HorizonTest\Step::class, 'quiet' => HorizonTest\QuietStep::class,
        'marked' => HorizonTest\MarkedQuietStep::class, 'tagged' => HorizonTest\TaggedStep::class,
    ][$in['kind'] ?? 'step'];
    $user = isset($in['user']) ? HorizonTest\User::findOrFail($in['user']) : null;
    $users = isset($in['users']) ? HorizonTest\User::findMany($in['users']) : null;
    return new $class($in['plan'] ?? ['ok'], $in['tries'] ?? 3, $user, $users, $in['note'] ?? '');
}

/** The job of a prepare case: a Step, or one of the framework's queued wrappers. */
function laraq_prepare_job(array $in)
{
    $user = fn ($id) => HorizonTest\User::findOrFail($id);
    return match ($in['kind']) {
        'listener' => new \Illuminate\Events\CallQueuedListener(HorizonTest\Listener::class, 'handle', [new HorizonTest\Event($user($in['user']), $in['note'] ?? '')]),
        'broadcast' => new \Illuminate\Broadcasting\BroadcastEvent(new HorizonTest\BroadcastThing($user($in['user']))),
        'mail' => new \Illuminate\Mail\SendQueuedMailable(new HorizonTest\Mail($user($in['user']))),
        'notification' => new \Illuminate\Notifications\SendQueuedNotifications(
            HorizonTest\User::findMany($in['users']), new HorizonTest\Notice($user($in['user'])), ['mail']),
        'string' => 'Laraq\HorizonTest\StringJob@handle',
        default => laraq_step($in),
    };
}

/** Horizon's records for the dashboard, decoded as its controllers decode them. */
function laraq_decode_job($job)
{
    if ($job === null) {
        return null;
    }
    $job = clone $job;
    $job->payload = json_decode($job->payload, true);
    $job->context = json_decode($job->context ?? '', true);
    $job->retried_by = collect(! is_null($job->retried_by) ? json_decode($job->retried_by, true) : [])
        ->sortByDesc('retried_at')->values()->all();
    return (array) $job;
}

function laraq_list($jobs): array
{
    return $jobs->map(fn ($j) => ['id' => $j->id, 'index' => $j->index, 'status' => $j->status])->values()->all();
}

function laraq_read(array $in): array
{
    $app = laraq_horizon_boot();
    $jobs = $app[JobRepository::class];
    $metrics = $app[MetricsRepository::class];
    $tags = $app[TagRepository::class];
    $out = ['records' => []];
    foreach ($in['ids'] ?? [] as $id) {
        // JobsController::show / FailedJobsController::show: getJobs([$id])->first().
        $rec = $jobs->getJobs([$id])->first();
        $out['records'][$id] = laraq_decode_job($rec);
        $out['failed_lookup'][$id] = $jobs->findFailed($id) !== null;
    }
    $out['lists'] = [
        'recent' => laraq_list($jobs->getRecent()),
        'pending' => laraq_list($jobs->getPending()),
        'completed' => laraq_list($jobs->getCompleted()),
        'silenced' => laraq_list($jobs->getSilenced()),
        'failed' => laraq_list($jobs->getFailed()),
    ];
    $out['counts'] = [
        'recent' => $jobs->countRecent(), 'pending' => $jobs->countPending(),
        'completed' => $jobs->countCompleted(), 'silenced' => $jobs->countSilenced(),
        'failed' => $jobs->countFailed(), 'recent_failed' => $jobs->countRecentlyFailed(),
        'total_recent' => $jobs->totalRecent(), 'total_failed' => $jobs->totalFailed(),
    ];
    $out['metrics'] = ['jobs' => [], 'queues' => []];
    foreach ($metrics->measuredJobs() as $name) {
        $out['metrics']['jobs'][$name] = ['throughput' => $metrics->throughputForJob($name), 'runtime' => $metrics->runtimeForJob($name)];
    }
    foreach ($metrics->measuredQueues() as $q) {
        $out['metrics']['queues'][$q] = ['throughput' => $metrics->throughputForQueue($q), 'runtime' => $metrics->runtimeForQueue($q)];
    }
    $out['metrics']['throughput'] = $metrics->throughput();
    $out['tags'] = ['monitoring' => collect($tags->monitoring())->sort()->values()->all()];
    foreach ($in['tags'] ?? [] as $tag) {
        $out['tags'][$tag] = [
            'count' => $tags->count($tag),
            'failed_count' => $tags->count('failed:' . $tag),
            'jobs' => $tags->paginate($tag, 0, 25),
            'failed_jobs' => $tags->paginate('failed:' . $tag, 0, 50),
        ];
    }
    // MonitoringController::index.
    $out['tags']['index'] = collect($tags->monitoring())->map(fn ($t) => [
        'tag' => $t, 'count' => $tags->count($t) + $tags->count('failed:' . $t),
    ])->sortBy('tag')->values()->all();

    $masters = $app[MasterSupervisorRepository::class];
    $supervisors = $app[SupervisorRepository::class];
    $out['masters'] = array_values(array_map(fn ($m) => (array) $m, $masters->all()));
    $out['supervisors'] = array_values(array_map(fn ($s) => (array) $s, $supervisors->all()));
    $out['longest_timeout'] = $supervisors->longestActiveTimeout();
    $out['workload'] = (new \Laravel\Horizon\Http\Controllers\WorkloadController())->index($app[WorkloadRepository::class]);
    $out['dashboard_masters'] = collect((new \Laravel\Horizon\Http\Controllers\MasterSupervisorController())
        ->index($masters, $supervisors))->map(fn ($m) => json_decode(json_encode($m), true))->all();
    $stats = (new \Laravel\Horizon\Http\Controllers\DashboardStatsController())->index();
    $stats['wait'] = $stats['wait']->all();
    $out['stats'] = $stats;
    if ($in['snapshot'] ?? false) {
        $metrics->snapshot();
        foreach ($metrics->measuredJobs() as $name) {
            $out['snapshots']['jobs'][$name] = (new \Laravel\Horizon\Http\Controllers\JobMetricsController($metrics))->show($name)->all();
        }
        foreach ($metrics->measuredQueues() as $q) {
            $out['snapshots']['queues'][$q] = (new \Laravel\Horizon\Http\Controllers\QueueMetricsController($metrics))->show($q)->all();
        }
    }
    return $out;
}

switch ($op) {
    case 'dispatch':
        $queue = $in['queue'] ?? 'default';
        $out = [];
        foreach ($in['jobs'] as $job) {
            $conn = ($job['vanilla'] ?? false) ? laraq_horizon_vanilla_queue() : $app['queue']->connection('redis');
            $conn->push(laraq_step($job), '', $queue);
            // The framework's push returns the Redis driver's random id; Horizon keys a
            // job by its uuid (JobPayload::id: uuid ?? id).
            $raw = $app['redis']->connection('default')->lindex('queues:' . $queue, -1);
            $out[] = ['id' => json_decode($raw, true)['uuid'], 'payload' => $raw];
        }
        laraq_out($out);
        break;

    case 'work':
        $queue = $in['queue'] ?? 'default';
        $worker = new Worker($app['queue'], $app[Dispatcher::class], $app[ExceptionHandler::class], fn () => false);
        $worker->setCache($app['cache.store']);
        $options = new WorkerOptions('default', 0, 128, 60, 0, 0);
        $runs = 0;
        while ($runs < ($in['max'] ?? 50) && $app['queue']->connection('redis')->size($queue) > 0) {
            $worker->runNextJob('redis', $queue, $options);
            $runs++;
        }
        laraq_out(['runs' => $runs]);
        break;

    case 'pop':
        $job = $app['queue']->connection('redis')->pop($in['queue'] ?? 'default');
        laraq_out(['id' => $job ? $job->uuid() : null]);
        break;

    case 'retry':
        (new \Laravel\Horizon\Jobs\RetryFailedJob($in['id']))->handle($app['queue'], $app[JobRepository::class]);
        $retries = json_decode($app['redis']->connection('horizon')->hget($in['id'], 'retried_by'), true);
        laraq_out(['id' => end($retries)['id']]);
        break;

    case 'monitor':
        foreach ($in['tags'] as $tag) {
            $app[TagRepository::class]->monitor($tag);
        }
        laraq_out(['ok' => true]);
        break;

    case 'read':
        laraq_out(laraq_read($in));
        break;

    case 'present':
        \Laravel\Horizon\MasterSupervisor::determineNameUsing(fn () => $in['basename']);
        $master = new \Laravel\Horizon\MasterSupervisor($in['environment']);
        $options = \Laravel\Horizon\SupervisorOptions::fromArray(['name' => $master->name . ':' . $in['options']['name']] + $in['options']);
        $supervisor = new \Laravel\Horizon\Supervisor($options);
        if ($in['paused'] ?? false) {
            $master->working = false;
            $supervisor->working = false;
        }
        $master->supervisors = collect([(object) ['name' => $supervisor->name]]);
        $app[MasterSupervisorRepository::class]->update($master);
        $app[SupervisorRepository::class]->update($supervisor);
        laraq_out(['master' => $master->name, 'supervisor' => $supervisor->name, 'pid' => getmypid()]);
        break;

    case 'prepare':
        $out = [];
        $queue = $app['queue']->connection('redis');
        $vanilla = laraq_horizon_vanilla_queue();
        $create = new ReflectionMethod($vanilla, 'createPayload');
        $create->setAccessible(true);
        foreach ($in['cases'] as $case) {
            Str::createUuidsUsing(fn () => \Ramsey\Uuid\Uuid::fromString($case['uuid']));
            $job = laraq_prepare_job($case);
            $data = $case['data'] ?? '';
            $mode = $in['mode'] ?? 'push';
            $redis = $app['redis']->connection('default');
            // The framework's later() passes the delay to createPayload (12.11+ writes it
            // as "delay"; earlier releases take no fourth argument and ignore it).
            $plain = $mode === 'later'
                ? $create->invoke($vanilla, $job, 'queues:default', $data, $in['delay'] ?? 5)
                : $create->invoke($vanilla, $job, 'queues:default', $data);
            if (! ($in['push'] ?? true)) {
                $out[] = ['plain' => $plain, 'horizon' => null];
                continue;
            }
            if ($mode === 'later') {
                $redis->del('queues:default:delayed');
                $queue->later($in['delay'] ?? 5, $job, $data, 'default');
                $out[] = ['plain' => $plain, 'horizon' => $redis->zrange('queues:default:delayed', 0, -1)[0] ?? null];
                continue;
            }
            if ($mode === 'raw') {
                // Queue::pushRaw with no job pushed before on this queue object.
                $last = new ReflectionProperty($queue, 'lastPushed');
                $last->setAccessible(true);
                $last->setValue($queue, null);
                $queue->pushRaw($plain, 'default');
            } else {
                $queue->push($job, $data, 'default');
            }
            $out[] = ['plain' => $plain, 'horizon' => $redis->lindex('queues:default', -1)];
        }
        Str::createUuidsNormally();
        laraq_out($out);
        break;

    case 'command':
        $app[\Laravel\Horizon\Contracts\HorizonCommandQueue::class]->push($in['queue'], $in['command'], $in['options'] ?? []);
        laraq_out(['ok' => true]);
        break;

    case 'pending':
        laraq_out($app[\Laravel\Horizon\Contracts\HorizonCommandQueue::class]->pending($in['queue']));
        break;

    case 'signal':
        $signals = ['terminate' => SIGTERM, 'pause' => SIGUSR2, 'continue' => SIGCONT];
        $masters = collect($app[MasterSupervisorRepository::class]->all())
            ->filter(fn ($m) => Str::startsWith($m->name, \Laravel\Horizon\MasterSupervisor::basename()));
        $pids = [];
        foreach ($masters as $m) {
            if (posix_kill((int) $m->pid, $signals[$in['command']])) {
                $pids[] = (int) $m->pid;
            }
        }
        laraq_out(['basename' => \Laravel\Horizon\MasterSupervisor::basename(), 'signalled' => $pids]);
        break;

    default:
        fwrite(STDERR, "op.php: unknown operation '$op'\n");
        exit(2);
}
