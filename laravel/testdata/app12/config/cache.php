<?php
// Excerpt of a Laravel 12 (skeleton ≥ 12.1) application's config/cache.php.
use Illuminate\Support\Str;

return [
    'default' => env('CACHE_STORE', 'database'),
    'prefix' => env('CACHE_PREFIX', Str::slug(env('APP_NAME', 'laravel')).'-cache-'),
];
