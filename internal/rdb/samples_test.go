package rdb

// Payload samples from the shared reference (laravel-payload-samples.md), byte for byte.
// The "r" variants are the reserved copies the real pop script produced from them on
// Redis 7.0.15 with Laravel 8.83.26.
const (
	// S8: a Laravel 9.4–12.10 + Horizon job (note "tags":[]).
	sampleS8 = `{"uuid":"12e2071b-a412-410a-8d8a-68721001ce01","displayName":"App\\Jobs\\TestJob","job":"Illuminate\\Queue\\CallQueuedHandler@call","maxTries":null,"maxExceptions":null,"failOnTimeout":false,"backoff":null,"timeout":null,"retryUntil":null,"data":{"commandName":"App\\Jobs\\TestJob","command":"O:16:\"App\\Jobs\\TestJob\":1:{s:5:\"queue\";s:7:\"default\";}"},"id":"12e2071b-a412-410a-8d8a-68721001ce01","attempts":0,"type":"job","tags":[],"silenced":false,"pushedAt":"1729411372.3932"}`
	// S8r: its reserved copy: keys reordered, "tags":{}, attempts 1.
	sampleS8r = `{"pushedAt":"1729411372.3932","uuid":"12e2071b-a412-410a-8d8a-68721001ce01","timeout":null,"tags":{},"id":"12e2071b-a412-410a-8d8a-68721001ce01","maxExceptions":null,"backoff":null,"displayName":"App\\Jobs\\TestJob","maxTries":null,"type":"job","failOnTimeout":false,"silenced":false,"retryUntil":null,"data":{"command":"O:16:\"App\\Jobs\\TestJob\":1:{s:5:\"queue\";s:7:\"default\";}","commandName":"App\\Jobs\\TestJob"},"job":"Illuminate\\Queue\\CallQueuedHandler@call","attempts":1}`
	// S12: a raw push with an empty array and a 15-digit integer.
	sampleS12 = `{"job":"X@y","data":[],"id":"r1","attempts":0,"big":123456789012345}`
	// S12r: its reserved copy: [] as {}, %.14g exponent form, keys reordered.
	sampleS12r = `{"big":1.2345678901234e+14,"id":"r1","attempts":1,"data":{},"job":"X@y"}`
)
