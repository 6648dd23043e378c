<?php
// Builds job payloads with Laravel 8's real RedisQueue::createPayload, for the payload
// package's byte-for-byte comparison with its Go builder.
//
// stdin: one JSON object per line, output: one line each, hex(payload) or "!ERR <message>".
//   {"kind":"object","class":"App\\Jobs\\X","command_b64":"…","display_b64":"…",
//    "tries":3,"maxExceptions":1,"failOnTimeout":true,"backoff":[1,5],"timeout":30,
//    "retryUntil":1700000000,"serialize":false,"secret":"…"}
//     An object job of class `class` (declared on the fly). data.command is normally
//     command_b64 verbatim: the job is marked shouldBeEncrypted and the bound Encrypter
//     returns that string, so any bytes can be tried through the real payload code.
//     With "serialize":true the command is PHP's real serialize() of the job.
//     Absent meta keys leave the job property null (as if the job did not declare it).
//   {"kind":"string","job_b64":"…","data":"<JSON text>"}
//     Queue::push(job, json_decode(data, true)); without "data" PHP's default '' is used.
error_reporting(E_ALL & ~E_DEPRECATED);
ini_set('display_errors', 'stderr');
require __DIR__ . '/bootstrap.php';

use Illuminate\Contracts\Encryption\Encrypter;
use Illuminate\Queue\RedisQueue;

/** Hands out a preset string as the "encrypted" command. */
final class LaraqPresetEncrypter implements Encrypter
{
    public string $next = '';
    public function encrypt($value, $serialize = true) { return $this->next; }
    public function decrypt($payload, $unserialize = true) { return $payload; }
}

/** The job every test class extends; null properties behave like undeclared ones. */
class LaraqBuildJob
{
    public $tries;
    public $maxExceptions;
    public $failOnTimeout;
    public $backoff;
    public $timeout;
    public $retryUntil;
    public $shouldBeEncrypted = true;
    public $laraqDisplay;
    protected $secret = '';

    public function setSecret(string $s): void { $this->secret = $s; }

    public function displayName()
    {
        return $this->laraqDisplay ?? static::class;
    }
}

function laraq_build_job(array $c): LaraqBuildJob
{
    $class = $c['class'];
    if (! class_exists($class, false)) {
        $pos = strrpos($class, '\\');
        $ns = $pos === false ? '' : substr($class, 0, $pos);
        $short = $pos === false ? $class : substr($class, $pos + 1);
        eval(($ns === '' ? '' : "namespace {$ns}; ") . "class {$short} extends \\LaraqBuildJob {}");
    }
    $job = new $class();
    foreach (['tries', 'maxExceptions', 'failOnTimeout', 'backoff', 'timeout', 'retryUntil'] as $p) {
        if (array_key_exists($p, $c)) {
            $job->{$p} = $c[$p];
        }
    }
    if (isset($c['display_b64'])) {
        $job->laraqDisplay = base64_decode($c['display_b64']);
    }
    $job->shouldBeEncrypted = empty($c['serialize']);
    if (isset($c['secret'])) {
        $job->setSecret($c['secret']);
    }
    return $job;
}

$app = laraq_boot();
$enc = new LaraqPresetEncrypter();
$app->instance(Encrypter::class, $enc);
$queue = new RedisQueue($app->make('redis'), 'default');
$queue->setContainer($app);
$createPayload = new ReflectionMethod($queue, 'createPayload');
$createPayload->setAccessible(true);

while (($line = fgets(STDIN)) !== false) {
    $c = json_decode($line, true);
    try {
        if ($c['kind'] === 'object') {
            $enc->next = base64_decode($c['command_b64'] ?? '');
            $out = $createPayload->invoke($queue, laraq_build_job($c), 'default');
        } else {
            $job = base64_decode($c['job_b64']);
            $out = array_key_exists('data', $c)
                ? $createPayload->invoke($queue, $job, 'default', json_decode($c['data'], true))
                : $createPayload->invoke($queue, $job, 'default');
        }
        echo bin2hex($out), "\n";
    } catch (Throwable $e) {
        echo '!ERR ', get_class($e), ': ', str_replace("\n", ' ', $e->getMessage()), "\n";
    }
}
