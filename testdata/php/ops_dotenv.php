<?php
// Loads a .env file exactly as Laravel 8+ does (vlucas/phpdotenv 5 on Laravel's immutable
// Env repository, which the process environment takes precedence in) and prints, for each
// NAME given, the raw repository value and what env('NAME') returns, as one JSON object:
//   {"vars": {"NAME": {"raw": string|null, "env": mixed}}}   or   {"error": "message"}
//
//   php ops_dotenv.php /path/to/.env NAME...
error_reporting(E_ALL & ~E_DEPRECATED);
require_once 'Dotenv/autoload.php';
require_once 'Illuminate/Support/autoload.php';

use Dotenv\Dotenv;
use Illuminate\Support\Env;

$path = $argv[1] ?? '';
if ($path === '') {
    fwrite(STDERR, "usage: ops_dotenv.php FILE NAME...\n");
    exit(2);
}
try {
    Dotenv::create(Env::getRepository(), dirname($path), basename($path))->load();
} catch (Throwable $e) {
    echo json_encode(['error' => $e->getMessage()], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";
    exit(0);
}
$vars = [];
foreach (array_slice($argv, 2) as $name) {
    $vars[$name] = ['raw' => Env::getRepository()->get($name), 'env' => Env::get($name)];
}
echo json_encode(['vars' => (object) $vars], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
