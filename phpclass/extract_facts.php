<?php
// The facts of one class, as PHP's reflection gives them: the functions of extract.php,
// which package phpclass runs with this file in front of it (one script on php's stdin,
// so that these declarations and constants exist before extract.php's code runs).

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
        // No constructor runs: reading a class's facts must not do what its
        // dependencies' constructors do (connect, read files, boot).
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
