<?php
// Excerpt of a Laravel 8 application's config/cache.php.
use Illuminate\Support\Str;

return [
    'default' => env('CACHE_DRIVER', 'file'),
    'prefix' => env('CACHE_PREFIX', Str::slug(env('APP_NAME', 'laravel'), '_').'_cache'),
];
