<?php
// Prints what Laravel's Str::ascii($c) (voku/portable-ascii, language 'en') gives for every
// single code point from U+0000 to U+2FFFF where the answer is not the character itself and
// not empty (for ASCII: where it differs), as a JSON object {"<decimal code point>": "<ascii>"};
// every other non-ASCII code point becomes "" (voku drops what it cannot transliterate). And, with arguments, the Str::slug
// of each argument as JSON lines {"in", "underscore", "hyphen", "ascii"}.
//
//   php ops_ascii.php table
//   php ops_ascii.php slug 'My App' 'Café' ...
error_reporting(E_ALL & ~E_DEPRECATED);
require_once 'Illuminate/Support/autoload.php';

use Illuminate\Support\Str;

$op = $argv[1] ?? '';
if ($op === 'table') {
    $out = [];
    for ($c = 0; $c <= 0x2FFFF; $c++) {
        if ($c >= 0xD800 && $c <= 0xDFFF) {
            continue;
        }
        $ch = mb_chr($c, 'UTF-8');
        $a = Str::ascii($ch);
        if (preg_match('/[^\x00-\x7F]/', $a)) {
            fwrite(STDERR, sprintf("U+%04X gives non-ASCII %s\n", $c, $a));
            exit(1);
        }
        if ($c < 0x80 ? $a !== $ch : $a !== '') {
            $out[(string) $c] = $a;
        }
    }
    echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_THROW_ON_ERROR), "\n";
} elseif ($op === 'slug') {
    foreach (array_slice($argv, 2) as $s) {
        echo json_encode([
            'in' => $s,
            'underscore' => Str::slug($s, '_'),
            'hyphen' => Str::slug($s),
            'ascii' => Str::ascii($s),
        ], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR), "\n";
    }
} else {
    fwrite(STDERR, "usage: ops_ascii.php table | slug STRING...\n");
    exit(2);
}
