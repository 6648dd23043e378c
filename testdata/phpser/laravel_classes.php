<?php
// Job, model and enum classes for the phpser Laravel fixtures, written against the
// real Laravel 8 components (Debian php-illuminate-*): Queueable, InteractsWithQueue,
// SerializesModels, Eloquent, Illuminate\Support\Carbon. Shared by capture.php (which
// writes the fixtures) and unserialize.php (which checks what Go encoded).

namespace {
    error_reporting(E_ALL & ~E_DEPRECATED);
    require_once 'Illuminate/Support/autoload.php';
    require_once 'Illuminate/Queue/autoload.php';
    require_once 'Illuminate/Bus/autoload.php';
    require_once 'Illuminate/Database/autoload.php';
}

namespace App\Enums {
    enum Priority: string
    {
        case High = 'high';
        case Low = 'low';
    }

    enum Channel
    {
        case Mail;
        case Sms;
    }
}

namespace App\Models {
    use Illuminate\Database\Eloquent\Model;

    class Podcast extends Model
    {
        protected $connection = 'mysql';

        public function episodes()
        {
            return $this->hasMany(Episode::class);
        }
    }

    class Episode extends Model
    {
        protected $connection = 'mysql';

        public function guests()
        {
            return $this->hasMany(User::class);
        }
    }

    class User extends Model
    {
    }

    /** A model with a string key. */
    class Team extends Model
    {
        protected $keyType = 'string';
        public $incrementing = false;
    }
}

namespace App\Jobs {
    use App\Enums\Priority;
    use App\Models\Podcast;
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;
    use Illuminate\Queue\SerializesModels;

    /** A SerializesModels job: protected model, private array, enum, collection. */
    class ProcessPodcast implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public $tries = 5;
        public $timeout = 120;
        public $backoff = [10, 60, 300];
        public $score = 0.1;
        protected $podcast;
        private $options;
        public $title;
        public $tags;
        public Priority $priority;
        public $listeners;
        public $publishAt;

        public function __construct(Podcast $podcast, array $options, string $title, array $tags, Priority $priority)
        {
            $this->podcast = $podcast;
            $this->options = $options;
            $this->title = $title;
            $this->tags = $tags;
            $this->priority = $priority;
        }

        public function handle()
        {
        }
    }

    /** A SerializesModels job with one model, used as a chain link. */
    class SendWelcomeEmail implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels;

        public $user;
        public $locale = 'de';

        public function __construct($user)
        {
            $this->user = $user;
        }

        public function handle()
        {
        }
    }

    /** A job without SerializesModels: PHP's native serialization of every property. */
    class PlainJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable;

        public $payload;
        protected $secret = 'hidden';
        private $counter = 0;
        public $dates = [];
        public $shared;
        public $refs = [];
        public $channel;
        public $ratio = 1.0;
        public $big = PHP_INT_MAX;

        public function __construct($payload = null)
        {
            $this->payload = $payload;
        }

        public function bump(int $n)
        {
            $this->counter += $n;
        }

        public function handle()
        {
        }
    }
}
