<?php
// Job classes for the class-default tests (phpser/defaults_php_test.go), loaded by
// defaults/run.php under Debian's Laravel 8.83 and under the real 10.x-13.x trees. Each
// one has a Go twin in the test; SerializesModels writes them, so from 9.4.0 on every
// property identical to its declared default is left out.

namespace App\Enums {
    enum Tone: string
    {
        case Warm = 'warm';
        case Cold = 'cold';
    }
}

namespace App\Models {
    use Illuminate\Database\Eloquent\Model;

    class User extends Model
    {
        protected $table = 'users';
        public $timestamps = false;
        protected $guarded = [];
    }
}

namespace App\Jobs {
    use App\Enums\Tone;
    use App\Models\User;
    use Illuminate\Bus\Queueable;
    use Illuminate\Queue\InteractsWithQueue;
    use Illuminate\Queue\SerializesModels;

    /** A declared default of every PHP type. */
    class AllTypes
    {
        use SerializesModels;

        public $untyped;             // no initializer: the default is null
        public $tries = 3;
        public $loose = 3;           // any in Go: PHP int, float or string
        public $ratio = 1.5;
        public float $timeout = 60.0;
        public $zero = 0.0;
        public $flag = false;
        public ?bool $maybe = true;
        public $name = 'default-name';
        public $empty = '';
        public $list = [1, 2, 3];
        public $map = ['a' => 1, 'b' => [true, null], 7 => 'seven'];
        public $none = [];
        public Tone $tone = Tone::Warm;
        public ?string $nullable = null;
        public int $big = PHP_INT_MAX;
        public $negative = -42;
    }

    /** Typed properties without a default, and promoted constructor properties. */
    class Promoted
    {
        use SerializesModels;

        public int $count;           // no default: written whenever initialized
        public string $label = 'x';

        public function __construct(
            public int $orderId,         // typed promoted: no default
            public $note = null,         // untyped promoted: the default is null
            protected ?string $ref = null, // typed promoted: no default, the = null is the parameter's
            private array $items = [],
        ) {
        }
    }

    trait HasRetries
    {
        public $retryTimes = 2;
        protected $retryDelay = 10;
        private $retryLog = [];
    }

    abstract class BaseJob
    {
        protected $baseProt = 'base';
        public $basePub = 1;
        private $basePriv = 'hidden'; // a parent's private: getProperties() of the child never lists it
    }

    /** Protected and private properties, a parent class and a trait, all with defaults. */
    class Visibility extends BaseJob
    {
        use SerializesModels, HasRetries;

        protected $secret = 'p';
        private $counter = 0;
    }

    if (trait_exists(\Illuminate\Foundation\Queue\Queueable::class)) {
        /** The 11.15+ make:job stub: one Queueable trait that includes SerializesModels. */
        class ModernJob
        {
            use \Illuminate\Foundation\Queue\Queueable;

            public $tries = 3;

            public function __construct(public int $orderId)
            {
            }
        }
    } else {
        /** The make:job stub before 11.15: the same traits one by one. */
        class ModernJob
        {
            use InteractsWithQueue, Queueable, SerializesModels;

            public $tries = 3;

            public function __construct(public int $orderId)
            {
            }
        }
    }

    /** Eloquent models, written as ModelIdentifier. */
    class WithModel
    {
        use SerializesModels;

        public $team;

        public function __construct(public User $user, public ?User $optional = null, public $maybeUser = null)
        {
        }
    }
}
