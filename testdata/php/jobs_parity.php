<?php
// Job classes of the worker parity and chain tests (internal/parity/parity_test.go and
// internal/interop/chain_php_test.go). Loaded by dispatch.php and work.php after jobs.php, whose
// RecordsWhatItGot trait they use: handle() appends the usual record to LARAQ_RECORD.
//
//   App\Jobs\GoStep           a chain step a Go worker runs. PHP runs it too when a test
//                             compares PHP's own dispatch of the next step with Go's.
//                             public step; public tries = 3, backoff = [2, 4],
//                             timeout = 30 (defaults that feed the envelope metadata).
//   App\Jobs\ParityChainStep  a chain step PHP runs. public step, maxExceptions = 2,
//                             failOnTimeout = true, retryUntil (null unless set);
//                             protected secret = 'x'; private hidden = [1.5, null].
//   App\Jobs\DeletingStep     a chain step whose handle() records, then $this->delete()s
//                             the job: CallQueuedHandler still dispatches the next step.

namespace App\Jobs {
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;

    class GoStep implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $step;
        public $tries = 3;
        public $backoff = [2, 4];
        public $timeout = 30;
    }

    class ParityChainStep implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $step;
        public $maxExceptions = 2;
        public $failOnTimeout = true;
        public $retryUntil;
        protected $secret = 'x';
        private $hidden = [1.5, null];
    }

    class DeletingStep implements ShouldQueue
    {
        use InteractsWithQueue, Queueable;

        public $step;

        public function handle()
        {
            laraq_record(laraq_job_record($this));
            $this->delete();
        }
    }
}
