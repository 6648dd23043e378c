<?php
// Boots the queue side of a Laravel application for the interop scripts of this directory,
// on the Laravel release LARAQ_PEER_MAJOR names:
//   unset, 0 or 8  Debian's php-illuminate-* 8.83 packages (bootstrap_l8.php)
//   5 (5.8), 6, 7, 9, 10, 11, 12, 13
//                  the unmodified src/Illuminate tree of that major from the shared peers,
//                  booted by their harness (bootstrap_peer.php); LARAQ_PEER_TREE=13.4 picks
//                  another unpacked tree of the major (laravel-13.4/)
// Either way the scripts get the same functions (laraq_boot, laraq_env, laraq_record,
// laraq_db_config) and the same environment variables (bootstrap_l8.php lists them), with
// the same meaning on every major: LARAQ_REDIS_PREFIX is the connection prefix as given
// ('' = none), LARAQ_FAILED_DB the failed_jobs (and job_batches) database, and so on. The
// constants LARAQ_PEER_MAJOR (5..13) and LARAQ_PEER_TAG ("v12.67.0", "v5.8.38"; "v8.83"
// for Debian's) say which release runs.
//
// The Go tests set these variables through internal/testenv's PHPEnv{Major: N}.
error_reporting(E_ALL & ~E_DEPRECATED);

(function () {
    $major = (int) (getenv('LARAQ_PEER_MAJOR') ?: 8);
    if ($major === 0 || $major === 8) {
        require_once __DIR__ . '/bootstrap_l8.php';
    } elseif (in_array($major, [5, 6, 7, 9, 10, 11, 12, 13], true)) {
        require_once __DIR__ . '/bootstrap_peer.php';
    } else {
        fwrite(STDERR, "bootstrap.php: LARAQ_PEER_MAJOR=$major: want 5, 6, 7, 8, 9, 10, 11, 12 or 13\n");
        exit(2);
    }
})();
require_once __DIR__ . '/bootstrap_common.php';
