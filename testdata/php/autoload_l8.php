<?php
// The class loading of Laravel 8.83 from Debian's php-illuminate-* packages: their own
// autoload.php files, the optional ones where installed. bootstrap_l8.php boots on it;
// classes_autoload.php gives it to `laraq classes` without booting anything.
require_once 'Illuminate/Config/autoload.php';
require_once 'Illuminate/Queue/autoload.php';
require_once 'Illuminate/Redis/autoload.php';
require_once 'Illuminate/Events/autoload.php';
require_once 'Illuminate/Bus/autoload.php';
require_once 'Illuminate/Cache/autoload.php';
require_once 'Illuminate/Database/autoload.php';
require_once 'Illuminate/Encryption/autoload.php';
// Optional Debian packages (scripts/install-peers.sh installs them): queued notifications,
// mailables and broadcast events, and the predis client.
foreach (['Illuminate/Notifications/autoload.php', 'Illuminate/Mail/autoload.php',
    'Illuminate/Broadcasting/autoload.php', 'Predis/autoload.php'] as $optional) {
    if (stream_resolve_include_path($optional)) {
        require_once $optional;
    }
}
