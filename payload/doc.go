// Package payload reads and writes the JSON envelope of a Laravel queued job, the string
// Laravel's Redis driver keeps in queues:NAME, :delayed and :reserved, and that
// failed_jobs stores.
//
// # Reading
//
// Parse reads every envelope shape from Laravel 5.5 to 13.x: the pre-7.0 payloads
// without uuid, the 5.8–7.x timeoutAt and per-job delay, 8.x's backoff and retryUntil,
// 12.11's createdAt and dispatch delay, 12.51's data.batchId, 13.x's
// deleteWhenMissingModels, Horizon's extra keys (type, tags, silenced, pushedAt) and
// whatever createPayloadUsing hooks add. It also reads the copy the pop script writes
// to :reserved, which Redis' cjson has re-encoded: keys in hash order, [] turned into {},
// numbers of 15+ digits in exponent form (1.2345678901234e+14), \uXXXX escapes turned
// into raw UTF-8. Typed fields follow the PHP worker's reading (Jobs/Job.php): backoff
// falls back to delay, retryUntil to timeoutAt, an empty displayName to job.
//
// Parse never re-encodes: Envelope.Raw is the exact input. The worker must use those
// bytes, unchanged, as the member it removes from :reserved or releases to :delayed
// (ZREM of a re-encoded copy silently removes nothing, and the job comes back after
// retry_after), and the original popped string is what failed_jobs.payload records.
// Parse is a single pass over the top level and data, allocating little; it runs on
// every pop.
//
// # Writing
//
// BuildObject and BuildString write what Laravel's RedisQueue::createPayload writes for
// the same job, byte for byte: the key order and types of the chosen Version, "\/"
// escaping, raw UTF-8 (JSON_UNESCAPED_UNICODE, Laravel 8.82+) except U+2028/U+2029,
// "attempts":0, a v4 uuid and a 32-character random id. The tests compare them with
// Laravel 8.83's own code. AppendJSONString, AppendJSONFloat and Value give the same
// PHP-exact JSON for other uses; Value models json_decode($s, true) so that a re-encoded
// payload is what PHP would write (objects are PHP arrays: {} becomes [], {"0":…}
// becomes a list).
//
// ResetForRetry produces what `php artisan queue:retry` pushes for a failed job, and
// CheckPushRaw refuses a raw payload that the pop script would drop (no numeric
// attempts, not an object, numbers cjson cannot re-encode) or that a PHP worker could
// not decode.
package payload
