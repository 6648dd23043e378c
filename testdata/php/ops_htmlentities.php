<?php
// PHP's htmlentities() with its PHP 8.1+ defaults (ENT_QUOTES | ENT_SUBSTITUTE |
// ENT_HTML401, UTF-8, double encoding), which Laravel's RateLimiter::cleanRateLimiterKey
// applies to every limiter key before it strips entities back to their first letter.
//
//   php ops_htmlentities.php table    {"<decimal code point>": "&name;", ...} (get_html_translation_table)
//   php ops_htmlentities.php encode   stdin: JSON list of base64 strings;
//                                     stdout: JSON list of base64 of htmlentities() of each
//   php ops_htmlentities.php clean    the same with cleanRateLimiterKey's whole rule
error_reporting(E_ALL);

$op = $argv[1] ?? '';
$flags = ENT_QUOTES | ENT_SUBSTITUTE | ENT_HTML401;
switch ($op) {
    case 'table':
        $out = [];
        foreach (get_html_translation_table(HTML_ENTITIES, $flags, 'UTF-8') as $char => $entity) {
            $out[(string) mb_ord($char, 'UTF-8')] = $entity;
        }
        echo json_encode($out, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE), "\n";
        break;
    case 'encode':
    case 'clean':
        $in = json_decode(stream_get_contents(STDIN), true, 512, JSON_THROW_ON_ERROR);
        $out = [];
        foreach ($in as $b64) {
            $s = htmlentities(base64_decode($b64), $flags, 'UTF-8');
            if ($op === 'clean') {
                // The rule of Illuminate\Cache\RateLimiter::cleanRateLimiterKey (8.x-13.x).
                $s = preg_replace('/&([a-z])[a-z]+;/i', '$1', $s);
            }
            $out[] = base64_encode($s);
        }
        echo json_encode($out), "\n";
        break;
    default:
        fwrite(STDERR, "usage: ops_htmlentities.php table|encode|clean\n");
        exit(2);
}
