<?php
// Excerpt of a Laravel 8 application's config/database.php: what laraq reads.
use Illuminate\Support\Str;

return [
    'default' => env('DB_CONNECTION', 'mysql'),
    'redis' => [
        'client' => env('REDIS_CLIENT', 'phpredis'),
        'options' => [
            'cluster' => env('REDIS_CLUSTER', 'redis'),
            'prefix' => env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_database_'),
        ],
    ],
];
