<?php
// Serializes the classes of classes.php in fixed states with the real SerializesModels
// of one Laravel release and prints, per state, one JSON line:
//   {"name": ..., "ser": base64(serialize($job)),
//    "full": base64(every initialized property of unserialize(ser), as 8.x writes them)}
// or {"name": ..., "error": "Class: message"} when serialize() throws.
// "full" is PHP's view of what unserialize() rebuilt, class defaults included: the
// object as Laravel 8's SerializesModels would write it (getProperties() order,
// mangled names, models as ModelIdentifier), so Go can compare it with a struct.
//
// Laravel 5.8-7.x and 9.x-13.x: LARAQ_PEER_MAJOR, LARAQ_PEERS_DIR and LARAQ_PEER_HARNESS (the
// peers' harness directory, whose autoload.php loads that tree). Without them, Debian's
// php-illuminate-* 8.83.
if (getenv('LARAQ_PEER_MAJOR')) {
    require getenv('LARAQ_PEER_HARNESS') . '/autoload.php';
} else {
    error_reporting(E_ALL & ~E_DEPRECATED);
    require_once 'Illuminate/Queue/autoload.php';
    require_once 'Illuminate/Database/autoload.php';
}
require __DIR__ . '/classes.php';

use App\Enums\Tone;
use App\Jobs\AllTypes;
use App\Jobs\ModernJob;
use App\Jobs\Promoted;
use App\Jobs\Visibility;
use App\Jobs\WithModel;
use App\Models\User;
use Illuminate\Database\Capsule\Manager as DB;

$db = new DB();
$db->addConnection(['driver' => 'sqlite', 'database' => ':memory:', 'prefix' => '']);
$db->setAsGlobal();
$db->bootEloquent();
$db->getConnection()->statement('create table users (id integer primary key, name text)');
foreach ([1, 2, 3] as $id) {
    $db->getConnection()->insert('insert into users (id, name) values (?, ?)', [$id, "user$id"]);
}

/** Sets a property whatever its visibility, declared by $class (for a parent's private). */
function set_prop(object $o, string $name, $value, ?string $class = null): void
{
    $p = new ReflectionProperty($class ?? get_class($o), $name);
    $p->setAccessible(true);
    $p->setValue($o, $value);
}

/** $o the way Laravel 8's SerializesModels writes it: no property left out. */
function full(object $o): string
{
    $class = get_class($o);
    $out = '';
    $n = 0;
    foreach ((new ReflectionClass($o))->getProperties() as $p) {
        if ($p->isStatic()) {
            continue;
        }
        $p->setAccessible(true);
        if (! $p->isInitialized($o)) {
            continue;
        }
        $name = $p->getName();
        if ($p->isPrivate()) {
            $name = "\0{$class}\0{$name}";
        } elseif ($p->isProtected()) {
            $name = "\0*\0{$name}";
        }
        $value = (fn ($v) => $this->getSerializedPropertyValue($v))->call($o, $p->getValue($o));
        $out .= serialize($name) . serialize($value);
        $n++;
    }
    return 'O:' . strlen($class) . ':"' . $class . '":' . $n . ':{' . $out . '}';
}

$cases = [];

$cases['alltypes_defaults'] = new AllTypes();

$j = new AllTypes();
$j->untyped = 0;
$j->tries = 5;
$j->loose = 3.0;
$j->timeout = 30.0;
$j->zero = -0.0;               // -0.0 === 0.0: left out
$j->flag = true;
$j->maybe = null;
$j->name = 'default-name';     // the default again: left out
$j->empty = '0';
$j->list = [1, 2, 3];
$j->map = ['b' => [true, null], 'a' => 1, 7 => 'seven']; // other order: not ===
$j->tone = Tone::Cold;
$j->nullable = 'set';
$cases['alltypes_changed'] = $j;

$j = new AllTypes();
$j->untyped = false;
$j->loose = '3';               // a string is not === the int 3
$j->zero = 0;                  // nor an int the float 0.0
$j->list = [1.0, 2, 3];
$j->map = ['a' => 1, 'b' => [true, null], 7 => 'seven'];
$j->none = [0 => null];
$j->big = PHP_INT_MAX - 1;
$j->negative = -42.0;
$cases['alltypes_types'] = $j;

$cases['promoted_uninitialized'] = new Promoted(7);
$j = new Promoted(7, 'n', 'r', ['x']);
$j->count = 2;
$cases['promoted_set'] = $j;
$j = new Promoted(0, null, null, []);
$j->count = 0;
$j->label = 'y';
$cases['promoted_zero'] = $j;

$cases['visibility_defaults'] = new Visibility();
$j = new Visibility();
set_prop($j, 'secret', 'q');
set_prop($j, 'counter', 1);
set_prop($j, 'basePub', 2);
set_prop($j, 'retryTimes', 5);
set_prop($j, 'retryLog', ['a']);
set_prop($j, 'basePriv', 'changed', \App\Jobs\BaseJob::class); // never written by SerializesModels
$cases['visibility_changed'] = $j;

$cases['modern_defaults'] = new ModernJob(1);
$j = (new ModernJob(2))->onConnection('redis')->onQueue('emails')->delay(30);
$j->chainQueue = 'chain-q';
$j->tries = 5;
$cases['modern_queued'] = $j;

$j = new WithModel(User::find(1));
$j->team = User::whereIn('id', [1, 2])->get();
$cases['model_one'] = $j;
$cases['model_all'] = new WithModel(User::find(1), User::find(2), User::find(3));

foreach ($cases as $name => $job) {
    try {
        $ser = serialize($job);
    } catch (Throwable $e) {
        // 5.8's SerializesModels predates typed properties: its __sleep reads an
        // uninitialized one and throws. The state is then reported, not skipped.
        echo json_encode(['name' => $name, 'error' => get_class($e) . ': ' . $e->getMessage()]), "\n";
        continue;
    }
    echo json_encode(['name' => $name, 'ser' => base64_encode($ser), 'full' => base64_encode(full(unserialize($ser)))]), "\n";
}
