<?php
// Evaluates config-file expressions with the Laravel release LARAQ_PEER_MAJOR names (8:
// Debian's 8.83; 10-13: the shared peers' trees): env() on Illuminate\Support\Env's
// repository, Illuminate\Support\Str::slug, PHP's own casts and concatenation.
//
//   php laravel_expr.php < cases.jsonl
//
// stdin: one JSON object per line, {"env": {"NAME": "raw value", ...}, "expr": "PHP"}; the
// variables are what the environment holds for that line only (as putenv() and $_SERVER
// would; the raw value goes through env()'s true/false/null/empty keywords and quotes).
// stdout: one line per case, {"type": "string"|"int"|"bool"|"null", "value": ...}, or
// {"error": "..."} when PHP throws.
error_reporting(E_ALL & ~E_DEPRECATED);
$major = (int) (getenv('LARAQ_PEER_MAJOR') ?: 8);
if ($major >= 10) {
    require getenv('LARAQ_PEER_HARNESS') . '/autoload.php';
    require_once 'Dotenv/autoload.php';
} else {
    require_once 'Dotenv/autoload.php';
    require_once 'Illuminate/Support/autoload.php';
}

use Illuminate\Support\Env;
use Illuminate\Support\Str;

function laraq_database_path($path = '')
{
    return '/app/database' . ($path != '' ? '/' . ltrim($path, '/') : '');
}

while (($line = fgets(STDIN)) !== false) {
    $case = json_decode($line, true, 512, JSON_THROW_ON_ERROR);
    $set = [];
    foreach ($case['env'] ?? [] as $name => $value) {
        $_SERVER[$name] = $value;
        $_ENV[$name] = $value;
        $set[] = $name;
    }
    try {
        // database_path() needs an application; the cases name it laraq_database_path().
        $expr = str_replace('database_path(', 'laraq_database_path(', $case['expr']);
        $v = eval('use Illuminate\Support\Str; return ' . $expr . ';');
        $out = ['type' => match (true) {
            is_string($v) => 'string', is_int($v) => 'int', is_bool($v) => 'bool', is_null($v) => 'null', default => gettype($v),
        }, 'value' => $v];
    } catch (Throwable $e) {
        $out = ['error' => get_class($e) . ': ' . $e->getMessage()];
    }
    foreach ($set as $name) {
        unset($_SERVER[$name], $_ENV[$name]);
    }
    echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_INVALID_UTF8_SUBSTITUTE), "\n";
}
