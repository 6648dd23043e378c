<?php
// Excerpt of a Laravel 12 (skeleton ≥ 12.1) application's config/database.php.
use Illuminate\Support\Str;

return [
    'redis' => [
        'options' => [
            'prefix' => env('REDIS_PREFIX', Str::slug(env('APP_NAME', 'laravel')).'-database-'),
        ],
    ],
];
