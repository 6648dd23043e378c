#!/bin/sh
# Installs the real peers laraq's tests run against, from Debian's packages: redis-server,
# PHP 8 with Laravel 8.83's queue components (phpredis and predis clients; notifications,
# mail and broadcasting so 8.83 can queue those jobs too), SQLite, MariaDB
# and PostgreSQL, and the libraries the Laravel 10.x-13.x trees of ../shared/peers/laravel
# need on Debian's PHP 8.2 (its README lists them; the tests unpack the trees themselves).
# Needs root (uses sudo when available).
set -eu
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends \
  redis-server \
  php-cli php-redis php-nrk-predis php-sqlite3 php-mysql php-pgsql \
  php-illuminate-queue php-illuminate-redis php-illuminate-events php-illuminate-bus \
  php-illuminate-cache php-illuminate-config php-illuminate-database php-illuminate-encryption \
  php-illuminate-notifications php-illuminate-mail php-illuminate-broadcasting \
  php-vlucas-phpdotenv \
  mariadb-server postgresql \
  php-mbstring php-nesbot-carbon php-ramsey-uuid php-doctrine-inflector php-voku-portable-ascii \
  php-psr-container php-psr-simple-cache php-psr-log php-symfony-console php-symfony-polyfill-php83 \
  php-laravel-serializable-closure \
  ca-certificates git make
