<?php
// Prints what Laravel 8's own WorkCommand::writeOutput writes for a job at each status,
// with Symfony's console output decorated (ANSI colours, as on a terminal) or not.
//
//   php ops_workoutput.php DECORATED(0|1) UNIX_TIME PAYLOAD_JSON
// Output: one JSON object {"starting": "...", "success": "...", "failed": "..."}.
require __DIR__ . '/bootstrap.php';
require_once 'Illuminate/Console/autoload.php';

use Illuminate\Console\OutputStyle;
use Illuminate\Queue\Console\WorkCommand;
use Illuminate\Queue\Jobs\RedisJob;
use Illuminate\Support\Carbon;
use Symfony\Component\Console\Input\ArrayInput;
use Symfony\Component\Console\Output\BufferedOutput;
use Symfony\Component\Console\Output\OutputInterface;

$app = laraq_boot();
[$decorated, $now, $payload] = [(bool) ($argv[1] ?? 0), (int) ($argv[2] ?? 0), $argv[3] ?? '{}'];
Carbon::setTestNow(Carbon::createFromTimestamp($now));

$command = new WorkCommand($app['queue.worker'] ?? new \Illuminate\Queue\Worker(
    $app['queue'], $app['events'], $app[\Illuminate\Contracts\Debug\ExceptionHandler::class], fn () => false
), $app['cache.store']);
$command->setLaravel($app);
$job = new RedisJob($app, $app['queue']->connection('redis'), $payload, $payload, 'redis', 'default');

$out = [];
foreach (['starting', 'success', 'failed'] as $status) {
    $buffer = new BufferedOutput(OutputInterface::VERBOSITY_NORMAL, $decorated);
    $command->setOutput(new OutputStyle(new ArrayInput([]), $buffer));
    (function () use ($job, $status) {
        $this->writeOutput($job, $status);
    })->call($command);
    $out[$status] = $buffer->fetch();
}
echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
