<?php
// Job classes for the Horizon interop tests. Step follows a plan, one action per attempt:
//   ok        return (the worker deletes the job: JobDeleted)
//   release   $this->release(0) (JobReleased; the next pop migrates it back: JobsMigrated)
//   throw     throw RuntimeException("boom on attempt N"): the worker releases it while
//             attempts remain, else fails it (JobDeleted with hasFailed, then JobFailed)
//   throw-unless-retry  throw, unless the payload is a dashboard retry (has retry_of)
// The model properties give Horizon's automatic tags (Tags::for reads them at push time).
namespace Laraq\HorizonTest;

use Illuminate\Bus\Queueable;
use Illuminate\Contracts\Queue\ShouldQueue;
use Illuminate\Database\Eloquent\Model;
use Illuminate\Queue\InteractsWithQueue;
use Illuminate\Queue\SerializesModels;
use Laravel\Horizon\Contracts\Silenced;

class User extends Model
{
    protected $connection = 'laraq_models';
    protected $table = 'users';
    public $timestamps = false;
}

class Step implements ShouldQueue
{
    use InteractsWithQueue, Queueable, SerializesModels;

    public $tries;

    public function __construct(public array $plan = ['ok'], int $tries = 3, public ?User $user = null, public $users = null, public string $note = '')
    {
        $this->tries = $tries;
    }

    public function handle(): void
    {
        $action = $this->plan[$this->attempts() - 1] ?? 'ok';
        if ($action === 'release') {
            $this->release(0);
        } elseif ($action === 'throw' || ($action === 'throw-unless-retry' && ! isset($this->job->payload()['retry_of']))) {
            throw new \RuntimeException('boom on attempt ' . $this->attempts());
        }
    }
}

/** Listed in horizon.silenced by the tests. */
class QuietStep extends Step
{
}

/** Silenced by Horizon's marker interface. */
class MarkedQuietStep extends Step implements Silenced
{
}

/** Explicit tags: Tags::for uses them instead of the models. */
class TaggedStep extends Step
{
    public function tags(): array
    {
        return ['laraq', 'region:eu/west'];
    }
}

class Event
{
    use SerializesModels;

    public function __construct(public User $user, public string $what = 'signed up')
    {
    }
}

class Listener implements ShouldQueue
{
    public function handle(Event $event): void
    {
    }
}

class BroadcastThing implements \Illuminate\Contracts\Broadcasting\ShouldBroadcast
{
    use SerializesModels;

    public function __construct(public User $user)
    {
    }

    public function broadcastOn(): array
    {
        return [];
    }
}

class Mail extends \Illuminate\Mail\Mailable
{
    use SerializesModels;

    public function __construct(public User $user)
    {
    }
}

class Notice extends \Illuminate\Notifications\Notification
{
    use SerializesModels;

    public function __construct(public ?User $about = null)
    {
    }

    public function via($notifiable): array
    {
        return ['mail'];
    }
}
