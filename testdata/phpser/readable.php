<?php
// PHP's own rendering of a payload in the readable form `laraq decode` prints, so the
// Go output can be checked against what PHP itself unserializes.
// Usage: php readable.php FILE...   prints one compact JSON document per file.
//
// data.command goes through unserialize($command, ['allowed_classes' => false]): no
// class code runs and every object keeps its properties as written. Enum cases still
// need their class, so a stub enum is declared for each case the command names.
error_reporting(E_ALL);

function laraq_declare_enums(string $command): void
{
    preg_match_all('/E:\d+:"([A-Za-z0-9_\\\\\x80-\xff]+):([A-Za-z0-9_\x80-\xff]+)";/', $command, $m, PREG_SET_ORDER);
    $cases = [];
    foreach ($m as [$_, $class, $case]) {
        $cases[$class][$case] = true;
    }
    foreach ($cases as $class => $names) {
        if (enum_exists($class)) {
            continue;
        }
        $pos = strrpos($class, '\\');
        $ns = $pos === false ? '' : substr($class, 0, $pos);
        $short = $pos === false ? $class : substr($class, $pos + 1);
        $body = implode(' ', array_map(fn ($c) => "case $c;", array_keys($names)));
        eval(($ns !== '' ? "namespace $ns; " : '') . "enum $short { $body }");
    }
}

function laraq_key(string $k): string
{
    return ($k !== '' && $k[0] === '@') ? '@' . $k : $k;
}

function laraq_readable($v, array &$stack = [])
{
    if ($v === null || is_bool($v) || is_int($v)) {
        return $v;
    }
    if (is_float($v)) {
        if (is_nan($v)) {
            return 'NAN';
        }
        if (is_infinite($v)) {
            return $v > 0 ? 'INF' : '-INF';
        }
        return $v;
    }
    if (is_string($v)) {
        return mb_check_encoding($v, 'UTF-8') ? $v : ['@binary' => base64_encode($v)];
    }
    if (is_array($v)) {
        if (array_is_list($v)) {
            $out = [];
            foreach ($v as $x) {
                $out[] = laraq_readable($x, $stack);
            }
            return $out;
        }
        $out = new stdClass();
        foreach ($v as $k => $x) {
            $out->{laraq_key((string) $k)} = laraq_readable($x, $stack);
        }
        return $out;
    }
    if ($v instanceof UnitEnum) {
        return ['@enum' => get_class($v) . ':' . $v->name];
    }
    $id = spl_object_id($v);
    $props = (array) $v;
    $class = $props['__PHP_Incomplete_Class_Name'];
    if (isset($stack[$id])) {
        return ['@recursion' => $class];
    }
    $stack[$id] = true;
    unset($props['__PHP_Incomplete_Class_Name']);
    $plain = [];
    foreach ($props as $k => $_) {
        $k = (string) $k;
        $name = $k;
        if ($k !== '' && $k[0] === "\0" && ($p = strpos($k, "\0", 1)) !== false && $p > 1) {
            $name = substr($k, $p + 1);
        }
        $plain[$k] = $name;
    }
    $count = array_count_values(array_values($plain));
    $out = new stdClass();
    $out->{'@class'} = $class;
    foreach ($props as $k => $x) {
        $k = (string) $k;
        $name = $plain[$k];
        if ($name !== $k && ($count[$name] > 1 || ($name !== '' && $name[0] === "\0"))) {
            $name = $k;
        }
        $out->{laraq_key($name)} = laraq_readable($x, $stack);
    }
    unset($stack[$id]);
    return $out;
}

foreach (array_slice($argv, 1) as $file) {
    $payload = json_decode(file_get_contents($file), false, 512, JSON_THROW_ON_ERROR);
    if (isset($payload->data) && is_object($payload->data) && isset($payload->data->command) && is_string($payload->data->command)) {
        laraq_declare_enums($payload->data->command);
        $v = unserialize($payload->data->command, ['allowed_classes' => false]);
        $payload->data->command = laraq_readable($v);
    }
    echo json_encode($payload, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR), "\n";
}
