<?php
// Evaluates an application's config/horizon.php as Laravel does, and prints the settings
// laraq reads as JSON: {"prefix", "use", "trim", "silenced", "environments"} (environment
// keys only). HorizonServiceProvider merges the package's config file under the
// application's one level deep (mergeConfigFrom: array_merge), which this script does with
// the package file given second. env() reads the process environment (Debian's Laravel 8
// Support component: the same env() and Str::slug as 10.x/11.x).
//
// usage: php config.php APP_CONFIG PACKAGE_CONFIG
error_reporting(E_ALL & ~E_DEPRECATED);
require_once 'Illuminate/Support/autoload.php';

[$app, $package] = [$argv[1] ?? '', $argv[2] ?? ''];
if ($app === '' || $package === '') {
    fwrite(STDERR, "usage: config.php APP_CONFIG PACKAGE_CONFIG\n");
    exit(2);
}
$config = array_merge(require $package, require $app);
echo json_encode([
    'prefix' => $config['prefix'],
    'use' => $config['use'] ?? null,
    'trim' => $config['trim'] ?? null,
    'silenced' => $config['silenced'] ?? null,
    'environments' => array_keys($config['environments'] ?? []),
], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
