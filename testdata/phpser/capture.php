<?php
// Captures queue commands and payloads from the real Laravel 8 components for the
// phpser tests: `php testdata/phpser/capture.php DIR` writes
//   DIR/<name>.ser           data.command: serialize() of the job as Laravel queues it
//   DIR/<name>.payload.json  the whole payload RedisQueue would push (uuid/id fixed)
//   DIR/index.txt            the names, one per line
// Everything that would vary between runs is pinned: Carbon's test clock, fixed
// dates, and the random uuid and id of the payload. No Redis or database is needed:
// SerializesModels only reads a model's class, key, relations and connection name.
require __DIR__ . '/laravel_classes.php';
require __DIR__ . '/../php/bootstrap.php';

use App\Enums\Channel;
use App\Enums\Priority;
use App\Jobs\PlainJob;
use App\Jobs\ProcessPodcast;
use App\Jobs\SendWelcomeEmail;
use App\Models\Episode;
use App\Models\Podcast;
use App\Models\Team;
use App\Models\User;
use Carbon\CarbonImmutable;
use Illuminate\Database\Eloquent\Collection;
use Illuminate\Queue\Middleware\WithoutOverlapping;
use Illuminate\Support\Carbon;
use Illuminate\Support\Str;

$out = $argv[1] ?? null;
if ($out === null) {
    fwrite(STDERR, "usage: php capture.php DIR\n");
    exit(2);
}
@mkdir($out, 0777, true);

Carbon::setTestNow(Carbon::create(2024, 3, 5, 6, 7, 8, 'UTC'));
Str::createUuidsUsing(fn () => \Ramsey\Uuid\Uuid::fromString('5b0f6c32-0c1a-4c8e-9f4a-2d6b1e7a9c10'));

function model(string $class, $id, array $relations = [])
{
    $m = new $class();
    $m->id = $id;
    $m->exists = true;
    foreach ($relations as $name => $value) {
        $m->setRelation($name, $value);
    }
    return $m;
}

$cases = [];

// A SerializesModels job with every shape Laravel puts in a command: protected model
// (ModelIdentifier with nested relations), private nested array, enum, a model
// collection (ModelIdentifier with a list of ids), Carbon delay and date in a named
// zone with microseconds, middleware, and a chain of two serialized jobs.
$episode = model(Episode::class, 1, ['guests' => new Collection()]);
$podcast = model(Podcast::class, 42, ['episodes' => new Collection([$episode])]);
$job = new ProcessPodcast(
    $podcast,
    ['bitrate' => 192, 'normalize' => true, 'gain' => -1.5, 3 => 'three', 'formats' => ['mp3', 'ogg'], 'nested' => ['a' => ['b' => []]]],
    'Café Gëöff – 日本 🎧 "quoted"; semi',
    ['news', 'tech', 'émission'],
    Priority::High
);
$job->listeners = new Collection([model(User::class, 7), model(User::class, 8)]);
$job->publishAt = Carbon::create(2024, 6, 1, 12, 30, 45.123456, 'Europe/Berlin');
$job->onConnection('redis')->onQueue('podcasts')->delay(Carbon::create(2024, 3, 5, 6, 17, 8, 'UTC'));
$job->through([new WithoutOverlapping('podcast:42')]);
$job->chain([
    new SendWelcomeEmail(model(User::class, 7)),
    (new PlainJob(['step' => 2]))->onQueue('mail'),
]);
$job->allOnQueue('chain-queue');
$cases['podcast_job'] = $job;

// A chain link on its own, as the worker will unserialize it.
$cases['welcome_email'] = new SendWelcomeEmail(model(Team::class, 'team-7f3a'));

// Native serialization (no SerializesModels): protected/private props, dates of all
// three timezone types, the same object twice (r:), a PHP reference (R:), a pure enum,
// floats and int64 extremes.
$plain = new PlainJob(['list' => [1, 2, 3], 'map' => ['x' => null, 'y' => 2.5], 'empty' => [], 'nul' => "a\x00b"]);
$plain->bump(3);
$plain->dates = [
    'carbon' => Carbon::create(2024, 1, 15, 12, 0, 0, 'America/New_York'),
    'immutable' => CarbonImmutable::create(2020, 1, 1, 0, 0, 0, 'UTC'),
    'offset' => new DateTime('2024-01-15 12:00:00.5+02:00'),
    'abbr' => new DateTime('2024-07-15 12:00:00 CEST'),
];
$shared = Carbon::create(2022, 11, 1, 10, 0, 0, 'UTC');
$plain->shared = ['first' => $shared, 'second' => $shared];
$word = 'same';
$plain->refs = ['a' => &$word, 'b' => &$word];
$plain->channel = Channel::Sms;
$plain->big = PHP_INT_MIN;
$cases['plain_job'] = $plain;

$index = [];
$queue = laraq_boot()->make('queue')->connection('redis');
// RedisQueue::createPayload is protected; call it the way push() does.
$payloadOf = fn ($job, $queueName, $data = '') => $this->createPayload($job, $queueName, $data);
foreach ($cases as $name => $job) {
    $ser = serialize($job);
    file_put_contents("$out/$name.ser", $ser);
    $payload = $payloadOf->call($queue, $job, 'default');
    $id = json_decode($payload, true)['id'];
    $payload = str_replace($id, 'fixedRandomIdForTheFixture000000', $payload);
    file_put_contents("$out/$name.payload.json", $payload . "\n");
    $index[] = $name;
}

// A string job (Queue::push('Class@method', $data)): data is the array as given.
$payload = $payloadOf->call($queue, 'App\Handlers\LegacyHandler@handle', 'default', ['user' => 7, 'tags' => [], 'path' => 'a/b']);
$id = json_decode($payload, true)['id'];
file_put_contents("$out/string_job.payload.json", str_replace($id, 'fixedRandomIdForTheFixture000000', $payload) . "\n");
$index[] = 'string_job';

file_put_contents("$out/index.txt", implode("\n", $index) . "\n");
