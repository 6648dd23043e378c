<?php
// Drives the failed-job provider and queue commands of the release bootstrap.php boots (5.8-13) against the database in
// LARAQ_FAILED_DB, so the Go tests can check both directions: rows Go wrote, read by PHP,
// and rows PHP wrote, read by Go.
//
//   php failed_op.php migrate              create the table with the release's own queue:failed-table
//                                          stub (13.9+: string connection/queue and an index; no
//                                          uuid before 8.x)
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
// table without uuid), the only database provider of 5.8-7.x. Row fields that are bytes (payload, exception) are base64 in the output.
require __DIR__ . '/bootstrap.php';

use Illuminate\Database\Schema\Blueprint;
use Illuminate\Queue\Failed\DatabaseFailedJobProvider;
use Illuminate\Support\Carbon;
use Symfony\Component\Console\Input\ArrayInput;
use Symfony\Component\Console\Output\BufferedOutput;

if (LARAQ_PEER_MAJOR === 8) {
    require_once 'Illuminate/Console/autoload.php'; // the shared trees autoload their own
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

/**
 * `php artisan queue:failed-table` (make:queue-failed-table from 11.x) and `migrate`: the
 * release's own Queue/Console/stubs/failed_jobs.stub, table name filled in as
 * FailedTableCommand does, run through the Schema facade on connection "default".
 */
function laraq_run_failed_table_stub($app, string $table): void
{
    $dir = dirname((new ReflectionClass(\Illuminate\Queue\Console\FailedTableCommand::class))->getFileName());
    $stub = file_get_contents($dir . '/stubs/failed_jobs.stub');
    $class = 'Create' . \Illuminate\Support\Str::studly($table) . 'Table'; // 8.x names the migration class
    $file = tempnam(sys_get_temp_dir(), 'laraq-migration-');
    file_put_contents($file, str_replace(['{{table}}', '{{tableClassName}}'], [$table, \Illuminate\Support\Str::studly($table)], $stub));
    $app->instance('db.schema', $app['db']->connection('default')->getSchemaBuilder());
    \Illuminate\Support\Facades\Schema::clearResolvedInstance('db.schema');
    $migration = require $file;
    unlink($file);
    if (! is_object($migration)) {
        $migration = new $class(); // 8.x stubs declare a class; 9.x+ return an anonymous one
    }
    $migration->up();
}

/** Calls a protected method of a console command. */
function laraq_call($object, string $method, ...$args)
{
    $m = new ReflectionMethod($object, $method);
    $m->setAccessible(true);
    return $m->invoke($object, ...$args);
}

/**
 * What RetryCommand::handle() does (9.x-13.x), without its console output: the ids from
 * the command's own getJobIds() (id, all, --queue, --range), then for each found record
 * JobRetryRequested, the command's own retryJob() and forget. Only queue:retry is needed
 * on 9+.
 */
function laraq_artisan_without_console($app, $command, string $name, array $args): array
{
    if ($name !== 'queue:retry') {
        return ['exit' => 1, 'output' => "$name cannot run on " . LARAQ_PEER_TAG . " without symfony/console 6\n"];
    }
    $command->setInput(new ArrayInput($args, $command->getDefinition()));
    $out = '';
    foreach (laraq_call($command, 'getJobIds') as $id) {
        $job = $app['queue.failer']->find($id);
        if ($job === null) {
            $out .= "Unable to find failed job with ID [$id].\n";
            continue;
        }
        $app['events']->dispatch(new \Illuminate\Queue\Events\JobRetryRequested($job));
        laraq_call($command, 'retryJob', $job);
        $app['queue.failer']->forget($id);
        $out .= "$id DONE\n";
    }
    return ['exit' => 0, 'output' => $out];
}

$op = $argv[1] ?? '';
switch ($op) {
    case 'migrate':
        if ($legacy && class_exists(\Illuminate\Queue\Failed\DatabaseUuidFailedJobProvider::class)) {
            // 8.x+ ships the uuid stub only: the columns of the 5.5-7.x stub, which 5.8-7.x
            // create with their own (below; failed/database's legacy schema test compares).
            $app['db']->connection('default')->getSchemaBuilder()->create($table, function (Blueprint $t) {
                $t->bigIncrements('id');
                $t->text('connection');
                $t->text('queue');
                $t->longText('payload');
                $t->longText('exception');
                $t->timestamp('failed_at')->useCurrent();
            });
        } else {
            laraq_run_failed_table_stub($app, $table);
        }
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
        $args = json_decode($argv[3] ?? '{}', true, 512, JSON_THROW_ON_ERROR);
        if (LARAQ_PEER_MAJOR >= 9) {
            // The 9+ console's OutputStyle needs symfony/console 6+, Debian ships 5.4: run
            // what the command's handle() runs instead of the command.
            laraq_out(laraq_artisan_without_console($app, $command, $argv[2], $args));
            break;
        }
        if (LARAQ_PEER_MAJOR <= 6) {
            // 5.8/6.x's execute() returns handle()'s value, null, which Debian's
            // symfony/console 5.4 refuses (it wants an int; 7.x casts). The same call as
            // execute(), as the command's code, which Symfony may return null from.
            $command->setCode(fn () => $app->call([$command, 'handle']));
        }
        $output = new BufferedOutput();
        $code = $command->run(new ArrayInput($args), $output);
        laraq_out(['exit' => $code, 'output' => $output->fetch()]);
        break;
    default:
        fwrite(STDERR, "usage: failed_op.php migrate|list|find|forget|flush|prune|log|artisan\n");
        exit(2);
}
