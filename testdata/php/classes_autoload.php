<?php
// The autoload file the tests give `laraq classes --autoload` (package phpclass): it makes
// the job classes of jobs.php and jobs_classes.php loadable on the release LARAQ_PEER_MAJOR
// names, as an application's vendor/autoload.php would, without booting an application:
//   unset, 0 or 8  Debian's php-illuminate-* 8.83 packages (autoload_l8.php)
//   10 11 12 13    the shared peers' tree through their harness's autoload.php
//                  (LARAQ_PEER_HARNESS, LARAQ_PEERS_DIR: internal/testenv sets them)
// Nothing else: no Redis, no container.
error_reporting(E_ALL & ~E_DEPRECATED);

(function () {
    $major = (int) (getenv('LARAQ_PEER_MAJOR') ?: 8);
    if ($major === 0 || $major === 8) {
        require_once __DIR__ . '/autoload_l8.php';
        return;
    }
    $harness = getenv('LARAQ_PEER_HARNESS');
    if ($harness === false || ! is_file($harness . '/autoload.php')) {
        fwrite(STDERR, "classes_autoload.php: LARAQ_PEER_HARNESS is not the shared peers' harness directory\n");
        exit(2);
    }
    require_once $harness . '/autoload.php';
})();
require_once __DIR__ . '/jobs.php';
require_once __DIR__ . '/jobs_classes.php';
