<?php
// Excerpt of a Laravel 12 application's config/app.php.
return [
    'timezone' => env('APP_TIMEZONE', 'UTC'),
];
