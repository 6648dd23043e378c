<?php
// Excerpt of a Laravel 8 application's config/app.php: the timezone is written here.
return [
    'name' => env('APP_NAME', 'Laravel'),
    'timezone' => 'UTC',
];
