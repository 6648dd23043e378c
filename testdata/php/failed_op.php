<?php
// Drives the failed-job provider and queue commands of the release bootstrap.php boots against the database in
// LARAQ_FAILED_DB, so the Go tests can check both directions: rows Go wrote, read by PHP,
// and rows PHP wrote, read by Go.
//
//   php failed_op.php migrate              create the table as `queue:failed-table` + migrate would
//   php failed_op.php list                 provider->all() as JSON
//   php failed_op.php find ID              provider->find(ID) as JSON (null when absent)
//   php failed_op.php forget ID            {"deleted": bool}
//   php failed_op.php flush                provider->flush()
//   php failed_op.php prune 'Y-m-d H:i:s'  provider->prune(date in the app timezone) → {"deleted": n}
//   php failed_op.php log < JSON           provider->log(...) with {connection, queue, payload_b64,
//                                          exception_b64 (optional: else a real RuntimeException)}
//   php failed_op.php artisan NAME [ARGS…] runs queue:failed / queue:retry / queue:forget /
//                                          queue:flush; ARGS as JSON object of console input
//
// LARAQ_FAILED_DRIVER=database selects the legacy DatabaseFailedJobProvider (integer ids,
// table without uuid). Row fields that are bytes (payload, exception) are base64 in the output.
require __DIR__ . '/bootstrap.php';

use Illuminate\Database\Schema\Blueprint;
use Illuminate\Queue\Failed\DatabaseFailedJobProvider;
use Illuminate\Support\Carbon;
use Symfony\Component\Console\Input\ArrayInput;
use Symfony\Component\Console\Output\BufferedOutput;

if (LARAQ_PEER_MAJOR < 10) {
    require_once 'Illuminate/Console/autoload.php'; // the 10-13 trees autoload their own
}

$app = laraq_boot();
$table = laraq_env('LARAQ_FAILED_TABLE', 'failed_jobs');
$legacy = laraq_env('LARAQ_FAILED_DRIVER', 'database-uuids') === 'database';
if (laraq_env('LARAQ_FAILED_DB') === null) {
    fwrite(STDERR, "LARAQ_FAILED_DB is not set\n");
    exit(2);
}
if ($legacy) {
    $app->instance('queue.failer', new DatabaseFailedJobProvider($app['db'], 'default', $table));
}
$failer = $app['queue.failer'];

function laraq_row($row)
{
    if ($row === null) {
        return null;
    }
    $row = (array) $row;
    $out = ['keys' => array_keys($row)];
    foreach ($row as $k => $v) {
        if ($k === 'payload' || $k === 'exception') {
            $out[$k . '_b64'] = base64_encode((string) $v);
        } else {
            $out[$k] = $v;
            $out[$k . '_type'] = gettype($v);
        }
    }
    return $out;
}

function laraq_out($v): void
{
    echo json_encode($v, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
}

$op = $argv[1] ?? '';
switch ($op) {
    case 'migrate':
        // The columns of Illuminate/Queue/Console/stubs/failed_jobs.stub (8.x-10.x; the
        // 11.x+ skeleton's jobs migration has the same), or of the 5.5–7.x stub for the
        // legacy driver.
        $app['db']->connection('default')->getSchemaBuilder()->create($table, function (Blueprint $t) use ($legacy) {
            if ($legacy) {
                $t->bigIncrements('id');
            } else {
                $t->id();
                $t->string('uuid')->unique();
            }
            $t->text('connection');
            $t->text('queue');
            $t->longText('payload');
            $t->longText('exception');
            $t->timestamp('failed_at')->useCurrent();
        });
        laraq_out(['ok' => true]);
        break;
    case 'list':
        laraq_out(array_map('laraq_row', $failer->all()));
        break;
    case 'find':
        laraq_out(laraq_row($failer->find($argv[2])));
        break;
    case 'forget':
        laraq_out(['deleted' => $failer->forget($argv[2])]);
        break;
    case 'flush':
        $failer->flush();
        laraq_out(['ok' => true]);
        break;
    case 'prune':
        laraq_out(['deleted' => $failer->prune(Carbon::parse($argv[2]))]);
        break;
    case 'log':
        $in = json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
        $exception = isset($in['exception_b64'])
            ? base64_decode($in['exception_b64'])
            : new RuntimeException($in['message'] ?? 'failed in PHP');
        $id = $failer->log($in['connection'], $in['queue'], base64_decode($in['payload_b64']), $exception);
        laraq_out(['id' => $id, 'exception_b64' => base64_encode((string) $exception)]);
        break;
    case 'artisan':
        $classes = [
            'queue:failed' => \Illuminate\Queue\Console\ListFailedCommand::class,
            'queue:retry' => \Illuminate\Queue\Console\RetryCommand::class,
            'queue:forget' => \Illuminate\Queue\Console\ForgetFailedCommand::class,
            'queue:flush' => \Illuminate\Queue\Console\FlushFailedCommand::class,
        ];
        $class = $classes[$argv[2] ?? ''] ?? null;
        if ($class === null) {
            fwrite(STDERR, "unknown command\n");
            exit(2);
        }
        $command = new $class();
        $command->setLaravel($app);
        $output = new BufferedOutput();
        $input = new ArrayInput(json_decode($argv[3] ?? '{}', true, 512, JSON_THROW_ON_ERROR));
        $code = $command->run($input, $output);
        laraq_out(['exit' => $code, 'output' => $output->fetch()]);
        break;
    default:
        fwrite(STDERR, "usage: failed_op.php migrate|list|find|forget|flush|prune|log|artisan\n");
        exit(2);
}
