<?php
// Dispatches App\Jobs\ChaosJob (jobs_chaos.php) in bulk through Laravel 8's own Bus
// dispatcher and RedisQueue (connection "redis" of bootstrap.php, LARAQ_* environment
// variables), for the chaos suite. Unlike dispatch.php it does not read each payload
// back (that costs a whole LRANGE per job), so tens of thousands of jobs go out in
// seconds.
//
// usage: php dispatch_chaos.php < requests.jsonl
//   stdin:  one JSON object per line: {"key": K, "actions": [...], "queue": ?, "delay": ?}
//   stdout: one line per request: {"key": K, "id": <the id Laravel returned>}
//           or {"key": K, "error": "..."} (the run then exits 1 after the remaining lines)
require __DIR__ . '/bootstrap.php';
require_once __DIR__ . '/jobs_chaos.php';

use App\Jobs\ChaosJob;
use Illuminate\Contracts\Bus\Dispatcher;

laraq_boot();
$bus = app(Dispatcher::class);
$rc = 0;
while (($line = fgets(STDIN)) !== false) {
    if (trim($line) === '') {
        continue;
    }
    $key = null;
    try {
        $spec = json_decode($line, true, 64, JSON_THROW_ON_ERROR);
        $key = (string) ($spec['key'] ?? '');
        $job = new ChaosJob();
        $job->key = $key;
        $job->actions = array_values((array) ($spec['actions'] ?? ['ok']));
        if (isset($spec['queue'])) {
            $job->onQueue($spec['queue']);
        }
        if (isset($spec['delay'])) {
            $job->delay($spec['delay']);
        }
        $id = $bus->dispatchToQueue($job);
        echo json_encode(['key' => $key, 'id' => $id], JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR), "\n";
    } catch (Throwable $e) {
        echo json_encode(['key' => $key, 'error' => get_class($e) . ': ' . $e->getMessage()]), "\n";
        $rc = 1;
    }
}
exit($rc);
