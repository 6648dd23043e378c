<?php
// The job class of the chaos suite (internal/chaos), loaded by work.php, dispatch.php and
// dispatch_chaos.php.
//
//   App\Jobs\ChaosJob  public key (the suite's own identity of the job), public actions
//                      (one step per attempt; attempt N runs actions[N-1], the last one
//                      repeats). Steps:
//                        "ok"          return normally (the worker deletes the job)
//                        "fail"        throw RuntimeException (retried by the worker's rules)
//                        "sleep:MS"    sleep MS milliseconds, then return normally
//                        "release:S"   $this->release(S)
//                        "hang"        sleep for an hour (only for workers with --timeout)
//
// Every run appends two JSON lines to the file LARAQ_CHAOS_RECORD, each fsync'd before
// the job goes on, so that a worker killed with -9 cannot lose a record of a run it
// started or finished:
//   {"ev":"start","run":R,"worker":W,"key":K,"uuid":U,"id":ID,"attempt":N,"t":MICROS}
//   {"ev":"end","run":R,"worker":W,"key":K,"outcome":"ok"|"fail"|"release","t":MICROS}
// W is LARAQ_CHAOS_WORKER, R is W/<pid>/<run number in this process>, t is Unix
// microseconds. The Go recorder of --forward workers writes the same records.

namespace {
    /** Appends one record to LARAQ_CHAOS_RECORD and fsyncs it. */
    function laraq_chaos_record(array $row): void
    {
        static $fh = null;
        $file = laraq_env('LARAQ_CHAOS_RECORD');
        if ($file === null) {
            return;
        }
        if ($fh === null) {
            $fh = fopen($file, 'ab');
            if ($fh === false) {
                throw new \RuntimeException("chaos: cannot open $file");
            }
        }
        $line = json_encode($row, JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_THROW_ON_ERROR) . "\n";
        // One write per record: O_APPEND keeps concurrent writers' lines whole.
        if (fwrite($fh, $line) !== strlen($line) || ! fflush($fh) || ! fsync($fh)) {
            throw new \RuntimeException("chaos: cannot write the record to $file");
        }
    }

    function laraq_chaos_now(): int
    {
        return (int) round(microtime(true) * 1e6);
    }
}

namespace App\Jobs {
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;

    class ChaosJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable;

        public $key;
        public $actions = ['ok'];

        public function handle()
        {
            static $runs = 0;
            $runs++;
            $worker = laraq_env('LARAQ_CHAOS_WORKER', 'php');
            $run = $worker . '/' . getmypid() . '/' . $runs;
            $attempt = $this->attempts();
            $actions = array_values((array) $this->actions) ?: ['ok'];
            $action = (string) $actions[min(max(1, $attempt), count($actions)) - 1];
            [$verb, $arg] = array_pad(explode(':', $action, 2), 2, null);
            laraq_chaos_record([
                'ev' => 'start', 'run' => $run, 'worker' => $worker, 'key' => (string) $this->key,
                'uuid' => $this->job && method_exists($this->job, 'uuid') ? $this->job->uuid() : null, 'id' => $this->job ? (string) $this->job->getJobId() : null,
                'attempt' => $attempt, 't' => laraq_chaos_now(),
            ]);
            $end = function (string $outcome) use ($run, $worker) {
                laraq_chaos_record(['ev' => 'end', 'run' => $run, 'worker' => $worker, 'key' => (string) $this->key,
                    'outcome' => $outcome, 't' => laraq_chaos_now()]);
            };
            switch ($verb) {
                case 'ok':
                    $end('ok');
                    return;
                case 'sleep':
                    usleep(1000 * (int) $arg);
                    $end('ok');
                    return;
                case 'fail':
                    $end('fail');
                    throw new \RuntimeException("chaos: fail on attempt $attempt");
                case 'release':
                    $this->release((int) $arg);
                    $end('release');
                    return;
                case 'hang':
                    sleep(3600);
                    $end('ok');
                    return;
                default:
                    $end('fail');
                    throw new \InvalidArgumentException("chaos: unknown action $action");
            }
        }
    }
}
