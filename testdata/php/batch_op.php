<?php
// Reads a job batch back through the release's own BatchRepository (what Bus::findBatch()
// returns), from the job_batches table of LARAQ_FAILED_DB.
//
// usage: php batch_op.php find BATCH_ID
// stdout: one JSON object: {"found": bool, "id", "name", "totalJobs", "pendingJobs",
//   "failedJobs", "failedJobIds", "processedJobs", "progress", "cancelled", "finished",
//   "allowsFailures", "cancelledAt", "finishedAt"} (timestamps as Unix seconds or null).
require __DIR__ . '/bootstrap.php';

$app = laraq_boot();
[$op, $id] = array_pad(array_slice($argv, 1), 2, null);
if ($op !== 'find' || $id === null) {
    fwrite(STDERR, "usage: batch_op.php find BATCH_ID\n");
    exit(2);
}
$batch = $app->make(\Illuminate\Bus\BatchRepository::class)->find($id);
if ($batch === null) {
    echo json_encode(['found' => false]), "\n";
    exit(0);
}
echo json_encode([
    'found' => true,
    'id' => $batch->id,
    'name' => $batch->name,
    'totalJobs' => $batch->totalJobs,
    'pendingJobs' => $batch->pendingJobs,
    'failedJobs' => $batch->failedJobs,
    'failedJobIds' => $batch->failedJobIds,
    'processedJobs' => $batch->processedJobs(),
    'progress' => $batch->progress(),
    'cancelled' => $batch->cancelled(),
    'finished' => $batch->finished(),
    'allowsFailures' => $batch->allowsFailures(),
    'cancelledAt' => $batch->cancelledAt ? $batch->cancelledAt->getTimestamp() : null,
    'finishedAt' => $batch->finishedAt ? $batch->finishedAt->getTimestamp() : null,
], JSON_UNESCAPED_SLASHES), "\n";
