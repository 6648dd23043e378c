<?php
// Says what the release bootstrap.php boots makes of queued payloads: the command its
// worker would run, as CallQueuedHandler gets it from unserialize() (class defaults for
// the properties the payload leaves out, SerializesModels restoring models from the
// models' database), without running anything.
//
// usage: php unserialize.php < payloads.jsonl
// stdin:  one queued payload per line, the exact bytes (a JSON object).
// stdout: one JSON line per payload:
//   object job: {"class": get_class($command), "props": laraq_props($command)}: every
//               initialized property in PHP's order by mangled name, except the runtime
//               job, as the test jobs of jobs.php report them (restored models and
//               collections in short form, nested values as canon.php describes them)
//   string job: {"job": "Class@method", "data": canon(data)}
//   on an error {"error": "..."} (the run then exits 1 after the remaining lines).
//
// Job classes: jobs.php and every jobs_*.php next to this file.
require __DIR__ . '/bootstrap.php';
require_once __DIR__ . '/jobs.php';
foreach (glob(__DIR__ . '/jobs_*.php') ?: [] as $file) {
    require_once $file;
}

laraq_boot();
laraq_jobs_boot();

$rc = 0;
while (($line = fgets(STDIN)) !== false) {
    if (trim($line) === '') {
        continue;
    }
    try {
        $payload = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
        if (! isset($payload['data']['command'])) {
            $out = ['job' => $payload['job'] ?? null, 'data' => canon($payload['data'] ?? null)];
        } else {
            $command = unserialize($payload['data']['command']);
            if (! is_object($command)) {
                throw new RuntimeException('data.command is not an object');
            }
            $out = ['class' => get_class($command), 'props' => laraq_props($command)];
        }
        echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
    } catch (Throwable $e) {
        echo json_encode(['error' => get_class($e) . ': ' . $e->getMessage()]), "\n";
        $rc = 1;
    }
}
exit($rc);
