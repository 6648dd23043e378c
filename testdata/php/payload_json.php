<?php
// PHP's own JSON behaviour, for the payload package's byte-for-byte tests.
// Input and output are one hex-encoded byte string per line, so any bytes travel safely.
//
//   php payload_json.php encode      line: "<flags> <hex string>"   → hex(json_encode($string, flags))
//   php payload_json.php roundtrip   line: "<flags> <hex json>"     → hex(json_encode(json_decode($json, true), flags))
//   php payload_json.php retry       line: "<hex payload>"          → hex(what `queue:retry` pushes)
//
// A failure prints "!ERR <json_last_error() code> <message>" (for retry: the exception).
// retry runs Laravel 8's real RetryCommand::resetAttempts and ::refreshRetryUntil.
error_reporting(E_ALL & ~E_DEPRECATED);
ini_set('display_errors', 'stderr');

$mode = $argv[1] ?? '';
$retry = null;
if ($mode === 'retry') {
    require_once 'Illuminate/Console/autoload.php';
    require_once 'Illuminate/Queue/autoload.php';
    $cmd = new Illuminate\Queue\Console\RetryCommand();
    $cmd->setLaravel(new Illuminate\Container\Container());
    $reset = new ReflectionMethod($cmd, 'resetAttempts');
    $reset->setAccessible(true);
    $refresh = new ReflectionMethod($cmd, 'refreshRetryUntil');
    $refresh->setAccessible(true);
    $retry = function (string $payload) use ($cmd, $reset, $refresh) {
        return $refresh->invoke($cmd, $reset->invoke($cmd, $payload));
    };
}

while (($line = fgets(STDIN)) !== false) {
    $line = rtrim($line, "\n");
    if ($mode === 'retry') {
        try {
            $out = $retry(hex2bin($line));
            echo is_string($out) ? bin2hex($out) : '!ERR 0 non-string result', "\n";
        } catch (Throwable $e) {
            echo '!ERR 0 ', get_class($e), ': ', str_replace("\n", ' ', $e->getMessage()), "\n";
        }
        continue;
    }
    [$flags, $hex] = explode(' ', $line, 2) + [1 => ''];
    $in = hex2bin($hex);
    if ($mode === 'encode') {
        $value = $in;
    } elseif ($mode === 'roundtrip') {
        $value = json_decode($in, true);
        if (json_last_error() !== JSON_ERROR_NONE) {
            echo '!ERR ', json_last_error(), ' decode: ', json_last_error_msg(), "\n";
            continue;
        }
    } else {
        fwrite(STDERR, "unknown mode {$mode}\n");
        exit(2);
    }
    $out = json_encode($value, (int) $flags);
    if ($out === false) {
        echo '!ERR ', json_last_error(), ' encode: ', json_last_error_msg(), "\n";
        continue;
    }
    echo bin2hex($out), "\n";
}
