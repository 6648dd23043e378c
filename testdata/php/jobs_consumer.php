<?php
// Classes of the Horizon-era payload samples (testdata/laravel-payloads S7, S8, S11), so a
// PHP worker can unserialize and run those payloads as their applications did, and
// report what it got like the jobs of jobs.php (laraq_job_record through the
// RecordsWhatItGot trait). Loaded by dispatch.php and work.php after jobs.php.
//   s7:  App\Jobs\UploadPlatform (+ App\Helpers\UploadDTO, App\Models\Category,
//        enums App\Enums\Platform, Audience, Visibility)
//   s8:  App\Jobs\TestJob
//   s11: App\Jobs\API\ABCP\ArticlesTotalLoader (+ App\Models\AutopartQuery)
// App\Jobs\Noop records nothing and does nothing: the benchmark's job.

namespace App\Enums {
    enum Platform
    {
        case Vimeo;
        case YouTube;
    }

    enum Audience
    {
        case ALL;
    }

    enum Visibility
    {
        case PRIVATE;
        case PUBLIC;
    }
}

namespace App\Models {
    use Illuminate\Database\Eloquent\Model;

    class Category extends Model
    {
    }

    class AutopartQuery extends Model
    {
    }
}

namespace App\Helpers {
    class UploadDTO
    {
        public $video_id;
        public $video_path;
        public $title;
        public $description;
        public $tags;
        public $category;
        public $thumbnail_path;
        public $creator_id;
        public $platforms;
        public $audience;
        public $visibility;
        public $publish_time;
    }
}

namespace App\Jobs {
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;

    class UploadPlatform implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;

        public $creator_id;
        public $video_id;
        public $uploadDTO;
        public $platform;
        public $batchId;
    }

    class TestJob implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, RecordsWhatItGot;
    }

    class Noop implements ShouldQueue
    {
        use InteractsWithQueue, Queueable;

        public $n;

        public function handle()
        {
        }
    }

    // The benchmark's job of a given payload size (internal/bench.Padded): the no-op with
    // a string that makes up the size.
    class Padded implements ShouldQueue
    {
        use InteractsWithQueue, Queueable;

        public $n;
        public $pad;

        public function handle()
        {
        }
    }
}

namespace App\Jobs\API\ABCP {
    use Illuminate\Bus\Queueable;
    use Illuminate\Contracts\Queue\ShouldQueue;
    use Illuminate\Queue\InteractsWithQueue;

    class ArticlesTotalLoader implements ShouldQueue
    {
        use InteractsWithQueue, Queueable, \App\Jobs\RecordsWhatItGot;

        public $tries;
        public $retry_after;
        public $query;
        public $uniqueFor;
        public $abcpService;
        protected $request_logger;
        protected $api_client;
    }
}
