<?php
// Judges how deep PHP's unserialize() nests: `php depth.php FILE...` prints one line per
// file, "ok" when unserialize() accepts its bytes, else "error: " and PHP's first
// warning. The fixture classes (fixtures/classes.php) are loaded for the enum and C:
// cases; the ini default unserialize_max_depth (4096) applies.
error_reporting(E_ALL & ~E_DEPRECATED);
require __DIR__ . '/fixtures/classes.php';
foreach (array_slice($argv, 1) as $file) {
    $bytes = file_get_contents($file);
    $warning = null;
    set_error_handler(function ($no, $str) use (&$warning) {
        $warning = $warning ?? $str;
        return true;
    });
    $v = unserialize($bytes);
    restore_error_handler();
    if ($warning !== null || ($v === false && $bytes !== 'b:0;')) {
        echo 'error: ', $warning ?? 'unserialize() returned false', "\n";
        continue;
    }
    echo "ok\n";
}
