<?php
// Boots the release LARAQ_PEER_MAJOR names (bootstrap.php) without touching Redis and prints
// what booted, as one JSON object:
//   {"major": 12, "tag": "v12.67.0", "php": "8.2.x", "redis_prefix": "<options.prefix>",
//    "cache_prefix": "<the cache store's key prefix>", "components": {"notifications": bool,
//    "mail": bool, "broadcasting": bool, "context": bool, "encrypted": bool, "unique": bool,
//    "batches": bool}}
// internal/testenv's NeedPeer runs it once per major to decide whether that peer can run.
require __DIR__ . '/bootstrap.php';

$app = laraq_boot();
echo json_encode([
    'major' => LARAQ_PEER_MAJOR,
    'tag' => LARAQ_PEER_TAG,
    'php' => PHP_VERSION,
    'redis_prefix' => laraq_redis_prefix(),
    'cache_prefix' => $app['cache.store']->getStore()->getPrefix(),
    'components' => [
        'notifications' => class_exists(\Illuminate\Notifications\SendQueuedNotifications::class),
        'mail' => class_exists(\Illuminate\Mail\SendQueuedMailable::class),
        'broadcasting' => class_exists(\Illuminate\Broadcasting\BroadcastEvent::class),
        'context' => class_exists(\Illuminate\Log\Context\Repository::class),
        'encrypted' => interface_exists(\Illuminate\Contracts\Queue\ShouldBeEncrypted::class),
        'unique' => interface_exists(\Illuminate\Contracts\Queue\ShouldBeUnique::class),
        'batches' => trait_exists(\Illuminate\Bus\Batchable::class),
    ],
], JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR), "\n";
