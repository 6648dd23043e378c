<?php
// Job classes for the class facts (package phpclass: `laraq classes`, `laraq gen`, the
// check of hand-written types): one class per kind of property and class a Laravel app
// has. Loaded by dispatch.php and work.php like every jobs_*.php, and by
// classes_autoload.php, the autoload file the tests give `laraq classes --autoload`.
// Every class loads on every release of the matrix (5.8 to 13.x, PHP 8.2): a class whose
// interface or trait the release lacks is not declared there.
//
// Jobs (namespace App\Jobs\Classes, all ShouldQueue; handle() records through
// RecordsWhatItGot):
//   KitchenSinkJob     use InteractsWithQueue, Queueable, SerializesModels: untyped with and
//                      without defaults, typed int/float/string/bool with defaults, nullable
//                      ?int/?string = null, array list and map defaults, an untyped array with
//                      int keys and a float, a backed enum with an enum default, a nullable
//                      pure enum, int|string, protected and private (typed and untyped), and
//                      a typed int without default ($required).
//   PromotedJob        readonly promoted constructor properties (int, a model, a nullable
//                      Carbon), a promoted protected string with a default; SerializesModels.
//   ModelsCarbonJob    typed model, nullable model, typed Eloquent collection, an untyped
//                      model, a typed Carbon, a nullable DateTimeImmutable; SerializesModels.
//   NativeJob          no SerializesModels, no Queueable: public $a, protected $b = 2, private
//                      $c = 'c' (PHP's native serialize writes every property).
//   InheritedJob       extends BaseJob (public, protected and private properties) and uses the
//                      HasTag trait, without SerializesModels: the parents' slots come first
//                      and the parent's private property is written.
//   InheritedModelsJob the same with SerializesModels: getProperties() order, the parent's
//                      private property left out.
//   UniquePropJob      ShouldBeUnique, its id the uniqueId property, uniqueFor = 30.
//   UniqueMethodJob    ShouldBeUniqueUntilProcessing, uniqueId() and uniqueFor() methods.
//   EncryptedJob       ShouldBeEncrypted with SerializesModels: public card, protected cvc.
//   MethodsJob         tries(), backoff(), retryUntil(), displayName(), middleware() and
//                      failed() methods beside $tries = 2 and a label.
//   AttributedJob      13.x attributes #[Tries(4)], #[Backoff(1, 3)], #[Timeout(20)],
//                      #[MaxExceptions(2)], #[FailOnTimeout] (only 13.x reads them).
//   ReversedTraitsJob  use Queueable, InteractsWithQueue (job last), Batchable first.
// jobs_classes_samples.json holds dispatch.php requests for them: every property away
// from its default, and most at it.

namespace App\Jobs\Classes {
    use App\Enums\Status;
    use App\Enums\Suit;
    use App\Jobs\RecordsWhatItGot;
    use App\Models\User;
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;
    use Illuminate\Queue\SerializesModels;

    class KitchenSinkJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

        public $untyped;
        public $untypedDefault = 'u';
        public int $count = 3;
        public float $ratio = 1.5;
        public string $label = 'label';
        public bool $flag = false;
        public ?int $maybe = null;
        public ?string $nick = null;
        public array $list = [1, 2];
        public array $map = ['a' => 1, 'b' => [true, null]];
        public $mixed = [10 => 'ten', 'x' => 1.0];
        public Status $status = Status::Active;
        public ?Suit $suit = null;
        public int|string $either = 0;
        public int $required;
        protected $prot = 'p';
        protected int $protTyped = 7;
        private $priv = [1];
        private ?string $privTyped = null;
    }

    class PromotedJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

        public $tries = 3;

        public function __construct(
            public readonly int $orderId,
            public readonly User $user,
            protected string $note = 'n',
            public readonly ?\Illuminate\Support\Carbon $at = null,
        ) {
        }
    }

    class ModelsCarbonJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

        public User $user;
        public ?User $maybeUser = null;
        public \Illuminate\Database\Eloquent\Collection $users;
        public $untypedModel;
        public \Illuminate\Support\Carbon $when;
        public ?\DateTimeImmutable $date = null;
    }

    class NativeJob implements ShouldQueue
    {
        use RecordsWhatItGot;

        public $a;
        protected $b = 2;
        private $c = 'c';
    }

    trait HasTag
    {
        public $tag = 't';
        protected $tagged = false;
    }

    abstract class BaseJob implements ShouldQueue
    {
        public $basePub;
        protected $baseProt = 1;
        private $basePriv = 'bp';
    }

    class InheritedJob extends BaseJob
    {
        use HasTag, InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $own;
    }

    class InheritedModelsJob extends BaseJob
    {
        use HasTag, InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

        public $own;
    }

    if (interface_exists(\Illuminate\Contracts\Queue\ShouldBeUnique::class)) {
        class UniquePropJob implements ShouldQueue, \Illuminate\Contracts\Queue\ShouldBeUnique
        {
            use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

            public $uniqueId;
            public $uniqueFor = 30;
            public $orderId;
        }

        class UniqueMethodJob implements ShouldQueue, \Illuminate\Contracts\Queue\ShouldBeUniqueUntilProcessing
        {
            use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

            public $orderId;

            public function uniqueId()
            {
                return 'order-' . $this->orderId;
            }

            public function uniqueFor()
            {
                return 45;
            }
        }
    }

    if (interface_exists(\Illuminate\Contracts\Queue\ShouldBeEncrypted::class)) {
        class EncryptedJob implements ShouldQueue, \Illuminate\Contracts\Queue\ShouldBeEncrypted
        {
            use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

            public $card;
            protected $cvc;
        }
    }

    class MethodsJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, SerializesModels, RecordsWhatItGot;

        public $tries = 2;
        public $label;

        public function tries()
        {
            return 5;
        }

        /** Seconds between attempts. */
        public function backoff()
        {
            return [1, 5];
        }

        public function retryUntil()
        {
            return \Illuminate\Support\Carbon::now()->addYears(10);
        }

        public function displayName()
        {
            return 'Methods ' . $this->label;
        }

        public function middleware()
        {
            return [];
        }

        public function failed($e)
        {
            laraq_record(['kind' => 'object', 'event' => 'failed', 'class' => static::class]);
        }
    }

    #[\Illuminate\Queue\Attributes\Tries(4)]
    #[\Illuminate\Queue\Attributes\Backoff(1, 3)]
    #[\Illuminate\Queue\Attributes\Timeout(20)]
    #[\Illuminate\Queue\Attributes\MaxExceptions(2)]
    #[\Illuminate\Queue\Attributes\FailOnTimeout]
    class AttributedJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $label;
    }

    if (trait_exists(\Illuminate\Bus\Batchable::class)) { // 8.x+
        class ReversedTraitsJob implements ShouldQueue
        {
            use \Illuminate\Bus\Batchable, Queueable, InteractsWithQueue, RecordsWhatItGot;

            public $n;
        }
    }
}
