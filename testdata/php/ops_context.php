<?php
// Laravel Context (11+) round trip: for each JSON line of stdin, the value a payload
// carries under "illuminate:log:context", what the release's worker does with it —
// Repository::hydrate() (JobProcessing), then Repository::dehydrate() (the payload hook
// of every job it dispatches) — printed as createPayload encodes it
// (json_encode, JSON_UNESCAPED_UNICODE), or "null" when dehydrate() gives null.
//
// usage: php ops_context.php < lines.jsonl   (LARAQ_PEER_MAJOR 11, 12 or 13)
require __DIR__ . '/bootstrap.php';
require_once __DIR__ . '/jobs.php';

$app = laraq_boot();
if (! class_exists(\Illuminate\Log\Context\Repository::class)) {
    fwrite(STDERR, "ops_context.php: " . LARAQ_PEER_TAG . " has no Laravel Context\n");
    exit(2);
}
$repo = $app->make(\Illuminate\Log\Context\Repository::class);
while (($line = fgets(STDIN)) !== false) {
    if (trim($line) === '') {
        continue;
    }
    $repo->hydrate(json_decode($line, true));
    echo json_encode($repo->dehydrate(), JSON_UNESCAPED_UNICODE), "\n";
}
