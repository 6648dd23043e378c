<?php
// Job classes of the release matrix {5.8, 6, 7, 8.83, 9, 10, 11, 12, 13}: one class per
// payload shape a Laravel app queues. Loaded by dispatch.php and work.php after jobs.php on every major;
// a class whose trait or interface the booted release lacks is simply not declared
// (class_exists/interface_exists/trait_exists guards), so the file loads everywhere.
// Every handle() appends a record through laraq_record (jobs.php's laraq_job_record for
// jobs; kinds "listener", "notification", "mail", "broadcast" for the others).
//
// Jobs (namespace App\Jobs\Matrix, all ShouldQueue):
//   DefaultsJob        use InteractsWithQueue, Queueable, SerializesModels; class defaults
//                      tries = 3, label = 'default', count = 0, protected secret = 'keep',
//                      private hidden = [1]; public changed. 9.x+ SerializesModels leaves
//                      out every property still equal to its default (8.83 keeps them).
//   MetaDefaultsJob    tries = 4, backoff = [3, 10], timeout = 30, maxExceptions = 2,
//                      failOnTimeout = true as class defaults; retryUntil() = now + 100 years.
//   MetaMethodsJob     backoff() = [1, 5, 10] and retryUntil() = now + 50 years as methods.
//   RetryAfterJob      5.8-7.x's metadata names: retryAfter = 7 as a class default, timeoutAt
//                      (null unless set); label. 5.8-7.x write them as delay and timeoutAt,
//                      8.0+ reads neither.
//   RetryAfterMethodJob retryAfter() = 4 and retryUntil() = now + 10 years as methods: delay
//                      and timeoutAt on 5.8-7.x, retryUntil only from 8.0.
//   AttributeMetaJob   13.x queue attributes #[Tries(5)], #[Backoff(2, 4)], #[Timeout(45)],
//                      #[MaxExceptions(3)], #[FailOnTimeout]: metadata on 13, none before.
//   TriesMethodJob     tries() = 6 as a method, no $tries: read from 10.39 on.
//   MethodsOverrideJob $tries = 2 and $backoff = [9] beside tries() = 7 and backoff() = [1, 2]:
//                      the properties win up to 12.x, the methods on 13.x.
//   AttributeOverJob   #[Tries(5)] beside $tries = 3: 13.x takes the attribute while $tries
//                      holds its default, the property once it differs; earlier majors $tries.
//   ModelsJob          SerializesModels with one model (user) and an Eloquent collection (users).
//   MissingModelJob    deleteWhenMissingModels = true; user (dispatch it with a model the
//                      worker cannot find: the job is deleted, not failed).
//   KeptMissingModelJob deleteWhenMissingModels = false; the same job fails instead.
//   NamedMissingModelJob deleteWhenMissingModels = true and a displayName() ('Named missing
//                      model'): up to 11.x the worker reflects the display name, which is no
//                      class, and fails the job; 12+ deletes it.
//   StubJob            11+ `make:job` stub: use Illuminate\Foundation\Queue\Queueable; public
//                      $tries = 3; constructor property promotion (public User $user, public
//                      string $note = 'hello', protected int $count = 0).
//   BatchedJob         use Batchable (Bus::batch, 8.x+); n.
//   DebouncedJob       13.6+ #[DebounceFor(5)]; debounceId, tag (dispatch "via": "dispatch").
//   NamedDebouncedJob  the same with debounceId() = 'order-'.orderId and displayName() =
//                      'Debounced order '.orderId methods; orderId, tag.
//   SecretJob          ShouldBeEncrypted; secret.
//   UniqueJob          ShouldBeUnique; orderId, uniqueFor = 60, uniqueId() = orderId.
//   UniqueUntilProcessingJob  ShouldBeUniqueUntilProcessing; the same properties.
//   (ChainStep, PlainJob, Scripted, StringJobs of jobs.php cover chains, delays, failures
//    and string jobs.)
// Events, listeners, notifications, mail:
//   App\Events\OrderShipped          plain event: orderId, user (SerializesModels).
//   App\Listeners\SendShipmentNotice queued listener (ShouldQueue, InteractsWithQueue) of
//                                    OrderShipped, queue 'listeners', tries = 2.
//   App\Events\PriceChanged          ShouldBroadcast on channel 'prices'; price. Its
//                                    broadcastWith() records when BroadcastEvent runs.
//   App\Notifications\InvoicePaid    queued notification (Queueable); amount; via() is the
//                                    RecordingChannel class, which records the delivery.
//   App\Mail\WelcomeMail             queued mailable (Queueable, SerializesModels); user;
//                                    build() sets an html body. PHP delivers it through
//                                    LaraqRecordingMailer (bound as the mail factory, or
//                                    on 5.8/6.x as the mailer, by laraq_jobs_boot), which
//                                    records instead of sending.

namespace App\Jobs\Matrix {
    use App\Jobs\RecordsWhatItGot;
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;
    use Illuminate\Queue\SerializesModels;

    class DefaultsJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

        public $tries = 3;
        public $label = 'default';
        public $count = 0;
        public $changed;
        protected $secret = 'keep';
        private $hidden = [1];
    }

    class MetaDefaultsJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $tries = 4;
        public $backoff = [3, 10];
        public $timeout = 30;
        public $maxExceptions = 2;
        public $failOnTimeout = true;
        public $label;

        public function retryUntil()
        {
            // Far enough ahead that a fixture captured at a fixed clock stays runnable.
            return \Illuminate\Support\Carbon::now()->addYears(100);
        }
    }

    class MetaMethodsJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $label;

        public function backoff()
        {
            return [1, 5, 10];
        }

        public function retryUntil()
        {
            return \Illuminate\Support\Carbon::now()->addYears(50);
        }
    }

    // Attributes naming classes a release lacks are never instantiated there: PHP only
    // resolves them on ReflectionAttribute::newInstance(), which only 13.x calls.
    #[\Illuminate\Queue\Attributes\Tries(5)]
    #[\Illuminate\Queue\Attributes\Backoff(2, 4)]
    #[\Illuminate\Queue\Attributes\Timeout(45)]
    #[\Illuminate\Queue\Attributes\MaxExceptions(3)]
    #[\Illuminate\Queue\Attributes\FailOnTimeout]
    class AttributeMetaJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $label;
    }

    class RetryAfterJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $retryAfter = 7;
        public $timeoutAt;
        public $label;
    }

    class RetryAfterMethodJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $label;

        public function retryAfter()
        {
            return 4;
        }

        public function retryUntil()
        {
            return \Illuminate\Support\Carbon::now()->addYears(10);
        }
    }

    class TriesMethodJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $label;

        public function tries()
        {
            return 6;
        }
    }

    class MethodsOverrideJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $tries = 2;
        public $backoff = [9];
        public $label;

        public function tries()
        {
            return 7;
        }

        public function backoff()
        {
            return [1, 2];
        }
    }

    #[\Illuminate\Queue\Attributes\Tries(5)]
    class AttributeOverJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $tries = 3;
        public $label;
    }

    class ModelsJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

        public $user;
        public $users;
        public $note;
    }

    class MissingModelJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

        public $deleteWhenMissingModels = true;
        public $user;
    }

    class KeptMissingModelJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

        public $deleteWhenMissingModels = false;
        public $user;
    }

    class NamedMissingModelJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

        public $deleteWhenMissingModels = true;
        public $user;

        public function displayName()
        {
            return 'Named missing model';
        }
    }

    if (trait_exists(\Illuminate\Foundation\Queue\Queueable::class)) {
        class StubJob implements ShouldQueue
        {
            use \Illuminate\Foundation\Queue\Queueable, RecordsWhatItGot;

            public $tries = 3;

            public function __construct(
                public \App\Models\User $user,
                public string $note = 'hello',
                protected int $count = 0,
            ) {
            }
        }
    }

    if (trait_exists(\Illuminate\Bus\Batchable::class)) {
        class BatchedJob implements ShouldQueue
        {
            use \Illuminate\Bus\Batchable, InteractsWithQueue, Queueable, SerializesModels;

            public $n;

            public function handle()
            {
                laraq_record(laraq_job_record($this, [
                    'batch_id' => $this->batchId,
                    'batch_cancelled' => $this->batch() ? $this->batch()->cancelled() : null,
                ]));
            }
        }
    }

    if (class_exists(\Illuminate\Queue\Attributes\DebounceFor::class)) {
        /** 13.6+: debounced for 5 s per debounceId; only the last dispatch runs. */
        #[\Illuminate\Queue\Attributes\DebounceFor(5)]
        class DebouncedJob implements ShouldQueue
        {
            use InteractsWithQueue, Queueable, RecordsWhatItGot;

            public $debounceId;
            public $tag;
        }

        /** The same with debounceId() and displayName() methods: the key hashes the name. */
        #[\Illuminate\Queue\Attributes\DebounceFor(5)]
        class NamedDebouncedJob implements ShouldQueue
        {
            use InteractsWithQueue, Queueable, RecordsWhatItGot;

            public $orderId;
            public $tag;

            public function debounceId()
            {
                return 'order-' . $this->orderId;
            }

            public function displayName()
            {
                return 'Debounced order ' . $this->orderId;
            }
        }
    }

    if (interface_exists(\Illuminate\Contracts\Queue\ShouldBeEncrypted::class)) {
        class SecretJob implements ShouldQueue, \Illuminate\Contracts\Queue\ShouldBeEncrypted
        {
            use InteractsWithQueue, Queueable, RecordsWhatItGot;

            public $secret;
        }
    }

    if (interface_exists(\Illuminate\Contracts\Queue\ShouldBeUnique::class)) {
        class UniqueJob implements ShouldQueue, \Illuminate\Contracts\Queue\ShouldBeUnique
        {
            use InteractsWithQueue, Queueable, RecordsWhatItGot;

            public $orderId;
            public $uniqueFor = 60;

            public function uniqueId()
            {
                return (string) $this->orderId;
            }
        }
    }

    if (interface_exists(\Illuminate\Contracts\Queue\ShouldBeUniqueUntilProcessing::class)) {
        class UniqueUntilProcessingJob implements ShouldQueue, \Illuminate\Contracts\Queue\ShouldBeUniqueUntilProcessing
        {
            use InteractsWithQueue, Queueable, RecordsWhatItGot;

            public $orderId;
            public $uniqueFor = 60;

            public function uniqueId()
            {
                return (string) $this->orderId;
            }
        }
    }
}

namespace App\Events {
    use Illuminate\Queue\SerializesModels;

    class OrderShipped
    {
        use SerializesModels;

        public $orderId;
        public $user;
    }

    if (interface_exists(\Illuminate\Contracts\Broadcasting\ShouldBroadcast::class)) {
        class PriceChanged implements \Illuminate\Contracts\Broadcasting\ShouldBroadcast
        {
            public $price;

            public function broadcastOn()
            {
                return [new \Illuminate\Broadcasting\Channel('prices')];
            }

            public function broadcastWith()
            {
                laraq_record(['kind' => 'broadcast', 'event' => 'handle', 'class' => static::class, 'price' => $this->price]);
                return ['price' => $this->price];
            }
        }
    }
}

namespace App\Listeners {
    use App\Events\OrderShipped;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;

    class SendShipmentNotice implements ShouldQueue
    {
        use InteractsWithQueue;

        public $queue = 'listeners';
        public $tries = 2;

        public function handle(OrderShipped $event)
        {
            laraq_record([
                'kind' => 'listener', 'event' => 'handle', 'class' => static::class,
                'id' => $this->job ? $this->job->getJobId() : null, 'attempts' => $this->attempts(),
                'queue' => $this->job ? $this->job->getQueue() : null, 'raw' => $this->job ? $this->job->getRawBody() : null,
                'orderId' => $event->orderId, 'user' => laraq_canon_value($event->user),
            ]);
        }
    }
}

namespace App\Notifications {
    if (class_exists(\Illuminate\Notifications\Notification::class)) {
        class InvoicePaid extends \Illuminate\Notifications\Notification implements \Illuminate\Contracts\Queue\ShouldQueue
        {
            use \Illuminate\Bus\Queueable;

            public $amount;

            public function via($notifiable)
            {
                return [RecordingChannel::class];
            }
        }

        /** A notification channel (a class name in via()) that records each delivery. */
        class RecordingChannel
        {
            public function send($notifiable, $notification)
            {
                laraq_record([
                    'kind' => 'notification', 'event' => 'handle', 'class' => get_class($notification),
                    'id' => $notification->id, 'notifiable' => laraq_canon_value($notifiable),
                    'amount' => $notification->amount ?? null,
                ]);
            }
        }
    }
}

namespace App\Mail {
    if (class_exists(\Illuminate\Mail\Mailable::class)) {
        class WelcomeMail extends \Illuminate\Mail\Mailable implements \Illuminate\Contracts\Queue\ShouldQueue
        {
            use \Illuminate\Bus\Queueable, \Illuminate\Queue\SerializesModels;

            public $user;

            public function build()
            {
                return $this->subject('Welcome')->html('<p>Welcome, ' . e($this->user->name ?? '?') . '</p>');
            }
        }
    }
}

namespace {
    /**
     * What the recording mailers do with a message: SendQueuedMailable and Mailable::send
     * run for real up to the transport, then the message is recorded instead of sent (no
     * Symfony/Swift transport involved).
     */
    trait LaraqRecordsMail
    {
        public function send($view, array $data = [], $callback = null)
        {
            if ($view instanceof \Illuminate\Contracts\Mail\Mailable) {
                return $view->send($this);
            }
            $html = is_array($view) && isset($view['html']) ? (string) (is_object($view['html']) ? $view['html']->toHtml() : $view['html']) : null;
            $mailable = $callback instanceof \Closure ? (new \ReflectionFunction($callback))->getClosureThis() : null;
            laraq_record([
                'kind' => 'mail', 'event' => 'handle', 'class' => $mailable ? get_class($mailable) : null,
                'to' => $mailable ? array_map(fn ($a) => $a['address'], $mailable->to) : null,
                'subject' => $mailable->subject ?? null, 'html' => $html,
            ]);
            return null;
        }
    }

    if (interface_exists(\Illuminate\Contracts\Mail\Factory::class)) {
        /** The mail factory (7.x+) the PHP worker delivers queued mailables through. */
        final class LaraqRecordingMailer implements \Illuminate\Contracts\Mail\Factory
        {
            use LaraqRecordsMail;

            // Not the Mailer contract: its methods differ across majors (failures() on 8,
            // cc() on 13); Mailable::send only calls send() on what mailer() returns.
            public function mailer($name = null) { return $this; }
        }
    } else {
        /**
         * The mailer of 5.8 and 6.x, which have no mail factory: SendQueuedMailable::handle
         * and Mailable::send take the Mailer contract itself.
         */
        final class LaraqRecordingMailer implements \Illuminate\Contracts\Mail\Mailer
        {
            use LaraqRecordsMail;

            public function to($users) { return $this; }
            public function bcc($users) { return $this; }
            public function raw($text, $callback) { return null; }
            public function failures() { return []; }
        }
    }

    /** Registers the matrix's event listeners and the recording mailer (laraq_jobs_boot hook). */
    laraq_on_jobs_boot(function ($app) {
        $app['events']->listen(\App\Events\OrderShipped::class, \App\Listeners\SendShipmentNotice::class);
        $mailer = new LaraqRecordingMailer();
        $app->instance('mail.manager', $mailer);
        $app->instance('mailer', $mailer);
        $app->instance(interface_exists(\Illuminate\Contracts\Mail\Factory::class)
            ? \Illuminate\Contracts\Mail\Factory::class : \Illuminate\Contracts\Mail\Mailer::class, $mailer);
    });
}
