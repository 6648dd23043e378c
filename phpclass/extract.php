<?php
// Prints the facts of PHP job classes as PHP's own reflection gives them, for package
// phpclass (which embeds this file and runs it with the php binary on stdin).
//
// usage: php -- REQUEST_JSON      (the script itself comes on stdin)
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

/** The traits a class uses, flattened in PHP's order: each trait, then the traits it uses. */
function laraq_traits(ReflectionClass $rc): array
{
    $out = [];
    $walk = function (ReflectionClass $c, string $by) use (&$walk, &$out) {
        foreach ($c->getTraits() as $t) {
            $out[] = ['name' => $t->getName(), 'used_by' => $by];
            $walk($t, $t->getName());
        }
    };
    $chain = [];
    for ($c = $rc; $c !== false; $c = $c->getParentClass()) {
        array_unshift($chain, $c);
    }
    foreach ($chain as $c) {
        $walk($c, $c->getName());
    }
    return $out;
}

function laraq_attributes(array $attrs): array
{
    $out = [];
    foreach ($attrs as $a) {
        $args = [];
        try {
            foreach ($a->getArguments() as $k => $v) {
                $args[] = ['name' => is_string($k) ? $k : '', 'value' => laraq_utf8(laraq_ser($v))];
            }
        } catch (\Throwable $e) {
            $args[] = ['name' => '', 'error' => get_class($e) . ': ' . $e->getMessage()];
        }
        $out[] = ['name' => $a->getName(), 'arguments' => $args];
    }
    return $out;
}

function laraq_ser($v): ?string
{
    try {
        return serialize($v);
    } catch (\Throwable $e) {
        return null;
    }
}

/** Serialize text JSON can carry: invalid UTF-8 is left out (null), not mangled. */
function laraq_utf8(?string $s): ?string
{
    return $s !== null && preg_match('//u', $s) ? $s : null;
}

/** What kind of thing a named type is, for choosing its Go type. */
function laraq_type_kind(string $name): string
{
    $builtin = ['int', 'float', 'string', 'bool', 'array', 'iterable', 'mixed', 'object', 'null', 'false', 'true', 'callable', 'void', 'never'];
    if (in_array(strtolower($name), $builtin, true)) {
        return 'builtin';
    }
    if (in_array(strtolower($name), ['self', 'static', 'parent'], true)) {
        return 'relative';
    }
    if (laraq_load($name) !== null) {
        return 'unknown';
    }
    if (enum_exists($name)) {
        return 'enum';
    }
    if (is_a($name, 'Illuminate\Database\Eloquent\Model', true)) {
        return 'model';
    }
    if (is_a($name, 'Illuminate\Database\Eloquent\Collection', true)) {
        return 'collection';
    }
    if (is_a($name, 'DateTimeInterface', true)) {
        return 'date';
    }
    if (interface_exists($name)) {
        return 'interface';
    }
    return 'class';
}

function laraq_named_types(?ReflectionType $t): array
{
    if ($t === null) {
        return [];
    }
    if ($t instanceof ReflectionNamedType) {
        return [$t->getName()];
    }
    $out = [];
    foreach ($t->getTypes() as $m) {
        $out = array_merge($out, laraq_named_types($m));
    }
    return $out;
}

/**
 * A value of type $t that differs from $default (so SerializesModels keeps it), or
 * [false] when none can be made.
 */
function laraq_probe_value(?ReflectionType $t, bool $hasDefault, $default, int $i): array
{
    $s = "laraq-probe-$i";
    if ($t === null) {
        return [true, $s];
    }
    if ($t instanceof ReflectionUnionType) {
        foreach ($t->getTypes() as $m) {
            $r = laraq_probe_value($m, $hasDefault, $default, $i);
            if ($r[0]) {
                return $r;
            }
        }
        return [false];
    }
    if (! $t instanceof ReflectionNamedType) {
        return [false]; // intersection types
    }
    $n = $t->getName();
    switch (strtolower($n)) {
        case 'int':
            return [true, is_int($default) ? $default + 1 : $i + 1];
        case 'float':
            return [true, (is_float($default) ? $default : 0.0) + 1.5];
        case 'string':
        case 'mixed':
            return [true, $s];
        case 'bool':
            return [true, $default !== true];
        case 'true':
            return [$default !== true, true];
        case 'false':
            return [$default !== false, false];
        case 'array':
        case 'iterable':
            return [true, [$s]];
        case 'object':
            return [true, new stdClass()];
        case 'null':
        case 'self':
        case 'static':
        case 'parent':
        case 'callable':
            return [false];
    }
    if (laraq_load($n) !== null) {
        return [false];
    }
    if (enum_exists($n)) {
        foreach ($n::cases() as $c) {
            if ($c !== $default) {
                return [true, $c];
            }
        }
        return [false];
    }
    if ($n === 'DateTimeInterface') {
        return [true, new DateTimeImmutable('2000-01-01 00:00:00')];
    }
    $rc = new ReflectionClass($n);
    if (! $rc->isInstantiable()) {
        return [false];
    }
    try {
        if (is_a($n, 'DateTimeInterface', true)) {
            return [true, new $n('2000-01-01 00:00:00')];
        }
        $ctor = $rc->getConstructor();
        if ($ctor === null || $ctor->getNumberOfRequiredParameters() === 0) {
            return [true, $rc->newInstance()];
        }
        return [true, $rc->newInstanceWithoutConstructor()];
    } catch (\Throwable $e) {
        return [false];
    }
}

/** Sets a property from the scope of the class that declares it (readonly ones too). */
function laraq_set(object $obj, string $declaring, string $name, $value): void
{
    \Closure::bind(function () use ($name, $value) {
        $this->$name = $value;
    }, $obj, $declaring)();
}

/** The mangled name serialize() gives a property of class $class. */
function laraq_key(ReflectionProperty $p, string $class): string
{
    if ($p->isPrivate()) {
        return "\0" . $class . "\0" . $p->getName();
    }
    return $p->isProtected() ? "\0*\0" . $p->getName() : $p->getName();
}

/** The source text of a method, with its doc comment. */
function laraq_method_source(ReflectionMethod $m): ?string
{
    $file = $m->getFileName();
    if ($file === false || ! is_readable($file)) {
        return null;
    }
    $lines = file($file);
    $src = implode('', array_slice($lines, $m->getStartLine() - 1, $m->getEndLine() - $m->getStartLine() + 1));
    $doc = $m->getDocComment();
    $indent = preg_match('/^[ \t]*/', $src, $mm) ? $mm[0] : '';
    $out = ($doc !== false ? $indent . $doc . "\n" : '') . $src;
    // Unindent by the method's own indentation.
    $lines = explode("\n", rtrim($out, "\n"));
    foreach ($lines as &$l) {
        if (strncmp($l, $indent, strlen($indent)) === 0) {
            $l = substr($l, strlen($indent));
        }
    }
    return implode("\n", $lines);
}

const LARAQ_METHODS = ['tries', 'backoff', 'retryUntil', 'uniqueId', 'uniqueFor', 'uniqueVia', 'displayName',
    'middleware', 'failed', 'debounceId', 'debounceFor', 'debounceVia', 'tags', 'shouldBeEncrypted', 'viaConnection', 'viaQueue'];

/** The facts of one class. */
function laraq_describe(string $class, array &$enums): array
{
    $rc = new ReflectionClass($class);
    $class = $rc->getName(); // as declared, whatever case it was asked in
    $traits = laraq_traits($rc);
    $traitNames = array_column($traits, 'name');

    // Every property serialize() may write: the class's own and inherited (reflection),
    // and the private ones of its parents, which only native serialization writes.
    $props = []; // key => [ReflectionProperty, declaring class name]
    foreach ($rc->getProperties() as $p) {
        if (! $p->isStatic()) {
            $props[laraq_key($p, $class)] = $p;
        }
    }
    for ($c = $rc->getParentClass(); $c !== false; $c = $c->getParentClass()) {
        foreach ($c->getProperties(ReflectionProperty::IS_PRIVATE) as $p) {
            if (! $p->isStatic() && $p->getDeclaringClass()->getName() === $c->getName()) {
                $props["\0" . $c->getName() . "\0" . $p->getName()] = $p;
            }
        }
    }

    // Where each property comes from: the last trait (in use order) declaring it, else
    // the class in the hierarchy that declares it.
    $from = [];
    foreach ($props as $key => $p) {
        $origin = $p->getDeclaringClass()->getName();
        foreach (array_reverse($traitNames) as $t) {
            $tr = new ReflectionClass($t);
            if ($tr->hasProperty($p->getName()) && $tr->getProperty($p->getName())->getDeclaringClass()->getName() === $t) {
                $origin = $t;
                break;
            }
        }
        $from[$key] = $origin;
    }

    // The probe: every property at a value that differs from its default.
    $order = null;
    $why = '';
    try {
        $obj = $rc->newInstanceWithoutConstructor();
        $i = 0;
        foreach ($props as $key => $p) {
            $i++;
            $hasDef = $p->hasDefaultValue();
            [$ok, $v] = laraq_probe_value($p->getType(), $hasDef, $hasDef ? $p->getDefaultValue() : null, $i) + [1 => null];
            if (! $ok) {
                $why = 'no value of type ' . $p->getType() . ' for $' . $p->getName();
                continue;
            }
            laraq_set($obj, $p->getDeclaringClass()->getName(), $p->getName(), $v);
        }
        $GLOBALS['laraq_loading'] = ['serialize', $class];
        $s = serialize($obj);
        $GLOBALS['laraq_loading'] = null;
        $head = 'O:' . strlen($class) . ':"' . $class . '":';
        if (strncmp($s, $head, strlen($head)) === 0) {
            $arr = unserialize('a:' . substr($s, strlen($head)), ['allowed_classes' => false]);
            if (is_array($arr)) {
                $order = array_map('strval', array_keys($arr));
            }
        } else {
            $why = 'serialize() did not write an O: object';
        }
    } catch (\Throwable $e) {
        $GLOBALS['laraq_loading'] = null;
        $why = 'probe: ' . get_class($e) . ': ' . $e->getMessage();
    }

    $serialization = 'native';
    if ($rc->hasMethod('__serialize')) {
        $decl = $rc->getMethod('__serialize')->getDeclaringClass()->getName();
        $serialization = $decl === $class && ! in_array('Illuminate\Queue\SerializesModels', $traitNames, true) ? 'custom __serialize' : '__serialize';
        if (in_array('Illuminate\Queue\SerializesModels', $traitNames, true)
            && (new ReflectionMethod($class, '__serialize'))->getFileName() === (new ReflectionMethod('Illuminate\Queue\SerializesModels', '__serialize'))->getFileName()) {
            $serialization = 'serializes_models';
        }
    } elseif ($rc->hasMethod('__sleep')) {
        $serialization = '__sleep';
    }

    $verified = $order !== null && $why === '';
    if ($order === null) {
        // What PHP would do: SerializesModels walks getProperties(); native serialization
        // walks the slots, parents' first.
        if ($serialization === 'serializes_models') {
            $order = [];
            foreach ($props as $key => $p) {
                if ($p->getDeclaringClass()->getName() === $class || ! $p->isPrivate()) {
                    $order[] = $key;
                }
            }
        } else {
            $order = [];
            $chain = [];
            for ($c = $rc; $c !== false; $c = $c->getParentClass()) {
                array_unshift($chain, $c->getName());
            }
            foreach ($chain as $level) {
                foreach ($props as $key => $p) {
                    if ($p->getDeclaringClass()->getName() === $level && ! in_array($key, $order, true)) {
                        $order[] = $key;
                    }
                }
            }
        }
    } else {
        // A property the probe could not set is not in the stream: put it where
        // reflection has it, after the property before it.
        $keys = array_keys($props);
        foreach ($keys as $idx => $key) {
            if (in_array($key, $order, true) || ($serialization === 'serializes_models' && $props[$key]->isPrivate() && $props[$key]->getDeclaringClass()->getName() !== $class)) {
                continue;
            }
            $at = 0;
            for ($j = $idx - 1; $j >= 0; $j--) {
                $pos = array_search($keys[$j], $order, true);
                if ($pos !== false) {
                    $at = $pos + 1;
                    break;
                }
            }
            array_splice($order, $at, 0, [$key]);
        }
    }

    $outProps = [];
    $written = array_flip($order);
    foreach (array_merge($order, array_diff(array_keys($props), $order)) as $key) {
        if (! isset($props[$key])) {
            continue; // a key __serialize made up: not a declared property
        }
        $p = $props[$key];
        $t = $p->getType();
        $hasDef = $p->hasDefaultValue();
        $def = $hasDef ? $p->getDefaultValue() : null;
        $kinds = [];
        foreach (laraq_named_types($t) as $n) {
            $k = laraq_type_kind($n);
            $kinds[] = ['name' => $n, 'kind' => $k];
            if ($k === 'enum') {
                laraq_enum($n, $enums);
            }
        }
        if ($def instanceof UnitEnum) {
            laraq_enum(get_class($def), $enums);
        }
        $vis = $p->isPrivate() ? 'private' : ($p->isProtected() ? 'protected' : 'public');
        $entry = [
            'name' => $p->getName(),
            'key' => $key,
            'visibility' => $vis,
            'declared_by' => $p->getDeclaringClass()->getName(),
            'from' => $from[$key],
        ];
        if ($t !== null) {
            $entry['type'] = (string) $t;
            $entry['nullable'] = $t->allowsNull();
            $entry['type_names'] = $kinds;
        }
        if (method_exists($p, 'isReadOnly') && $p->isReadOnly()) {
            $entry['readonly'] = true;
        }
        if ($p->isPromoted()) {
            $entry['promoted'] = true;
        }
        $entry['has_default'] = $hasDef;
        if ($hasDef) {
            $ser = laraq_ser($def);
            if ($ser === null) {
                $entry['default_error'] = 'the default does not serialize';
            } elseif (preg_match('//u', $ser)) {
                $entry['default'] = $ser;
            } else {
                $entry['default_base64'] = base64_encode($ser); // bytes JSON cannot carry
            }
        }
        if (! isset($written[$key])) {
            $entry['unwritten'] = true;
        }
        $attrs = laraq_attributes($p->getAttributes());
        if ($attrs) {
            $entry['attributes'] = $attrs;
        }
        $outProps[] = $entry;
    }

    $methods = [];
    foreach (LARAQ_METHODS as $m) {
        if (! $rc->hasMethod($m)) {
            continue;
        }
        $rm = $rc->getMethod($m);
        $methods[] = [
            'name' => $rm->getName(),
            'declared_by' => $rm->getDeclaringClass()->getName(),
            'file' => laraq_rel($rm->getFileName() ?: null),
            'line' => $rm->getStartLine() ?: 0,
            'source' => laraq_method_source($rm),
        ];
    }

    $parents = [];
    for ($c = $rc->getParentClass(); $c !== false; $c = $c->getParentClass()) {
        $parents[] = $c->getName();
    }
    $out = [
        'name' => $class,
        'file' => laraq_rel($rc->getFileName() ?: null),
        'line' => $rc->getStartLine() ?: 0,
        'parents' => $parents,
        'interfaces' => $rc->getInterfaceNames(),
        'traits' => $traits,
        'attributes' => laraq_attributes($rc->getAttributes()),
        'serialization' => $serialization,
        'order_verified' => $verified,
        'properties' => $outProps,
        'methods' => $methods,
    ];
    if (! $verified) {
        $out['order_note'] = $why !== '' ? $why : 'serialize() of the probe could not be read back';
    }
    return $out;
}

function laraq_enum(string $name, array &$enums): void
{
    if (isset($enums[$name])) {
        return;
    }
    $re = new ReflectionEnum($name);
    $cases = [];
    foreach ($re->getCases() as $c) {
        $case = ['name' => $c->getName()];
        if ($c instanceof ReflectionEnumBackedCase) {
            $case['value'] = laraq_utf8(laraq_ser($c->getBackingValue()));
        }
        $cases[] = $case;
    }
    $enums[$name] = ['name' => $name, 'backing' => $re->isBacked() ? (string) $re->getBackingType() : '', 'cases' => $cases];
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
