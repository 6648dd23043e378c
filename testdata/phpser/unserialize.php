<?php
// Judges bytes that Go wrote: `php unserialize.php MODE FILE...` runs PHP's own
// unserialize() on each file and prints one JSON line per file: canon() of the value
// PHP rebuilt (see fixtures/canon.php), or {"error": "..."} when PHP refuses the
// bytes or warns about them.
//   MODE fixtures: the stub classes of fixtures/classes.php
//   MODE laravel:  the real Laravel 8 classes of laravel_classes.php, with an
//                  in-memory SQLite database holding the models the fixtures name,
//                  so that SerializesModels really restores them.
//   MODE raw:      unserialize($bytes, ['allowed_classes' => false]): every object
//                  stays an __PHP_Incomplete_Class with its properties as written
//                  (enums still need their classes: laravel_classes.php is loaded).
[$_, $mode] = $argv + [null, null];
$files = array_slice($argv, 2);

if ($mode === 'fixtures') {
    error_reporting(E_ALL & ~E_DEPRECATED);
    require __DIR__ . '/fixtures/classes.php';
} elseif ($mode === 'laravel') {
    require __DIR__ . '/laravel_classes.php';
    $db = new Illuminate\Database\Capsule\Manager();
    foreach (['default', 'mysql'] as $name) {
        $db->addConnection(['driver' => 'sqlite', 'database' => ':memory:', 'prefix' => ''], $name);
    }
    $db->setAsGlobal();
    $db->bootEloquent();
    foreach (['default', 'mysql'] as $name) {
        $schema = $db->getConnection($name)->getSchemaBuilder();
        $schema->create('podcasts', fn ($t) => $t->integer('id'));
        $schema->create('episodes', function ($t) { $t->integer('id'); $t->integer('podcast_id'); });
        $schema->create('users', function ($t) { $t->integer('id'); $t->integer('episode_id')->nullable(); });
        $schema->create('teams', fn ($t) => $t->string('id'));
        $c = $db->getConnection($name);
        $c->table('podcasts')->insert(['id' => 42]);
        $c->table('episodes')->insert(['id' => 1, 'podcast_id' => 42]);
        $c->table('users')->insert([['id' => 7, 'episode_id' => null], ['id' => 8, 'episode_id' => null]]);
        $c->table('teams')->insert(['id' => 'team-7f3a']);
    }
} elseif ($mode === 'raw') {
    require __DIR__ . '/laravel_classes.php';
} else {
    fwrite(STDERR, "usage: php unserialize.php fixtures|laravel|raw FILE...\n");
    exit(2);
}
require_once __DIR__ . '/fixtures/canon.php';
error_reporting(E_ALL & ~E_DEPRECATED);

foreach ($files as $file) {
    $bytes = file_get_contents($file);
    $warning = null;
    set_error_handler(function ($no, $str) use (&$warning) {
        $warning = $warning ?? $str;
        return true;
    });
    try {
        $v = $mode === 'raw' ? unserialize($bytes, ['allowed_classes' => false]) : unserialize($bytes);
        $c = ($v === false && $bytes !== 'b:0;') ? null : canon($v);
    } catch (Throwable $e) {
        $warning = get_class($e) . ': ' . $e->getMessage();
        $c = null;
    }
    restore_error_handler();
    if ($c === null || $warning !== null) {
        echo json_encode(['error' => $warning ?? 'unserialize() returned false']), "\n";
        continue;
    }
    echo json_encode($c, JSON_UNESCAPED_SLASHES), "\n";
}
