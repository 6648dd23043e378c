<?php
// Prints the facts of PHP job classes as PHP's own reflection gives them, for package
// phpclass (which embeds this file and runs it with the php binary on stdin).
//
// usage: php -- REQUEST_JSON      (the script comes on stdin, extract_facts.php first)
//   REQUEST_JSON: {"autoload": FILE, "root": DIR or "", "classes": [FQCN, ...]}
//   autoload  the PHP file that makes the classes loadable (an application's
//             vendor/autoload.php, or any file that requires or registers them)
//   root      the application's directory: its composer.json autoload.psr-4 roots are
//             searched for job classes when none is named, and file names are given
//             relative to it
//   classes   the classes to describe; none: every concrete class implementing
//             Illuminate\Contracts\Queue\ShouldQueue under the PSR-4 roots, or, without a
//             composer.json, every such class the autoload file declared
//
// Output, written to file descriptor 3 so that whatever the application prints while it
// loads cannot corrupt it: one JSON document, the manifest's fields (see manifest.go),
// or {"fatal": {...}} when PHP stopped with a fatal error (naming the class and file that
// were being loaded), or {"error": "..."} when the request itself cannot be served.
//
// Property order is what serialize() really writes: every property of a probe instance
// (made without its constructor) is set to a value different from its declared default,
// the instance is serialized, and the keys are read back in stream order. A class whose
// probe cannot be built or serialized falls back to the order PHP would use (reflection
// order under SerializesModels' __serialize, declaration slots otherwise), and says so.

error_reporting(E_ALL & ~E_DEPRECATED & ~E_USER_DEPRECATED);
ini_set('display_errors', 'stderr');
ini_set('log_errors', '0');

$laraqOut = @fopen('php://fd/3', 'w');
if ($laraqOut === false) {
    fwrite(STDERR, "extract: file descriptor 3 is not open for the result\n");
    exit(2);
}
$GLOBALS['laraq_loading'] = null; // [what, name] being loaded, for the fatal handler

function laraq_emit(array $doc): void
{
    global $laraqOut;
    $json = json_encode($doc, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_INVALID_UTF8_SUBSTITUTE);
    if ($json === false) {
        $json = json_encode(['error' => 'the facts do not encode as JSON: ' . json_last_error_msg()]);
    }
    fwrite($laraqOut, $json . "\n");
    fflush($laraqOut);
}

register_shutdown_function(function () {
    if (! empty($GLOBALS['laraq_done'])) {
        return;
    }
    $e = error_get_last();
    $fatal = E_ERROR | E_PARSE | E_CORE_ERROR | E_COMPILE_ERROR | E_USER_ERROR | E_RECOVERABLE_ERROR;
    [$what, $name] = $GLOBALS['laraq_loading'] ?? [null, null];
    laraq_emit(['fatal' => [
        'message' => $e !== null && ($e['type'] & $fatal) ? $e['message'] : 'PHP exited before the facts were written (exit() or die() while loading?)',
        'file' => $e['file'] ?? null,
        'line' => $e['line'] ?? null,
        'loading' => $what,
        'name' => $name,
    ]]);
});

$req = json_decode($argv[1] ?? '', true);
if (! is_array($req) || ! is_string($req['autoload'] ?? null)) {
    laraq_emit(['error' => 'extract: want a JSON request {"autoload": FILE, ...} as the first argument']);
    $GLOBALS['laraq_done'] = true;
    exit(2);
}
$root = (string) ($req['root'] ?? '');
$named = array_values(array_map('strval', (array) ($req['classes'] ?? [])));

ob_start(); // what the application prints while loading is not ours to show
$before = get_declared_classes();
$GLOBALS['laraq_loading'] = ['autoload', $req['autoload']];
try {
    require_once $req['autoload'];
} catch (\Throwable $e) {
    ob_end_clean();
    laraq_emit(['error' => 'loading ' . $req['autoload'] . ': ' . get_class($e) . ': ' . $e->getMessage() . ' (' . $e->getFile() . ':' . $e->getLine() . ')']);
    $GLOBALS['laraq_done'] = true;
    exit(1);
}
$GLOBALS['laraq_loading'] = null;

const LARAQ_SHOULD_QUEUE = 'Illuminate\Contracts\Queue\ShouldQueue';

/** Loads a class through the autoloaders; an error names the class and its file. */
function laraq_load(string $class, ?string $file = null): ?string
{
    $GLOBALS['laraq_loading'] = ['class', $class . ($file !== null ? " ($file)" : '')];
    try {
        // One autoload only: a second would include a file that declares no such class
        // (a helpers file under a PSR-4 root) again, and its functions twice.
        $ok = class_exists($class) || interface_exists($class, false) || trait_exists($class, false) || enum_exists($class, false);
    } catch (\Throwable $e) {
        $GLOBALS['laraq_loading'] = null;
        return get_class($e) . ': ' . $e->getMessage() . ' (' . laraq_rel($e->getFile()) . ':' . $e->getLine() . ')';
    }
    $GLOBALS['laraq_loading'] = null;
    return $ok ? null : 'not found by the autoloader' . ($file !== null ? " (expected in $file)" : '');
}

function laraq_rel(?string $file): ?string
{
    global $root;
    if ($file === null || $file === '' || $root === '') {
        return $file;
    }
    $r = rtrim(realpath($root) ?: $root, '/') . '/';
    $f = realpath($file) ?: $file;
    return strncmp($f, $r, strlen($r)) === 0 ? substr($f, strlen($r)) : $file;
}

/** The PSR-4 roots of the application's composer.json: [[prefix, dir], ...]. */
function laraq_psr4(string $root): array
{
    $file = rtrim($root, '/') . '/composer.json';
    if ($root === '' || ! is_file($file)) {
        return [];
    }
    $composer = json_decode((string) file_get_contents($file), true);
    $out = [];
    foreach ((array) ($composer['autoload']['psr-4'] ?? []) as $prefix => $dirs) {
        foreach ((array) $dirs as $dir) {
            $out[] = [(string) $prefix, rtrim($root, '/') . '/' . trim((string) $dir, '/')];
        }
    }
    return $out;
}

/** Every class under the PSR-4 roots, by its file name, loaded; errors name the file. */
function laraq_discover(array $psr4, array &$errors): array
{
    $found = [];
    foreach ($psr4 as [$prefix, $dir]) {
        if (! is_dir($dir)) {
            continue;
        }
        $it = new RecursiveIteratorIterator(new RecursiveDirectoryIterator($dir, FilesystemIterator::SKIP_DOTS));
        $files = [];
        foreach ($it as $f) {
            if ($f->isFile() && substr($f->getFilename(), -4) === '.php') {
                $files[] = $f->getPathname();
            }
        }
        sort($files);
        foreach ($files as $path) {
            $rel = substr($path, strlen($dir) + 1, -4);
            if (! preg_match('~^[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$~', $rel)) {
                continue;
            }
            $class = $prefix . str_replace('/', '\\', $rel);
            $err = laraq_load($class, laraq_rel($path));
            if ($err !== null) {
                if (strpos($err, 'not found by the autoloader') !== 0) {
                    $errors[] = ['class' => $class, 'file' => laraq_rel($path), 'error' => $err];
                }
                continue;
            }
            $found[] = $class;
        }
    }
    return $found;
}

/** A job class: concrete, implementing ShouldQueue. */
function laraq_is_job(string $class): bool
{
    if (! class_exists($class, false)) {
        return false;
    }
    $rc = new ReflectionClass($class);
    return ! $rc->isAbstract() && ! $rc->isInterface() && ! $rc->isTrait() && ! $rc->isEnum()
        && $rc->implementsInterface(LARAQ_SHOULD_QUEUE);
}

/** The Laravel release the autoloader gives, and where that came from. */
function laraq_laravel_version(): array
{
    // The constant, without loading the class where it is not loaded yet: a framework
    // tree may lack what the HTTP kernel needs, and the class only declares the version.
    if (class_exists('Illuminate\Foundation\Application', false)) {
        return [ltrim(\Illuminate\Foundation\Application::VERSION, 'v'), 'Illuminate\Foundation\Application::VERSION'];
    }
    if (class_exists('Illuminate\Queue\Queue')) {
        $app = dirname((new ReflectionClass('Illuminate\Queue\Queue'))->getFileName(), 2) . '/Foundation/Application.php';
        if (is_file($app) && preg_match("~const\\s+VERSION\\s*=\\s*'v?([^']+)'~", (string) file_get_contents($app), $m)) {
            return [$m[1], 'Illuminate\Foundation\Application::VERSION'];
        }
    }
    if (class_exists('Composer\InstalledVersions')) {
        foreach (['laravel/framework', 'illuminate/queue', 'illuminate/support'] as $pkg) {
            try {
                if (\Composer\InstalledVersions::isInstalled($pkg)) {
                    $v = \Composer\InstalledVersions::getPrettyVersion($pkg);
                    if ($v !== null) {
                        return [ltrim($v, 'v'), "composer's installed $pkg"];
                    }
                }
            } catch (\Throwable $e) {
            }
        }
    }
    if (! class_exists('Illuminate\Queue\Queue')) {
        return ['', ''];
    }
    // The framework tree itself: the directory holding Illuminate/, or a Debian package.
    $file = (new ReflectionClass('Illuminate\Queue\Queue'))->getFileName();
    $dir = dirname($file, 3); // .../<tree>/Illuminate/Queue/Queue.php -> <tree>
    foreach ([$dir, dirname($dir), dirname($dir, 2)] as $d) {
        if (is_file("$d/TAG")) {
            return [ltrim(trim((string) file_get_contents("$d/TAG")), 'v'), laraq_rel("$d/TAG")];
        }
        if (is_file("$d/composer.json")) {
            $c = json_decode((string) file_get_contents("$d/composer.json"), true);
            if (isset($c['version']) && in_array($c['name'] ?? '', ['laravel/framework', 'illuminate/queue'], true)) {
                return [ltrim((string) $c['version'], 'v'), laraq_rel("$d/composer.json")];
            }
        }
    }
    // Debian's php-illuminate-* packages record their version with dpkg only.
    if (strncmp($file, '/usr/share/php/Illuminate/', 26) === 0 && is_readable('/var/lib/dpkg/status')) {
        foreach (preg_split('/\n\n+/', (string) file_get_contents('/var/lib/dpkg/status')) as $stanza) {
            if (preg_match('/^Package: php-illuminate-queue$/m', $stanza) && preg_match('/^Version: (?:\d+:)?(\d+\.\d+\.\d+)/m', $stanza, $m)) {
                return [$m[1], 'dpkg php-illuminate-queue'];
            }
        }
    }
    return ['', ''];
}


$errors = [];
if (! interface_exists(LARAQ_SHOULD_QUEUE)) {
    ob_end_clean();
    laraq_emit(['error' => LARAQ_SHOULD_QUEUE . ' is not loadable through ' . $req['autoload'] . ': is it the autoloader of a Laravel application?']);
    $GLOBALS['laraq_done'] = true;
    exit(1);
}
if ($named) {
    $classes = [];
    foreach ($named as $c) {
        $c = ltrim($c, '\\');
        $err = laraq_load($c);
        if ($err !== null) {
            $errors[] = ['class' => $c, 'error' => $err];
            continue;
        }
        if (! class_exists($c, false) || (new ReflectionClass($c))->isAbstract()) {
            $errors[] = ['class' => $c, 'error' => 'not a concrete class'];
            continue;
        }
        $classes[] = $c;
    }
} else {
    $psr4 = laraq_psr4($root);
    if ($psr4) {
        $candidates = laraq_discover($psr4, $errors);
    } else {
        $candidates = array_diff(get_declared_classes(), $before);
    }
    $classes = [];
    foreach ($candidates as $c) {
        if (laraq_is_job($c) && strncmp($c, 'Illuminate\\', 11) !== 0) {
            $classes[] = (new ReflectionClass($c))->getName();
        }
    }
    $classes = array_values(array_unique($classes));
    sort($classes);
}

$enums = [];
$facts = [];
foreach ($classes as $c) {
    try {
        $facts[] = laraq_describe($c, $enums);
    } catch (\Throwable $e) {
        $errors[] = ['class' => $c, 'error' => get_class($e) . ': ' . $e->getMessage() . ' (' . laraq_rel($e->getFile()) . ':' . $e->getLine() . ')'];
    }
}
[$version, $versionFrom] = laraq_laravel_version();
ob_end_clean();
ksort($enums);
laraq_emit([
    'format' => 1,
    'laravel' => $version,
    'laravel_from' => $versionFrom,
    'php' => PHP_VERSION,
    'classes' => $facts,
    'enums' => array_values($enums),
    'errors' => $errors,
]);
$GLOBALS['laraq_done'] = true;
